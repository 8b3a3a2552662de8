import { describe, expect, it } from 'vitest';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import { EARLIER_ENTRY_FAILED } from '../../../functions/core/group-sequencer.ts';
import {
  PublishPipeline,
  type PublishPipelineOptions,
  type PublishReport,
} from '../../../functions/core/publish-pipeline.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { FifoBus, type FifoBusOptions, groupOf } from '../../support/fifo-bus.ts';
import { makeEvent, RecordingLogger, RecordingMetrics } from '../../support/in-memory-ports.ts';

/** Events numbered from `first`, each in the group its letter names ('-': no group). */
function events(groups: string, first = 1): BankingEvent[] {
  return [...groups].map((group, index) =>
    makeEvent(first + index, group === '-' ? {} : { data: { group } }),
  );
}

function setup(bus: Partial<FifoBusOptions> = {}, options: PublishPipelineOptions = {}) {
  const clock = new FakeClock();
  const fifo = new FifoBus(clock, {
    group: groupOf,
    limits: { maxEntriesPerBatch: 2, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
    ...bus,
  });
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const pipeline = new PublishPipeline(
    { publisher: fifo, clock, metrics, logger, random: () => 0.5 },
    { backoff: { baseMs: 100, capMs: 100 }, ...options },
  );
  const accepted: number[] = [];
  const publish = (page: readonly BankingEvent[], signal = new AbortController().signal) =>
    pipeline.publish(page, {
      deadline: clock.now() + 60_000,
      signal,
      onAccepted: (event) => accepted.push(event.sequence_number),
    });
  return { clock, bus: fifo, metrics, logger, pipeline, accepted, publish };
}

const sent = (bus: FifoBus) => bus.requests.map((request) => request.sequences);
const failures = (report: PublishReport) =>
  report.failed.map((f) => [f.event.sequence_number, f.errorCode] as const);

describe('PublishPipeline with event groups', () => {
  it('sends a batch only once the earlier entries of its group were accepted', async () => {
    const { bus, publish } = setup();

    const report = await publish(events('AAAAA'));

    expect(sent(bus)).toEqual([[1, 2], [3, 4], [5]]);
    expect(bus.maxInFlight).toBe(1);
    for (const [index, request] of bus.requests.entries()) {
      if (index > 0) expect(request.startedAt).toBeGreaterThanOrEqual(bus.requests[index - 1]!.endedAt!);
    }
    expect(report.accepted).toBe(5);
  });

  it('keeps the order across pages: a later page waits for the earlier one of the same group', async () => {
    const { bus, publish } = setup();

    await Promise.all([publish(events('AA', 1)), publish(events('AA', 3))]);

    expect(sent(bus)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(bus.requests[1]!.startedAt).toBe(bus.requests[0]!.endedAt);
  });

  it('overlaps the requests of different groups', async () => {
    const { bus, publish } = setup({
      limits: { maxEntriesPerBatch: 1, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
    });

    await publish(events('ABAB'));

    // A1 and B2 together, then A3 and B4 together, each after the earlier one of its group.
    expect(bus.requests.map((r) => [r.sequences[0], r.startedAt - bus.requests[0]!.startedAt])).toEqual([
      [1, 0],
      [2, 0],
      [3, 10],
      [4, 10],
    ]);
    expect(bus.maxInFlight).toBe(2);
  });

  it('resends only the rejected entry, and holds later batches of its group until it is accepted', async () => {
    const { bus, publish, accepted } = setup();
    bus.rejectSequence(2, 1);

    // Batches [1 A, 2 B], [3 C, 4 C], [5 B, 6 B].
    const report = await publish(events('ABCCBB'));

    expect(sent(bus)).toEqual([[1, 2], [3, 4], [2], [5, 6]]);
    const [first, second, resend, later] = bus.requests;
    expect(second!.startedAt).toBe(first!.startedAt);
    expect(later!.startedAt).toBeGreaterThanOrEqual(resend!.endedAt!);
    expect(accepted).toEqual([1, 3, 4, 2, 5, 6]);
    expect(report.failed).toEqual([]);
  });

  it('never sends the later entries of a group whose entry failed for good, and goes on with the others', async () => {
    const { bus, publish, accepted, logger } = setup({}, { maxAttempts: 2 });
    bus.rejectSequence(2);

    // Batches [1 A, 2 B], [3 C, 4 B], [5 C]; then a second page with B and C.
    const [page, next] = await Promise.all([publish(events('ABCBC')), publish(events('BC', 6))]);

    expect(sent(bus)).toEqual([[1, 2], [2], [3], [5], [7]]);
    expect(accepted).toEqual([1, 3, 5, 7]);
    expect(failures(page)).toEqual([
      [2, 'InternalFailure'],
      [4, EARLIER_ENTRY_FAILED],
    ]);
    expect(failures(next)).toEqual([[6, EARLIER_ENTRY_FAILED]]);
    expect(next.failed[0]!.errorMessage).toContain('sequence 2');
    expect(logger.lines.filter((line) => line.level === 'error')).toHaveLength(1);
  });

  it('counts and logs a group broken by a partial failure, naming both events', async () => {
    const { bus, publish, metrics, logger, accepted } = setup({
      limits: { maxEntriesPerBatch: 10, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
    });
    bus.rejectSequence(2, 1);
    bus.rejectSequence(4, 1);
    const page = events('AABBABA');

    await publish(page);

    // A: 2 rejected, 5 accepted after it; B: 4 rejected, 6 accepted after it; C: none.
    expect(accepted).toEqual([1, 3, 5, 6, 7, 2, 4]);
    expect(metrics.sum('OrderBroken')).toBe(2);
    const lines = logger.lines.filter((line) => line.level === 'error');
    expect(lines.map((line) => line.attributes)).toEqual([
      {
        earlier: { id: page[1]!.id, sequence_number: 2, errorCode: 'InternalFailure' },
        later: { id: page[4]!.id, sequence_number: 5 },
      },
      {
        earlier: { id: page[3]!.id, sequence_number: 4, errorCode: 'InternalFailure' },
        later: { id: page[5]!.id, sequence_number: 6 },
      },
    ]);
  });

  it('counts nothing when the rejected entries are the last of their groups in the request', async () => {
    const { bus, publish, metrics } = setup({
      limits: { maxEntriesPerBatch: 10, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
    });
    bus.rejectSequence(3, 1);

    await publish(events('ABAB'));

    expect(sent(bus)).toEqual([[1, 2, 3, 4], [3]]);
    expect(metrics.sum('OrderBroken')).toBe(0);
  });

  it('reports the batches waiting for their turn as unsent once publishing is halted', async () => {
    const { bus, publish, pipeline, clock } = setup({}, { maxAttempts: 5 });
    bus.rejectSequence(1, 1);

    const pending = publish(events('AAAA'));
    // The first request was rejected for 1, its resend waits the backoff.
    await clock.sleep(50);
    pipeline.halt();
    const report = await pending;

    expect(sent(bus)).toEqual([[1, 2]]);
    expect(report.unsent).toBe(3);
    expect(report.accepted).toBe(1);
  });

  it('reports a batch still waiting for its turn at the deadline as failed, and sends nothing after it', async () => {
    const { bus, publish, clock } = setup({ delayMs: () => 1_000 });
    const deadline = clock.deadline(clock.now() + 500);

    const report = await publish(events('AAAA'), deadline.signal);

    expect(sent(bus)).toEqual([[1, 2]]);
    expect(failures(report)).toEqual([
      [1, 'DeadlineExceeded'],
      [2, 'DeadlineExceeded'],
      [3, 'DeadlineExceeded'],
      [4, 'DeadlineExceeded'],
    ]);
  });

  it('leaves a batch still waiting for its turn when no first send may start unsent, and what of its group follows, not failed', async () => {
    const { bus, pipeline, clock, accepted } = setup({ delayMs: () => 1_000 });
    const start = clock.deadline(clock.now() + 500);
    const end = clock.deadline(clock.now() + 2_000);

    const report = await pipeline.publish(events('AAAAAA'), {
      deadline: clock.now() + 2_000,
      signal: end.signal,
      startSignal: start.signal,
      onAccepted: (event) => accepted.push(event.sequence_number),
    });

    // The request in flight at the start deadline is answered; nothing is sent after it.
    expect(sent(bus)).toEqual([[1, 2]]);
    expect(accepted).toEqual([1, 2]);
    expect(report).toMatchObject({ accepted: 2, failed: [], unsent: 4 });
  });

  it('sends the other groups up to the start deadline, and leaves each group behind an unsent batch unsent', async () => {
    const { bus, pipeline, clock, accepted } = setup({
      limits: { maxEntriesPerBatch: 1, maxBatchBytes: 256 * 1024, maxEntryBytes: 256 * 1024 },
      // A's first request is slow; B's answer at once.
      delayMs: (request) => (request === 0 ? 1_000 : 10),
    });
    const start = clock.deadline(clock.now() + 500);
    const end = clock.deadline(clock.now() + 2_000);

    const report = await pipeline.publish(events('ABABAB'), {
      deadline: clock.now() + 2_000,
      signal: end.signal,
      startSignal: start.signal,
      onAccepted: (event) => accepted.push(event.sequence_number),
    });

    expect(sent(bus)).toEqual([[1], [2], [4], [6]]);
    expect(accepted.sort((a, b) => a - b)).toEqual([1, 2, 4, 6]);
    expect(report).toMatchObject({ accepted: 4, failed: [], unsent: 2 });
  });

  it('reports what a bus holding a request until the end cut short as failed, and the batches behind it as unsent', async () => {
    // The first request is answered only when the invocation gives up on it.
    const { bus, pipeline, clock } = setup({ delayMs: () => 1e9 });
    const start = clock.deadline(clock.now() + 500);
    const end = clock.deadline(clock.now() + 2_000);

    const report = await pipeline.publish(events('AAAA'), {
      deadline: clock.now() + 2_000,
      signal: end.signal,
      startSignal: start.signal,
      onAccepted: () => {},
    });

    expect(sent(bus)).toEqual([[1, 2]]);
    expect(failures(report)).toEqual([
      [1, 'DeadlineExceeded'],
      [2, 'DeadlineExceeded'],
    ]);
    expect(report.unsent).toBe(2);
  });

  describe('without groups', () => {
    for (const [name, group] of [
      ['a bus that names none', undefined],
      ['a publisher whose every event has no group', () => undefined],
    ] as const) {
      it(`sends as before for ${name}: batches at once, rejections resent without holding anything`, async () => {
        const { bus, publish, metrics, accepted } = setup({ group });
        expect(bus.eventGroup === undefined).toBe(group === undefined);
        bus.rejectSequence(1, 1);

        await publish(events('------'));

        expect(sent(bus)).toEqual([[1, 2], [3, 4], [5, 6], [1]]);
        expect(bus.maxInFlight).toBe(3);
        expect(accepted).toEqual([2, 3, 4, 5, 6, 1]);
        expect(metrics.sum('OrderBroken')).toBe(0);
      });
    }
  });
});
