/**
 * The invocation's end while event-group batches are being published (the Custom Event Bus, FIFO
 * per group): a batch still waiting for its turn when no first send may start any more is left
 * for the next run, as the classic bus leaves a batch not started yet. The run stops at its
 * deadline without an error, the checkpoint stays before what the bus did not confirm, and the
 * next run publishes the rest, in order, with no duplicate.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { FifoBus, groupOf } from '../../support/fifo-bus.ts';
import { InMemoryFeed, makeEvent, RecordingLogger, RecordingMetrics } from '../../support/in-memory-ports.ts';

const EVENTS = 300;
/** Virtual ms each PutEvents takes: 30 requests of 10 in one group take 9 s, more than a run has. */
const LATENCY_MS = 300;
/**
 * A run of 6 s: deadline at 4.5 s, no first send after 4.95 s, work abandoned at 5.4 s. One request
 * at a time on either bus, so that the classic bus, which has no groups to wait for, is the same run.
 */
const invocation = (owner: string) => ({
  program: 'default',
  owner,
  remainingMs: 6_000,
  publish: { concurrency: 1 },
});

function setup(grouped: boolean, latencyMs: (request: number) => number = () => LATENCY_MS) {
  const clock = new FakeClock();
  const events: BankingEvent[] = Array.from({ length: EVENTS }, (_, i) =>
    makeEvent(i + 1, { data: { group: 'A' } }),
  );
  const feed = new InMemoryFeed(clock, events, { limit: 100, holdMs: 1_000 });
  const bus = new FifoBus(clock, {
    // One group for the whole feed (`eventGroupBy: 'program'`): one request in flight at a time.
    ...(grouped ? { group: groupOf } : {}),
    limits: { maxEntriesPerBatch: 10, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
    delayMs: latencyMs,
  });
  const checkpoints = new MemoryCheckpointStore({ now: () => clock.now() });
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const deps = { feed, publisher: bus, checkpoints, clock, metrics, logger, random: () => 0.5 };
  return { clock, bus, checkpoints, metrics, logger, deps };
}

const numbers = (events: readonly BankingEvent[]) => events.map((event) => event.sequence_number);

describe('the deadline while event-group batches are published', () => {
  for (const grouped of [true, false]) {
    const bus = grouped ? 'grouped (custom bus)' : 'ungrouped (classic bus)';

    it(`stops at the deadline, ${bus}: no error, the checkpoint on what the bus accepted, the rest next run`, async () => {
      const { deps, bus: fifo, metrics, logger } = setup(grouped);

      const first = await runPollCycle(deps, invocation('run-1'));

      expect(first).toMatchObject({ status: 'completed', stopReason: 'deadline' });
      // The bus accepted a contiguous prefix, and the checkpoint is its last number.
      const accepted = numbers(fifo.accepted);
      expect(accepted.length).toBeGreaterThan(0);
      expect(accepted.length).toBeLessThan(EVENTS);
      expect(accepted).toEqual(Array.from({ length: accepted.length }, (_, i) => i + 1));
      expect(first).toMatchObject({ published: accepted.length, checkpoint: accepted.length });
      // Nothing was cut short, rejected or reported as an error: a clean stop.
      expect(fifo.requests.every((request) => Array.isArray(request.result))).toBe(true);
      expect(metrics.sum('FailedEntries')).toBe(0);
      expect(logger.lines.filter((line) => line.level === 'error')).toEqual([]);
      expect(logger.lines.map((line) => line.message)).toContain(
        'Events read were not sent before the end of the invocation; the next run reads them again',
      );

      const second = await runPollCycle(deps, invocation('run-2'));

      expect(second.startCheckpoint).toBe(accepted.length);
      // The next run goes on from the checkpoint: every event once, in order.
      const all = numbers(fifo.accepted);
      expect(all.slice(0, accepted.length + second.published)).toEqual(
        Array.from({ length: accepted.length + second.published }, (_, i) => i + 1),
      );
    });
  }

  it('abandons a request still unanswered at the end as on the classic bus, and what waits behind it is unsent, not failed', async () => {
    // The 12th request never answers: the bus holds it until the invocation gives up on it.
    const { deps, bus, checkpoints } = setup(true, (request) => (request === 11 ? 1e9 : LATENCY_MS));

    const failure = await runPollCycle(deps, invocation('run-1')).catch((error: unknown) => error);

    // As on the classic bus: a PutEvents unanswered when the work had to end is DEADLINE_EXCEEDED,
    // naming the entries of that request only (the batches behind it were never sent).
    expect(failure).toMatchObject({
      code: 'DEADLINE_EXCEEDED',
      context: { failedCount: 10, sequenceNumber: 111 },
    });
    expect(bus.requests).toHaveLength(12);
    expect((await checkpoints.read()).checkpoint).toBe(110);
  });
});
