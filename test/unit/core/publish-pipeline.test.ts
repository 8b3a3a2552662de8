import { describe, expect, it } from 'vitest';
import { ConfigurationError, PublishError } from '../../../functions/core/errors.ts';
import type { PublishFailure } from '../../../functions/core/ports.ts';
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

  describe('by what the publisher says of each failure', () => {
    /** A pipeline over `publisher` with the default attempts (5) and backoff, a seeded random. */
    function pipelineOver(publisher: InMemoryPublisher, clock: FakeClock) {
      const logger = new RecordingLogger();
      let seed = 7;
      // A small linear congruential generator: the same waits on every run.
      const random = () => {
        seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      const pipeline = new PublishPipeline({
        publisher,
        clock,
        metrics: new RecordingMetrics(),
        logger,
        random,
      });
      return { pipeline, logger };
    }

    /** Records the virtual time of every request the publisher gets. */
    function timed(publisher: InMemoryPublisher, clock: FakeClock): number[] {
      const at: number[] = [];
      const send = publisher.send.bind(publisher);
      publisher.send = (batch, signal) => {
        at.push(clock.now());
        return send(batch, signal);
      };
      return at;
    }

    const throttled = () => new PublishError('Rate exceeded', {}, undefined, 'throttled');

    it('keeps resending a request the bus throttles past the attempts while the budget allows, and stops before the deadline', async () => {
      const clock = new FakeClock();
      const publisher = new InMemoryPublisher();
      publisher.failNextRequests(...Array.from({ length: 1_000 }, throttled));
      const sentAt = timed(publisher, clock);
      const { pipeline, logger } = pipelineOver(publisher, clock);
      const started = clock.now();
      const deadline = started + 30_000;

      const report = await pipeline.publish([makeEvent(1), makeEvent(2)], {
        deadline,
        signal: new AbortController().signal,
        onAccepted: () => {},
      });

      expect(sentAt.length).toBeGreaterThan(5);
      expect(sentAt.every((at) => at < deadline)).toBe(true);
      // It gave up only when the next wait would have ended past the deadline: the 5 s cap of
      // the backoff bounds how early that can be.
      expect(clock.now()).toBeLessThan(deadline);
      expect(clock.now()).toBeGreaterThan(deadline - 5_000);
      expect(report.failed.map((failed) => failed.event.sequence_number)).toEqual([1, 2]);
      expect(logger.lines.at(-1)).toMatchObject({
        level: 'error',
        attributes: { reason: 'throttled until the budget ran out', attempts: sentAt.length },
      });
    });

    it('publishes once the throttling ends, however many attempts it took', async () => {
      const clock = new FakeClock();
      const publisher = new InMemoryPublisher();
      publisher.failNextRequests(...Array.from({ length: 12 }, throttled));
      const { pipeline } = pipelineOver(publisher, clock);

      const report = await pipeline.publish([makeEvent(1)], {
        deadline: clock.now() + 120_000,
        signal: new AbortController().signal,
        onAccepted: () => {},
      });

      expect(publisher.batches).toHaveLength(13);
      expect(report).toMatchObject({ accepted: 1, failed: [] });
    });

    it('resends an entry the bus throttles, past the attempts, while the budget allows', async () => {
      const clock = new FakeClock();
      const publisher = new InMemoryPublisher();
      publisher.rejectSequence(2, 9, 'throttled');
      const { pipeline } = pipelineOver(publisher, clock);

      const report = await pipeline.publish([makeEvent(1), makeEvent(2)], {
        deadline: clock.now() + 120_000,
        signal: new AbortController().signal,
        onAccepted: () => {},
      });

      expect(publisher.batches).toEqual([[1, 2], ...Array.from({ length: 9 }, () => [2])]);
      expect(report).toMatchObject({ accepted: 2, failed: [] });
    });

    it('still gives up on a transient failure after the attempts, throttled attempts not counted', async () => {
      const clock = new FakeClock();
      const publisher = new InMemoryPublisher();
      publisher.failNextRequests(
        ...Array.from({ length: 7 }, throttled),
        ...Array.from({ length: 10 }, () => new PublishError('Internal', {}, undefined, 'transient')),
      );
      const { pipeline, logger } = pipelineOver(publisher, clock);

      const report = await pipeline.publish([makeEvent(1)], {
        deadline: clock.now() + 600_000,
        signal: new AbortController().signal,
        onAccepted: () => {},
      });

      // 7 throttled, then 5 transient: the default attempts.
      expect(publisher.batches).toHaveLength(12);
      expect(report.failed).toHaveLength(1);
      expect(logger.lines.at(-1)?.attributes).toMatchObject({ reason: 'attempts exhausted' });
    });

    it.each([
      ['an entry refused for good', 'rejected'],
      ['an entry refused for its size', 'too-large'],
    ] as const)('does not resend %s', async (_case, failure: PublishFailure) => {
      const clock = new FakeClock();
      const publisher = new InMemoryPublisher();
      publisher.rejectSequence(1, Number.POSITIVE_INFINITY, failure);
      const { pipeline, logger } = pipelineOver(publisher, clock);

      const report = await pipeline.publish([makeEvent(1), makeEvent(2)], {
        deadline: clock.now() + 60_000,
        signal: new AbortController().signal,
        onAccepted: () => {},
      });

      expect(publisher.batches).toEqual([[1, 2]]);
      expect(report).toMatchObject({ accepted: 1 });
      expect(logger.lines.at(-1)?.attributes).toMatchObject({ reason: 'not retryable' });
    });

    it('does not resend a request that failed for what the deployment must fix', async () => {
      const clock = new FakeClock();
      const publisher = new InMemoryPublisher();
      publisher.failNextRequests(new ConfigurationError('The bus does not exist'));
      const { pipeline } = pipelineOver(publisher, clock);

      const report = await pipeline.publish([makeEvent(1)], {
        deadline: clock.now() + 60_000,
        signal: new AbortController().signal,
        onAccepted: () => {},
      });

      expect(publisher.batches).toEqual([[1]]);
      expect(report.failed.map((failed) => failed.errorCode)).toEqual([ConfigurationError.code]);
    });
  });
});
