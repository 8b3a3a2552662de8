/**
 * Issue 32's case on the shipped artifact under the runtime harness, in both feed modes: a bank on
 * loopback holds events 1, 2, 3 and one numbered 2^53 − 1; events 4 and 5 are created after the
 * first run. 1..5 are all published, the jump is quarantined once across runs, neither the
 * checkpoint nor any cursor the function sent passes 5, gap repair looks nothing up, and
 * `SequenceJumpsHeld` is emitted by every run while the jump waits. Then the operator's decision,
 * written as `jumps accept|reject` writes it, either way. And a program's first run: a feed whose
 * numbers start far above 0 is published at once when its first events corroborate each other; a
 * lone first 2^53 − 1 is still held.
 */
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import type { HeldJump } from '../../../functions/core/checkpoint/store.ts';
import { type DeliveredEvent, type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { POLL_MODES, STREAM_MODES } from '../../support/feed-modes.ts';
import type { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { emfDocuments, pollerLambda, summaryOf } from '../../support/poller-lambda.ts';
import { type ScriptedBank, startScriptedBank } from '../../support/scripted-bank.ts';

const MAX = Number.MAX_SAFE_INTEGER;
const MODES = [POLL_MODES[0]!, STREAM_MODES[0]!];

let aws: MotoEnvironment;
let table: string;
let seed = 3_200;

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  table = await aws.createCheckpointTable();
});

interface Scenario {
  readonly program: string;
  readonly bank: ScriptedBank;
  readonly lambda: LambdaContainer;
  readonly store: DynamoDbCheckpointStore;
  /** Invokes the function once; its summary and the value of SequenceJumpsHeld it emitted (or undefined). */
  run(): Promise<{ checkpoint: number | null; heldGauge: number | undefined }>;
  /** Everything delivered to the bus since the last call. */
  delivered(): Promise<DeliveredEvent[]>;
}

const open: Scenario[] = [];
afterEach(async () => {
  for (const scenario of open.splice(0)) {
    await scenario.lambda.close();
    await scenario.bank.close();
  }
});

/** The shipped function polling a scripted bank that holds `numbers`, as a program named after `name`, in `mode`. */
async function startScenario(
  mode: (typeof MODES)[number],
  name: string,
  numbers: readonly number[],
  environment: Readonly<Record<string, string>> = {},
): Promise<Scenario> {
  seed += 1;
  const bank = await startScriptedBank({ seed });
  bank.add(...numbers);
  const program = aws.uniqueName(name);
  const bus = await aws.createRecordedBus();
  const lambda = pollerLambda({
    artifact: inject('pollerArtifact'),
    motoEndpoint: inject('motoEndpoint'),
    secretId: await aws.createSecret(bank.secret),
    checkpointTable: table,
    eventBusName: bus.busName,
    timeoutMs: 4_000,
    environment: { DEFAULT_PROGRAM: program, ...environment, ...mode.environment },
  });
  const store = new DynamoDbCheckpointStore({ client: aws.dynamodb, tableName: table, program });
  const scenario: Scenario = {
    program,
    bank,
    lambda,
    store,
    async run() {
      const invocation = await lambda.invoke({});
      const gauges = emfDocuments(invocation.stdout)
        .map((document) => document.SequenceJumpsHeld)
        .filter((value): value is number => typeof value === 'number');
      return {
        checkpoint: summaryOf(invocation).checkpoint,
        heldGauge: gauges.length === 0 ? undefined : Math.max(...gauges),
      };
    },
    delivered: () => aws.drainQueue(bus.queueUrl),
  };
  open.push(scenario);
  return scenario;
}

describe.each(MODES)('a bank with events 1, 2, 3 and 2^53 − 1, then 4 and 5 ($name)', (mode) => {
  const start = () => startScenario(mode, 'jumps', [1, 2, 3, MAX]);

  /** Runs 1 and 2 of the case; what was delivered meanwhile. */
  async function heldAcrossRuns(s: Scenario) {
    const first = await s.run();
    s.bank.add(4, 5);
    const second = await s.run();
    return { first, second, delivered: await s.delivered() };
  }

  const numbersOf = (delivered: readonly DeliveredEvent[], detailType: string) =>
    delivered
      .filter((event) => event['detail-type'] === detailType)
      .map((event) => (event.detail as { sequence_number: number }).sequence_number);

  function decide(s: Scenario, decision: NonNullable<HeldJump['decision']>) {
    return s.store.read().then((state) => {
      const [jump] = state.heldJumps ?? [];
      return s.store.decideHeldJump({
        sequenceNumber: jump!.sequenceNumber,
        eventId: jump!.eventId,
        decision,
      });
    });
  }

  it('publishes 1..5, quarantines the jump once, never passes 5, and counts it in every run; accepted, publishes it', async () => {
    const s = await start();

    const { first, second, delivered } = await heldAcrossRuns(s);

    expect(first).toEqual({ checkpoint: 3, heldGauge: 1 });
    expect(second).toEqual({ checkpoint: 5, heldGauge: 1 });
    expect(numbersOf(delivered, 'account_status').sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
    const quarantined = delivered.filter((event) => event['detail-type'] === 'invalid_event');
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]!.detail).toMatchObject({
      sequence_number: MAX,
      error: { code: 'SEQUENCE_JUMP_HELD' },
      raw: { sequence_number: MAX },
    });
    // No cursor the function sent, poll or stream, passed 5; and gap repair looked nothing up.
    const cursors = [...s.bank.cursors('/events'), ...s.bank.cursors('/events/stream')];
    expect(cursors.length).toBeGreaterThan(1);
    expect(Math.max(...cursors.map((cursor) => cursor ?? 0))).toBeLessThanOrEqual(5);
    expect(s.bank.requests.filter((request) => request.url.startsWith('/event/sequence/'))).toEqual([]);
    expect((await s.store.read()).heldJumps).toMatchObject([
      { sequenceNumber: MAX, eventId: expect.any(String) },
    ]);

    expect(await decide(s, 'accepted')).toMatchObject({ decided: true });
    const third = await s.run();

    expect(third).toEqual({ checkpoint: MAX, heldGauge: undefined });
    const afterAccepting = await s.delivered();
    expect(numbersOf(afterAccepting, 'account_status')).toEqual([MAX]);
    expect(numbersOf(afterAccepting, 'invalid_event')).toEqual([]);
    expect((await s.store.read()).heldJumps).toEqual([]);
  });

  it('rejected, passes the jump over for good: nothing quarantined again, the alarm metric gone, later events published', async () => {
    const s = await start();
    const { second, delivered } = await heldAcrossRuns(s);
    expect(second).toEqual({ checkpoint: 5, heldGauge: 1 });
    expect(numbersOf(delivered, 'invalid_event')).toEqual([MAX]);

    expect(await decide(s, 'rejected')).toMatchObject({ decided: true });
    s.bank.add(6);
    const third = await s.run();

    expect(third).toEqual({ checkpoint: 6, heldGauge: undefined });
    const afterRejecting = await s.delivered();
    expect(numbersOf(afterRejecting, 'account_status')).toEqual([6]);
    expect(numbersOf(afterRejecting, 'invalid_event')).toEqual([]);
    expect((await s.store.read()).heldJumps).toMatchObject([{ sequenceNumber: MAX, decision: 'rejected' }]);
  });
});

describe.each(MODES)("a program's first run ($name)", (mode) => {
  const firstRun = (...numbers: number[]) => startScenario(mode, 'first-run', numbers);

  const numbersOf = (delivered: readonly DeliveredEvent[], detailType: string) =>
    delivered
      .filter((event) => event['detail-type'] === detailType)
      .map((event) => (event.detail as { sequence_number: number }).sequence_number)
      .sort((a, b) => a - b);

  it('publishes a feed numbered from 48,000,000 at once: its first events corroborate each other', async () => {
    const s = await firstRun(48_000_000, 48_000_001, 48_000_002);

    const first = await s.run();

    expect(first).toEqual({ checkpoint: 48_000_002, heldGauge: undefined });
    const delivered = await s.delivered();
    expect(numbersOf(delivered, 'account_status')).toEqual([48_000_000, 48_000_001, 48_000_002]);
    expect(numbersOf(delivered, 'invalid_event')).toEqual([]);
  });

  it('still holds a lone first event numbered 2^53 − 1, and publishes 1 and 2 created after it', async () => {
    const s = await firstRun(MAX);

    const first = await s.run();
    s.bank.add(1, 2);
    const second = await s.run();

    expect(first).toEqual({ checkpoint: null, heldGauge: 1 });
    expect(second.checkpoint).toBe(2);
    const delivered = await s.delivered();
    expect(numbersOf(delivered, 'account_status')).toEqual([1, 2]);
    expect(numbersOf(delivered, 'invalid_event')).toEqual([MAX]);
  });
});

describe('PROGRAM_METRICS=alarmed: a fleet, alarmed per condition', () => {
  it('sends the held jump with its Program, as the sequence-jumps alarm over every program groups it', async () => {
    const { program, lambda } = await startScenario(MODES[0]!, 'jumps-fleet', [1, 2, 3, MAX], {
      PROGRAM_METRICS: 'alarmed',
    });

    const invocation = await lambda.invoke({});

    expect(summaryOf(invocation).checkpoint).toBe(3);
    const documents = emfDocuments(invocation.stdout) as (Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Dimensions: string[][] }[] };
    })[];
    const named = documents.filter((document) =>
      document._aws.CloudWatchMetrics[0]!.Dimensions.flat().includes('Program'),
    );
    // SELECT MAX("SequenceJumpsHeld") FROM SCHEMA(…, "Program", "service") … GROUP BY "Program".
    expect(named).toEqual([expect.objectContaining({ Program: program, SequenceJumpsHeld: 1 })]);
    expect(named[0]!._aws.CloudWatchMetrics[0]!.Dimensions).toEqual([['service', 'Program']]);
  });
});
