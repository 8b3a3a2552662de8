/**
 * Workers of the shipped bundle, run as Lambda runs them, against the simulator with many
 * programs, their records in a programs table on moto: `{"worker": i}` polls the active programs
 * assigned to worker i, each over its own secret, lease and checkpoint row; two workers split the
 * programs; a change of the worker count hands the programs that move over through their leases
 * (one holder at a time, the new one starting where the old one stopped); and a misbehaving
 * program among them (a stalled bank, 500s, revoked credentials, a flood, a secret outside the
 * deployment, settings no setting takes) does not keep the others from publishing everything.
 *
 * Lean on purpose (2 shared cores): every invocation polls to its deadline, so each test costs a
 * few invocation budgets, its containers running side by side.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand, PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { DynamoDbProgramRegistry } from '../../../functions/adapters/aws/dynamodb-program-registry.ts';
import { assignedWorker } from '../../../functions/core/fleet/assignment.ts';
import { STEP_PAGE_BYTES } from '../../../functions/core/fleet/cpu-turns.ts';
import type { ProgramSettings } from '../../../functions/core/fleet/program-record.ts';
import type { WorkerSummary } from '../../../functions/core/fleet/worker-summary.ts';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import type { RecordedBus } from '../../support/aws-test-env.ts';
import type { Invocation, LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { bankEventText, LimitIgnoringBank } from '../../support/limit-ignoring-bank.ts';
import { emfDocuments, pollerLambda, usePollerScenarios } from '../../support/poller-lambda.ts';
import { createQueue } from '../../support/sqs-queues.ts';

const scenarios = usePollerScenarios(3_500);
let seed = 3_500;

/** What each fleet of a test started: closed, and its output scanned for credentials, afterwards. */
const simulators: RunningSimulator[] = [];
/** Other banks and servers a test opened. */
const opened: Array<{ close(): Promise<void>; readonly secrets?: readonly string[] }> = [];
const containers: LambdaContainer[] = [];

afterEach(async () => {
  const secrets = simulators.flatMap((simulator) => [
    ...simulator.programs.map((program) => program.clientSecret),
    ...simulator.issuedTokens(),
  ]);
  const output = containers.map((container) => container.output).join('\n');
  for (const container of containers.splice(0)) await container.close();
  for (const simulator of simulators.splice(0)) await simulator.close();
  for (const other of opened.splice(0)) {
    secrets.push(...(other.secrets ?? []));
    await other.close();
  }
  expect(secrets.filter((secret) => output.includes(secret))).toEqual([]);
  expect(output).not.toMatch(/Bearer\s+\S/);
});

async function simulator(programs: number): Promise<RunningSimulator> {
  seed += 1;
  const started = await startSimulator({
    seed,
    programs: Array.from({ length: programs }, () => ({})),
    maxPollHoldMs: 500,
    unknownTypeRatio: 0,
  });
  simulators.push(started);
  return started;
}

/** One program of a fleet: its bank (a simulator's program), and how its record differs. */
interface ProgramSpec {
  readonly name: string;
  /** A simulator, or another bank on loopback that gives its own secret's value. */
  readonly bank: RunningSimulator | { readonly url: string; secretString(): string };
  /** Which of the bank's programs. @default 0 */
  readonly index?: number;
  /** A client secret the bank does not know: its credentials are revoked. */
  readonly revoked?: true;
  /** Its secret is created outside the deployment's prefix. */
  readonly outsidePrefix?: true;
  readonly settings?: ProgramSettings;
}

interface Fleet {
  readonly prefix: string;
  readonly bus: RecordedBus;
  readonly programsTable: string;
  /** Its own checkpoint table: the names of one test's programs are another's too. */
  readonly checkpointTable: string;
  /** The lease owner of a program's checkpoint row, read consistently. */
  leaseOwner(program: string): Promise<string | undefined>;
  /** A program's checkpoint, or `null` when it has none. */
  checkpoint(program: string): Promise<number | null>;
  /** A container of the deployed function running workers, `workerCount` of them. */
  worker(
    workerCount: number,
    options?: { timeoutMs?: number; memoryMb?: number; environment?: Record<string, string> },
  ): LambdaContainer;
}

/**
 * A bus whose one rule sends to one queue the events of `programIds` (the banks' `program_id`s),
 * or every event: a flood's thousands of messages would take moto's queue a minute to give back.
 */
async function recordedBus(programIds?: readonly string[]): Promise<RecordedBus> {
  const { aws } = scenarios;
  const busName = aws.uniqueName('bus');
  await aws.eventBridge.send(new CreateEventBusCommand({ Name: busName }));
  const queue = await createQueue(aws.sqs, aws.uniqueName('recorded'));
  const queueUrl = queue.url;
  const rule = aws.uniqueName('recorded');
  const pattern = {
    source: ['banking.events'],
    ...(programIds === undefined ? {} : { detail: { program_id: programIds } }),
  };
  await aws.eventBridge.send(
    new PutRuleCommand({ Name: rule, EventBusName: busName, EventPattern: JSON.stringify(pattern) }),
  );
  await aws.eventBridge.send(
    new PutTargetsCommand({
      Rule: rule,
      EventBusName: busName,
      Targets: [{ Id: 'queue', Arn: queue.arn }],
    }),
  );
  return { busName, queueUrl };
}

function secretOf(spec: ProgramSpec): string {
  if (!('programs' in spec.bank)) return spec.bank.secretString();
  const program = spec.bank.programs[spec.index ?? 0]!;
  return JSON.stringify({
    base_url: spec.bank.url,
    client_id: program.clientId,
    client_secret: spec.revoked ? 'not-the-secret-it-was-given' : program.clientSecret,
  });
}

/** Secrets under a prefix, a record of each program in a programs table, a bus recording their events. */
async function fleet(
  programs: readonly ProgramSpec[],
  options: { record?: readonly string[] } = {},
): Promise<Fleet> {
  const { aws } = scenarios;
  const prefix = `${aws.uniqueName('bep')}/`;
  const programsTable = await aws.createCheckpointTable();
  const checkpointTable = await aws.createCheckpointTable();
  const registry = new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: programsTable });
  const secretIds: string[] = [];
  for (const spec of programs) {
    const name = spec.outsidePrefix ? aws.uniqueName('elsewhere') : `${prefix}${spec.name}`;
    await aws.secretsManager.send(new CreateSecretCommand({ Name: name, SecretString: secretOf(spec) }));
    secretIds.push(name);
    await registry.put(
      { name: spec.name, secretId: name, state: 'active', owner: 'operator', settings: spec.settings ?? {} },
      'absent',
    );
  }
  const bus = await recordedBus(options.record);
  return {
    prefix,
    bus,
    programsTable,
    checkpointTable,
    async leaseOwner(program) {
      return (await checkpointItem(checkpointTable, program))?.lease_owner?.S;
    },
    async checkpoint(program) {
      const value = (await checkpointItem(checkpointTable, program))?.checkpoint?.N;
      return value === undefined ? null : Number(value);
    },
    worker(workerCount, options = {}) {
      const container = pollerLambda({
        artifact: {
          ...inject('pollerArtifact'),
          ...(options.memoryMb === undefined ? {} : { memoryMb: options.memoryMb }),
        },
        motoEndpoint: inject('motoEndpoint'),
        // The stack's own program: a worker does not poll it unless the table names it.
        secretId: secretIds[0]!,
        checkpointTable,
        eventBusName: bus.busName,
        timeoutMs: options.timeoutMs ?? 8_000,
        environment: {
          DEFAULT_PROGRAM: programs[0]!.name,
          PROGRAMS_TABLE: programsTable,
          SECRETS_PREFIX: prefix,
          WORKER_COUNT: String(workerCount),
          ...options.environment,
        },
      });
      containers.push(container);
      return container;
    },
  };
}

/**
 * Resolves once every program's lease is held (the old runs are polling), or once the old runs
 * are over: the hand-over's rules hold either way, and no wall-clock bound can fail the test.
 */
async function everyLeaseTakenOrOver(f: Fleet, names: readonly string[], runs: readonly Promise<unknown>[]) {
  let over = false;
  void Promise.allSettled(runs).then(() => {
    over = true;
  });
  while (!over) {
    const owners = await Promise.all(names.map((name) => f.leaseOwner(name)));
    if (owners.every((owner) => owner !== undefined)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function checkpointItem(table: string, program: string) {
  const output = await scenarios.aws.dynamodb.send(
    new GetItemCommand({ TableName: table, Key: { pk: { S: `program#${program}` } }, ConsistentRead: true }),
  );
  return output.Item;
}

function workerSummary(invocation: Invocation): WorkerSummary {
  if (invocation.outcome.kind !== 'response') {
    throw new Error(
      `Expected a response, got ${JSON.stringify(invocation.outcome)}\n--- stdout ---\n${invocation.stdout.slice(-4000)}`,
    );
  }
  return invocation.outcome.result as WorkerSummary;
}

/** The "Cycle finished" line of each program's cycle in a function's output, by program. */
function cyclesFinished(output: string): Map<string, Record<string, unknown>> {
  const cycles = new Map<string, Record<string, unknown>>();
  for (const line of output.split('\n')) {
    if (!line.includes('"Cycle finished"')) continue;
    const entry = JSON.parse(line) as Record<string, unknown>;
    cycles.set(String(entry.program), entry);
  }
  return cycles;
}

/** The ids of the events delivered to the bus since the last call. */
async function delivered(bus: RecordedBus): Promise<string[]> {
  const messages = await scenarios.aws.drainQueue(bus.queueUrl);
  return messages.map((message) => (message.detail as { id: string }).id);
}

describe('workers of the deployed function', () => {
  it('split the programs: each polls only those assigned to it, over its own secret, row and settings', async () => {
    const bank = await simulator(6);
    // Two programs with settings of their own, each on a bank of its own to see how it is read.
    const streaming = await simulator(1);
    const paged = await simulator(1);
    const specs: ProgramSpec[] = [
      ...bank.programs.map((_, index) => ({ name: `program-${index}`, bank, index })),
      { name: 'streaming', bank: streaming, settings: { feedMode: 'stream' } },
      { name: 'paged', bank: paged, settings: { pollLimit: 2, pollLimitParam: 'size' } },
    ];
    const names = specs.map((spec) => spec.name);
    const f = await fleet(specs);
    const events = new Map(
      specs.map((spec, index) => {
        const simulated = spec.bank as RunningSimulator;
        return [
          spec.name,
          simulated.generate(3 + index, { programId: simulated.programs[spec.index ?? 0]!.programId }),
        ];
      }),
    );

    const runs = await Promise.all([f.worker(2).invoke({ worker: 0 }), f.worker(2).invoke({ worker: 1 })]);

    const summaries = runs.map(workerSummary);
    const cycles = runs.map((run) => cyclesFinished(run.stdout));
    for (const [worker, summary] of summaries.entries()) {
      const mine = names.filter((name) => assignedWorker(name, 2) === worker);
      expect(mine.length).toBeGreaterThan(0);
      expect(summary.programs).toMatchObject({ assigned: mine.length, completed: mine.length, failed: 0 });
      expect([...cycles[worker]!.keys()].sort()).toEqual(mine.sort());
      for (const name of mine) {
        expect(cycles[worker]!.get(name)).toMatchObject({
          status: 'completed',
          published: events.get(name)!.length,
          checkpoint: events.get(name)!.at(-1)!.sequence_number,
        });
      }
    }
    const all = [...events.values()].flat();
    expect(summaries[0]!.published + summaries[1]!.published).toBe(all.length);
    expect((await delivered(f.bus)).sort()).toEqual(all.map((event) => event.id).sort());
    // Each program read as its own settings say; the others as the deployment's.
    expect(streaming.requests.some((request) => request.path === '/events/stream')).toBe(true);
    expect(
      paged.requests.filter((request) => request.path === '/events').map((request) => request.query.size),
    ).toContain('2');
    expect(bank.requests.some((request) => request.path === '/events/stream')).toBe(false);
    expect(
      bank.requests.filter((request) => request.path === '/events').every((r) => r.query.limit === '100'),
    ).toBe(true);
    // Each program's metrics carry its own Program; the worker's own carry none.
    const programsInMetrics = runs.flatMap((run) =>
      emfDocuments(run.stdout).flatMap((doc) => (typeof doc.Program === 'string' ? [doc.Program] : [])),
    );
    expect(new Set(programsInMetrics)).toEqual(new Set(names));
  });

  it('hand a moved program over through its lease when the worker count changes: one holder, no gap', async () => {
    const bank = await simulator(6);
    const names = bank.programs.map((_, index) => `moving-${index}`);
    const f = await fleet(names.map((name, index) => ({ name, bank, index })));
    const programIdOf = new Map(names.map((name, index) => [name, bank.programs[index]!.programId]));
    const generated = names.flatMap((name) => bank.generate(4, { programId: programIdOf.get(name) }));
    const before = [f.worker(2), f.worker(2)];
    // Started while the old runs poll: they wait for each lease (as the next tick does), and poll on longer.
    const waiting = { timeoutMs: 14_000, environment: { LEASE_WAIT_MS: '12000' } };
    const after = [f.worker(3, waiting), f.worker(3, waiting), f.worker(3, waiting)];

    // The runs of the old count take every lease; then the new count's runs start while they poll.
    const old = before.map((container, worker) => container.invoke({ worker }));
    await everyLeaseTakenOrOver(f, names, old);
    const changed = after.map((container, worker) => container.invoke({ worker }));
    for (const name of names) generated.push(...bank.generate(3, { programId: programIdOf.get(name) }));
    const oldRuns = await Promise.all(old);
    // Events created after the old runs stopped: only the new count's runs can publish them.
    for (const name of names) generated.push(...bank.generate(2, { programId: programIdOf.get(name) }));
    const newRuns = await Promise.all(changed);

    const oldCycles = new Map(oldRuns.flatMap((run) => [...cyclesFinished(run.stdout)]));
    const newCycles = new Map(newRuns.flatMap((run) => [...cyclesFinished(run.stdout)]));
    const moved = names.filter((name) => assignedWorker(name, 2) !== assignedWorker(name, 3));
    expect(moved.length).toBeGreaterThan(0);
    for (const name of names) {
      const [was, now] = [oldCycles.get(name), newCycles.get(name)];
      expect(was, name).toMatchObject({ status: 'completed' });
      expect(now, name).toMatchObject({ status: 'completed' });
      // The new holder took the lease only once the old one had released it with its checkpoint.
      expect(now!.startCheckpoint, name).toBe(was!.checkpoint);
      expect(now!.checkpoint, name).toBe(bank.events(programIdOf.get(name)).at(-1)!.sequence_number);
    }
    for (const [worker, run] of newRuns.entries()) {
      const mine = names.filter((name) => assignedWorker(name, 3) === worker);
      expect(workerSummary(run).programs).toMatchObject({
        assigned: mine.length,
        completed: mine.length,
        leaseBusy: 0,
      });
    }
    const ids = await delivered(f.bus);
    expect(ids.sort()).toEqual(generated.map((event) => event.id).sort());
  });

  it('keep a misbehaving program from stopping or delaying the others', async () => {
    const bank = await simulator(6);
    const stalled = await simulator(1);
    const failing = await simulator(1);
    // Every page 65,000 events (about 9 MB) whatever limit asked for.
    const huge = await LimitIgnoringBank.start({ total: 130_000, pageEvents: 65_000 });
    opened.push(huge);
    stalled.faults.delayNext(1_000, 60_000);
    failing.faults.failNext(10_000, 500);
    const healthy = ['cards', 'loans', 'savings'];
    const f = await fleet(
      [
        ...healthy.map((name, index) => ({ name, bank, index })),
        { name: 'flood', bank, index: 3 },
        { name: 'revoked', bank, index: 4, revoked: true },
        { name: 'bad-settings', bank, index: 5, settings: { pollLimit: 5_000 } },
        { name: 'stalled', bank: stalled },
        { name: 'failing', bank: failing },
        { name: 'foreign-secret', bank, index: 0, outsidePrefix: true },
        { name: 'huge-pages', bank: huge },
      ],
      // The healthy programs' events only: the flood's are counted by its checkpoint.
      { record: healthy.map((_, index) => bank.programs[index]!.programId) },
    );
    const events = new Map(
      healthy.map((name, index) => [name, bank.generate(20, { programId: bank.programs[index]!.programId })]),
    );
    bank.generate(3_000, { programId: bank.programs[3]!.programId });

    const run = await f.worker(1, { timeoutMs: 10_000 }).invoke({ worker: 0 });

    const summary = workerSummary(run);
    const cycles = cyclesFinished(run.stdout);
    for (const name of healthy) {
      expect(cycles.get(name), name).toMatchObject({
        status: 'completed',
        published: 20,
        checkpoint: events.get(name)!.at(-1)!.sequence_number,
      });
    }
    // The flood published what the bus took in its turn, in order (it may end its run failing with
    // events still in flight at its deadline, as a single program's run would): its own business.
    expect(await f.checkpoint('flood')).toBeGreaterThan(0);
    const outcome = new Map(summary.worst.map((report) => [report.program, report]));
    expect(summary.programs.assigned).toBe(10);
    // The pages larger than asked for were read in parts within the program's part of the memory:
    // the worker answered (no out-of-memory crash), and said so under that program's name.
    expect(huge.polls[0]).toMatchObject({ answered: 65_000 });
    expect(
      emfDocuments(run.stdout).some((doc) => doc.Program === 'huge-pages' && Number(doc.OversizePages) > 0),
    ).toBe(true);
    expect(outcome.get('revoked')).toMatchObject({ outcome: 'failed', errorCode: 'AUTHENTICATION_FAILED' });
    expect(outcome.get('bad-settings')).toMatchObject({
      outcome: 'failed',
      errorCode: 'PROGRAM_SETTING_INVALID',
    });
    expect(outcome.get('foreign-secret')).toMatchObject({
      outcome: 'failed',
      errorCode: 'PROGRAM_SECRET_REFUSED',
    });
    // The stalled and failing banks never answered: their runs fail, or end with nothing published.
    for (const name of ['stalled', 'failing']) {
      expect(outcome.get(name)?.published, name).toBe(0);
      expect(await f.checkpoint(name), name).toBeNull();
    }
    const ids = new Set(await delivered(f.bus));
    for (const name of healthy) {
      expect(
        events.get(name)!.filter((event) => !ids.has(event.id)),
        name,
      ).toEqual([]);
    }
    // Each failed program counted under its own name, and no other.
    const failed = summary.worst.filter(
      (report) => report.outcome === 'failed' || report.outcome === 'abandoned',
    );
    const failures = emfDocuments(run.stdout).filter((doc) => typeof doc.CycleFailures === 'number');
    expect(new Set(failures.map((doc) => doc.Program))).toEqual(
      new Set(failed.map((report) => report.program)),
    );
    expect(failed.map((report) => report.program)).not.toEqual(expect.arrayContaining(['cards']));
  });

  it("parse a program's oversize pages in short steps on the thread the programs share, losing nothing of the others'", async () => {
    const bank = await simulator(2);
    // Pages of 5,000 events of about 530 bytes (2.6 MB) whatever limit asked for.
    const huge = await LimitIgnoringBank.start({ total: 60_000, pageEvents: 5_000, notePadding: 400 });
    opened.push(huge);
    const healthy = ['cards', 'loans'];
    const f = await fleet(
      [...healthy.map((name, index) => ({ name, bank, index })), { name: 'huge-pages', bank: huge }],
      { record: healthy.map((_, index) => bank.programs[index]!.programId) },
    );
    const events = new Map(
      healthy.map((name, index) => [name, bank.generate(30, { programId: bank.programs[index]!.programId })]),
    );

    const run = await f.worker(1, { timeoutMs: 8_000 }).invoke({ worker: 0 });

    expect(workerSummary(run).programs.assigned).toBe(3);
    // No part of a page parsed at once held more than a step (`cpu-turns.ts`) of its events' text:
    // the cursor moved by at most that many events a poll (by the memory alone it would move by
    // a part of 0.67 MB, about 1,270 of these events).
    const cursors = huge.polls.map((poll) => poll.after ?? 0);
    const mostInAStep = Math.floor(STEP_PAGE_BYTES / bankEventText(1, 400).length);
    expect(cursors.length).toBeGreaterThan(2);
    for (let index = 1; index < cursors.length; index += 1) {
      expect(cursors[index]! - cursors[index - 1]!, `poll ${index}`).toBeLessThanOrEqual(mostInAStep);
    }
    expect(await f.checkpoint('huge-pages')).toBeGreaterThan(mostInAStep);
    const ids = new Set(await delivered(f.bus));
    for (const name of healthy) {
      expect(
        events.get(name)!.filter((event) => !ids.has(event.id)),
        name,
      ).toEqual([]);
    }
  });

  it("write no line of a healthy, quiet program's run, and every line of a failing one's", async () => {
    const bank = await simulator(3);
    const quiet = ['quiet-0', 'quiet-1'];
    const f = await fleet([
      ...quiet.map((name, index) => ({ name, bank, index })),
      { name: 'revoked', bank, index: 2, revoked: true },
    ]);
    // As the construct deploys a fleet: a healthy program sends no metric of its own.
    const container = f.worker(1, { environment: { PROGRAM_METRICS: 'alarmed' } });

    const run = await container.invoke({ worker: 0 });

    expect(workerSummary(run).programs).toMatchObject({ assigned: 3, completed: 2, failed: 1 });
    // Lambda sends stdout and stderr (warnings and errors) alike to the log group.
    const lines = container.output.split('\n').filter((line) => line.startsWith('{'));
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const linesOf = (program: string) =>
      entries.filter((entry) => entry.program === program || entry.Program === program);
    for (const name of quiet) expect(linesOf(name), name).toEqual([]);
    // Both quiet programs ran all the same: each row records its cycle, for `status`.
    for (const name of quiet) {
      const item = await checkpointItem(f.checkpointTable, name);
      expect(item?.last_cycle_outcome?.S, name).toBe('completed');
    }
    const failing = linesOf('revoked');
    expect(failing.map((entry) => [entry.level, entry.message])).toEqual(
      expect.arrayContaining([
        ['INFO', 'Lease taken; polling'],
        ['ERROR', 'Poll cycle failed; the checkpoint stays at the last published event'],
      ]),
    );
    // What led to the error is written before it, stamped with when it was logged.
    const taken = failing.find((entry) => entry.message === 'Lease taken; polling')!;
    expect(failing.indexOf(taken)).toBeLessThan(failing.findIndex((entry) => entry.level === 'ERROR'));
    expect(Date.parse(String(taken.loggedAt))).toBeLessThanOrEqual(Date.parse(String(taken.timestamp)));
  });

  it('divide the memory among the programs in flight: four banks ignoring limit at 128 MB', async () => {
    const banks = await Promise.all(
      Array.from({ length: 4 }, () => LimitIgnoringBank.start({ total: 130_000, pageEvents: 65_000 })),
    );
    opened.push(...banks);
    const f = await fleet(
      banks.map((bank, index) => ({ name: `huge-${index}`, bank })),
      { record: ['none'] },
    );

    const run = await f.worker(1, { timeoutMs: 8_000, memoryMb: 128 }).invoke({ worker: 0 });

    // An answer: the process held its programs' parts of these pages (a run that held them whole
    // would end in V8's out of memory, as poller-lambda-oversize-pages.test.ts shows for one).
    const summary = workerSummary(run);
    expect(summary.programs.assigned).toBe(4);
    // 128 MB holds two such programs at once; the others wait for a later run (not reached).
    const ran = banks.flatMap((bank, index) => (bank.polls.length > 0 ? [`huge-${index}`] : []));
    expect(ran).toHaveLength(2);
    expect(summary.programs.notReached).toBe(2);
    for (const name of ran) expect(await f.checkpoint(name), name).toBeGreaterThan(0);
  });

  it('refuse a worker at or past WORKER_COUNT, and keep serving single-program invocations', async () => {
    const bank = await simulator(1);
    const f = await fleet([{ name: 'cards', bank }]);
    const events = bank.generate(5);
    const container = f.worker(2, { timeoutMs: 5_000 });

    const refused = await container.invoke({ worker: 2 });
    const legacy = await container.invoke({ program: 'cards' });

    expect(refused.outcome).toMatchObject({
      kind: 'error',
      errorType: 'ConfigurationError',
      errorMessage: expect.stringContaining('WORKER_COUNT is 2'),
    });
    expect(legacy.outcome).toMatchObject({ kind: 'response', result: { program: 'cards', published: 5 } });
    expect((await delivered(f.bus)).sort()).toEqual(events.map((event) => event.id).sort());
  });

  it("answer an operator's request for a program an operator added, over its record's secret; refuse one of no record or whose secret is not the deployment's", async () => {
    const bank = await simulator(3);
    const f = await fleet([
      { name: 'cards', bank },
      { name: 'payroll', bank, index: 1 },
      { name: 'stray', bank, index: 2, outsidePrefix: true },
    ]);
    const payrollEvents = bank.generate(3, { programId: bank.programs[1]!.programId });
    const container = f.worker(1, { timeoutMs: 5_000 });
    const request = (program: string) => ({
      operatorRequest: { version: 1, kind: 'event', program, sequence: payrollEvents[1]!.sequence_number },
    });

    const added = await container.invoke(request('payroll'));
    const unknown = await container.invoke(request('ghost'));
    const outside = await container.invoke(request('stray'));

    expect(added.outcome).toMatchObject({
      kind: 'response',
      result: { kind: 'event', found: true, event: { id: payrollEvents[1]!.id } },
    });
    expect(unknown.outcome).toMatchObject({
      kind: 'error',
      errorType: 'OperatorRequestError',
      errorMessage: expect.stringContaining('nor a record of its programs table'),
    });
    expect(outside.outcome).toMatchObject({ kind: 'error', errorType: 'ProgramSecretRefusedError' });
    // A lookup publishes nothing and touches no checkpoint.
    expect(await delivered(f.bus)).toEqual([]);
    expect(await f.checkpoint('payroll')).toBeNull();
  });
});
