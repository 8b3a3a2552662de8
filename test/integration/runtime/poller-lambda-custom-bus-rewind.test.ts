/**
 * The shipped bundle, run as Lambda runs it, publishing to the Custom Event Bus (`EVENT_BUS_KIND`
 * custom) through the stand-in, set up as a fault run's (`FaultRun` with `bus: 'custom'`: a FIFO
 * subscriber onto an SQS FIFO queue on moto, every PutEvents answer recorded by the proxy). Beside
 * `poller-lambda-custom-bus.test.ts`: an operator's rewind within the 5-minute window is answered
 * `DEDUPLICATED` entry by entry and delivers nothing twice; the same rewind once the window has
 * passed is delivered again (what an operator who wants a re-delivery does: waits it out).
 */
import { describe, expect, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import type { CustomBusRequest } from '../../support/aws-fault-proxy.ts';
import { DEDUPLICATION_WINDOW_MS } from '../../support/custom-bus/index.ts';
import { type FaultEnvironment, FaultRun, useFaultEnvironment } from '../../support/fault-run.ts';

const environment = useFaultEnvironment();

/** Apart from the other files' seeds, so simulators never share program ids. */
const SEED = 9_700;

/** What reached the FIFO queue since the last drain, in order: each event's id and group. */
async function drained(run: FaultRun): Promise<{ id: string; group: string | undefined }[]> {
  return (await run.customBus!.drain()).map(({ body, group }) => ({
    id: (JSON.parse(body) as { detail: { id: string } }).detail.id,
    group,
  }));
}

/** Each entry of the given PutEvents requests: its event id, de-duplication id, group and the bus's answer. */
function entries(requests: readonly CustomBusRequest[]) {
  return requests.flatMap((request) =>
    request.entries.map((entry) => ({
      id: (JSON.parse(entry.detail) as { id: string }).id,
      deduplicationId: entry.deduplicationId,
      group: entry.eventGroupId,
      outcome: entry.outcome,
    })),
  );
}

/** Moves the checkpoint back as the CLI's `rewind` does (no lease held meanwhile). */
async function rewind(env: FaultEnvironment, run: FaultRun, to: number): Promise<void> {
  const store = new DynamoDbCheckpointStore({
    client: env.aws.dynamodb,
    tableName: env.checkpointTable,
    program: run.program,
  });
  const { checkpoint } = await run.item();
  expect(await store.moveCheckpoint({ to, expected: checkpoint })).toMatchObject({ moved: true });
}

async function withCustomBusRun(
  options: { seed: number; events: number; environment?: Record<string, string> },
  body: (run: FaultRun) => Promise<void>,
): Promise<void> {
  const run = await FaultRun.start(environment, { ...options, bus: 'custom' });
  try {
    await body(run);
    expect(run.leaks()).toEqual([]);
  } finally {
    await run.close();
  }
}

describe('the deployed function on the Custom Event Bus: a rewind and the de-duplication window', () => {
  it('answers a rewind within the window with DEDUPLICATED and delivers nothing twice; past it, delivers again', async () => {
    await withCustomBusRun({ seed: SEED, events: 30 }, async (run) => {
      const bank = run.simulator.events();
      const bus = run.customBus!.bus;
      const startedAt = bus.now();
      await run.untilCaughtUp();
      expect(await drained(run)).toHaveLength(30);
      const firstRequests = run.aws.customBusRequests.length;

      // Within the window (the stand-in's clock has not moved): back to event 10, and 5 new events.
      await rewind(environment, run, bank[9]!.sequence_number);
      const fresh = run.simulator.generate(5);
      await run.untilCaughtUp();

      expect(bus.now() - startedAt).toBeLessThan(DEDUPLICATION_WINDOW_MS);
      const again = entries(run.aws.customBusRequests.slice(firstRequests));
      expect(again.filter((entry) => entry.outcome === 'DEDUPLICATED').map((entry) => entry.id)).toEqual(
        bank.slice(10).map((event) => event.id),
      );
      expect(again.filter((entry) => entry.outcome === 'PUBLISHED').map((entry) => entry.id)).toEqual(
        fresh.map((event) => event.id),
      );
      expect((await drained(run)).map((event) => event.id)).toEqual(fresh.map((event) => event.id));

      // Past the window the bus no longer knows the ids: the same rewind is delivered again.
      await bus.advanceClock(DEDUPLICATION_WINDOW_MS);
      await rewind(environment, run, bank[24]!.sequence_number);
      await run.untilCaughtUp();

      const redelivered = [...bank.slice(25), ...fresh].map((event) => event.id);
      expect((await drained(run)).map((event) => event.id)).toEqual(redelivered);
    });
  });
});
