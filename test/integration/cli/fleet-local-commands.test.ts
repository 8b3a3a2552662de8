/**
 * The `--local` commands for a program the stack's outputs do not name (added with `programs add`,
 * or one of more programs than the outputs list), through the built bin: each finds the program's
 * secret through its record in the programs table, within the deployment's secrets prefix, as the
 * function does for an operator request; `--secret-id` still wins; an unknown program, and a
 * record naming a secret that is not the deployment's, are refused by name. The program `cards`
 * has a bank of its own (a second simulator), so reading the wrong secret shows in what is printed.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { DynamoDbProgramRegistry } from '../../../functions/adapters/aws/dynamodb-program-registry.ts';
import { assignedWorker } from '../../../functions/core/fleet/assignment.ts';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliScenario, cliScenario, lines } from './cli-scenario.ts';

interface PrintedEvent {
  readonly detail: { readonly id: string; readonly sequence_number: number };
}

describe('--local commands for a program known by its record alone', () => {
  let aws: MotoEnvironment;
  let scenario: CliScenario | undefined;
  let cardsBank: RunningSimulator | undefined;
  let seed = 4100;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => {
    await scenario?.close();
    await cardsBank?.close();
    scenario = undefined;
    cardsBank = undefined;
  });

  /** A stack of this release (its default program in the outputs), and `cards` added as an operator adds it. */
  async function withCards(): Promise<{ current: CliScenario; cards: RunningSimulator }> {
    seed += 2;
    const current = await cliScenario(aws, inject('motoEndpoint'), {
      seed,
      events: 5,
      programs: { workers: 2 },
    });
    scenario = current;
    const cards = await startSimulator({ seed: seed + 1, maxPollHoldMs: 300 });
    cardsBank = cards;
    cards.generate(6);
    const [client] = cards.programs;
    const value = JSON.stringify({
      base_url: cards.url,
      client_id: client!.clientId,
      client_secret: client!.clientSecret,
    });
    // As the docs say to: the secret under the prefix (verified against the bank), then the record.
    const secret = await current.cli(['secret', 'set', '--program', 'cards', '--verify'], { input: value });
    expect(secret.code, secret.stderr).toBe(0);
    const added = await current.cli(['programs', 'add', 'cards']);
    expect(added.code, added.stderr).toBe(0);
    return { current, cards };
  }

  it('event, replay and doctor --local read the secret its record names, with no --secret-id', async () => {
    const { current, cards } = await withCards();
    const expected = cards.events();

    const event = await current.cli(['event', '--local', '--program', 'cards', '3']);
    const replay = await current.cli([
      ...['replay', '--local', '--program', 'cards'],
      ...['--from', '2', '--to', '4', '--dry-run', '--hold-seconds', '1'],
    ]);
    const doctor = await current.cli(['doctor', '--local', '--program', 'cards', '--json']);

    expect(event.code, event.stderr).toBe(0);
    expect((JSON.parse(event.stdout) as PrintedEvent).detail.id).toBe(expected[2]!.id);
    expect(replay.code, replay.stderr).toBe(0);
    expect(lines(replay.stdout).map((line) => (JSON.parse(line) as PrintedEvent).detail.id)).toEqual(
      expected.slice(1, 4).map((raw) => raw.id),
    );
    const checks = (
      JSON.parse(doctor.stdout) as { checks: { check: string; verdict: string; detail: string }[] }
    ).checks;
    expect(checks.filter(({ check }) => check.endsWith('(cards)')).slice(0, 3)).toEqual([
      expect.objectContaining({
        check: 'secret (cards)',
        verdict: 'ok',
        detail: expect.stringContaining(cards.url),
      }),
      expect.objectContaining({ check: 'token (cards)', verdict: 'ok' }),
      expect.objectContaining({
        check: 'GET /events (cards)',
        verdict: 'ok',
        detail: 'answered: the oldest event is 1',
      }),
    ]);
  });

  it("doctor with no --program checks every program of the table, each worker's schedule, and names what no worker polls", async () => {
    const { current, cards } = await withCards();
    const programsTable = current.deployment.programs!.tableName;
    const registry = new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: programsTable });
    // Paused: kept, not polled, so not checked (its secret does not even exist).
    await registry.put(
      {
        name: 'loans',
        secretId: `${current.deployment.programs!.secretsPrefix}loans`,
        state: 'paused',
        owner: 'operator',
        settings: {},
      },
      'absent',
    );
    // An item edited by hand into something no worker takes for a record.
    await aws.dynamodb.send(
      new PutItemCommand({
        TableName: programsTable,
        Item: {
          pk: { S: 'savings' },
          secret_id: { S: 'x' },
          state: { S: 'sleeping' },
          owner: { S: 'operator' },
          revision: { N: '1' },
        },
      }),
    );
    const [worker0, worker1] = current.deployment.workerScheduleNames;
    const pollsOf = (worker: number) =>
      ['cards', 'default'].filter((program) => assignedWorker(program, 2) === worker);

    const doctor = await current.cli(['doctor', '--local', '--no-write-probes', '--json']);

    expect(doctor.code).toBe(1);
    const checks = (
      JSON.parse(doctor.stdout) as { checks: { check: string; verdict: string; detail: string }[] }
    ).checks;
    expect(checks.map(({ check, verdict }) => [check, verdict])).toEqual([
      ['program (loans)', 'skipped'],
      ['program record (savings)', 'failed'],
      ['secret (default)', 'ok'],
      ['token (default)', 'ok'],
      ['GET /events (default)', 'ok'],
      ['secret (cards)', 'ok'],
      ['token (cards)', 'ok'],
      ['GET /events (cards)', 'ok'],
      ['checkpoint table', 'ok'],
      ['event bus', 'ok'],
      ['schedule (worker 0)', 'ok'],
      ['schedule (worker 1)', 'ok'],
      ['alarms', 'ok'],
    ]);
    const detail = (check: string) => checks.find((result) => result.check === check)!.detail;
    expect(detail('secret (cards)')).toContain(cards.url);
    expect(detail('program (loans)')).toBe('paused: not polled until `programs resume loans`');
    expect(detail('program record (savings)')).toMatch(/state.*must be "active" or "paused"/);
    for (const [worker, name] of [worker0!, worker1!].entries()) {
      const polled = pollsOf(worker);
      expect(detail(`schedule (worker ${worker})`)).toBe(
        `${name} is enabled (rate(1 minute)); ` +
          (polled.length === 0
            ? 'it polls no program yet'
            : polled.length === 1
              ? `it polls ${polled[0]}`
              : `it polls 2 programs: ${polled.join(', ')}`),
      );
    }

    // With --program, that program alone and its worker's schedule alone.
    const one = await current.cli(['doctor', '--local', '--no-write-probes', '--program', 'cards', '--json']);
    expect(one.code, one.stdout).toBe(0);
    expect(
      (JSON.parse(one.stdout) as { checks: { check: string }[] }).checks
        .map(({ check }) => check)
        .filter((check) => check.startsWith('schedule') || check.startsWith('program')),
    ).toEqual([`schedule (worker ${assignedWorker('cards', 2)})`]);
  });

  it("rewind --local --to latest fast-forwards the record's program on its own bank", async () => {
    const { current } = await withCards();

    const rewind = await current.cli([
      'rewind',
      '--local',
      '--program',
      'cards',
      '--to',
      'latest',
      '--yes',
      '--json',
    ]);

    expect(rewind.code, rewind.stderr).toBe(0);
    // The cards bank has 6 events, the default program's 5: landing at 6 is the cards bank.
    expect(JSON.parse(rewind.stdout)).toMatchObject({
      program: 'cards',
      before: null,
      after: 6,
      moved: true,
    });
    const row = await new DynamoDbCheckpointStore({
      client: aws.dynamodb,
      tableName: current.deployment.tableName,
      program: 'cards',
    }).read();
    expect(row.checkpoint).toBe(6);
  });

  it('run --secret-id, without a value, polls the program with the secret its record names', async () => {
    const { current, cards } = await withCards();

    const run = await current.cli([
      ...['run', '--program', 'cards', '--secret-id', '--checkpoint-table'],
      ...['--start-position', 'beginning', '--until-caught-up'],
    ]);

    expect(run.code, run.stderr).toBe(0);
    expect(lines(run.stdout).map((line) => (JSON.parse(line) as PrintedEvent).detail.id)).toEqual(
      cards.events().map((raw) => raw.id),
    );
  });

  it("secret set --program writes the secret the program's record names, created under the prefix", async () => {
    const { current } = await withCards();
    const prefix = current.deployment.programs!.secretsPrefix;
    const added = await current.cli(['programs', 'add', 'fx', '--secret-id', `${prefix}fx-v2`]);
    expect(added.code, added.stderr).toBe(0);

    const set = await current.cli(['secret', 'set', '--program', 'fx', '--json'], {
      input: JSON.stringify({
        base_url: 'https://bank.example.com',
        client_id: 'fx',
        client_secret: 'fx-value',
      }),
    });

    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ created: true, clientId: 'fx' });
    const stored = await aws.secretsManager.send(new GetSecretValueCommand({ SecretId: `${prefix}fx-v2` }));
    expect(JSON.parse(stored.SecretString!)).toMatchObject({ client_id: 'fx' });
  });

  it('--secret-id still wins over the record', async () => {
    const { current } = await withCards();

    const event = await current.cli([
      ...['event', '--local', '--program', 'cards', '--secret-id', current.deployment.secretId, '3'],
    ]);

    expect(event.code, event.stderr).toBe(0);
    expect((JSON.parse(event.stdout) as PrintedEvent).detail.id).toBe(current.simulator.events()[2]!.id);
  });

  it('names an unknown program and the table it looked in, and refuses a record naming a secret not of the deployment', async () => {
    const { current } = await withCards();
    const programsTable = current.deployment.programs!.tableName;
    // A record edited by hand to name another team's secret, which exists and would work.
    const foreign = await aws.createSecret(
      JSON.stringify({ base_url: current.simulator.url, client_id: 'x', client_secret: 'y' }),
    );
    await new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: programsTable }).put(
      { name: 'loans', secretId: foreign, state: 'active', owner: 'operator', settings: {} },
      'absent',
    );

    const unknown = await current.cli(['event', '--local', '--program', 'nope', '3']);
    const doctor = await current.cli([
      'doctor',
      '--local',
      '--program',
      'nope',
      '--json',
      '--no-write-probes',
    ]);
    const refused = await current.cli([
      'replay',
      '--local',
      '--program',
      'loans',
      '--from',
      '1',
      '--to',
      '2',
    ]);

    expect(unknown.code).toBe(2);
    expect(lines(unknown.stderr)).toEqual([
      `banking-events-poller: Program nope is not one of stack ${current.deployment.stackName}'s: no output SecretArnNope, ` +
        `and no record in its programs table ${programsTable}: check --program (banking-events-poller programs list), ` +
        'add it (programs add nope), or pass --secret-id',
    ]);
    expect(doctor.code).toBe(1);
    expect(
      (JSON.parse(doctor.stdout) as { checks: { check: string; verdict: string; detail: string }[] })
        .checks[0],
    ).toMatchObject({
      check: 'secret (nope)',
      verdict: 'failed',
      detail: expect.stringContaining(`no record in its programs table ${programsTable}`),
    });
    expect(refused.code).toBe(1);
    expect(lines(refused.stderr)).toEqual([
      expect.stringMatching(
        /Program loans's secretId is not one of this deployment's secrets: it is not under the secrets prefix banking-events-poller\/.*\//,
      ),
    ]);
  });
});
