import { describe, expect, it } from 'vitest';
import { PublishPipeline } from '../../../functions/core/publish-pipeline.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

describe('PublishPipeline', () => {
  it('reports only the still-rejected entries as failed when the deadline cuts a retry wait short', async () => {
    const clock = new FakeClock();
    const publisher = new InMemoryPublisher();
    publisher.rejectSequence(2);
    const pipeline = new PublishPipeline(
      {
        publisher,
        clock,
        metrics: new RecordingMetrics(),
        logger: new RecordingLogger(),
        random: () => 0.99,
      },
      { backoff: { baseMs: 1_000, capMs: 1_000 } },
    );
    const events = [makeEvent(1), makeEvent(2), makeEvent(3)];
    const accepted: number[] = [];

    // The wait (990 ms) fits before the deadline, but the signal aborts during it.
    const report = await pipeline.publish(events, {
      deadline: clock.now() + 5_000,
      signal: clock.deadline(clock.now() + 500).signal,
      onAccepted: (event) => accepted.push(event.sequence_number),
    });

    expect(accepted).toEqual([1, 3]);
    expect(report.accepted).toBe(2);
    expect(report.failed.map((f) => [f.event.sequence_number, f.errorCode])).toEqual([
      [2, 'DeadlineExceeded'],
    ]);
  });

  it('gives up on an entry after the configured attempts, within the budget', async () => {
    const clock = new FakeClock();
    const publisher = new InMemoryPublisher();
    publisher.rejectSequence(1);
    const metrics = new RecordingMetrics();
    const pipeline = new PublishPipeline(
      { publisher, clock, metrics, logger: new RecordingLogger(), random: () => 0.5 },
      { maxAttempts: 3 },
    );

    const report = await pipeline.publish([makeEvent(1)], {
      deadline: clock.now() + 60_000,
      signal: new AbortController().signal,
      onAccepted: () => {},
    });

    expect(publisher.batches).toEqual([[1], [1], [1]]);
    expect(report.failed.map((f) => f.errorCode)).toEqual(['InternalFailure']);
    expect(metrics.sum('PublishRetries')).toBe(2);
  });
});
