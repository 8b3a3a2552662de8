/**
 * A bank that ignores `limit`: pages of thousands of events to a request for 100, and a slow bus.
 * The cycle holds no more than its byte budget of them, reads the rest again, loses nothing, says
 * so, and ends within its time.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import type { BankingEvent, FeedPage } from '../../../functions/core/banking-event.ts';
import { PageTooLargeError } from '../../../functions/core/errors.ts';
import { footprintOf } from '../../../functions/core/memory-budget.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import type { EntryOutcome, EventFeed, PollRequest } from '../../../functions/core/ports.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

const ASKED = 100;

/** Answers up to `pageEvents` events after the cursor, whatever it asked for; records what the cycle held at each poll. */
class LimitIgnoringFeed implements EventFeed {
  /** Bytes of the events at or below each poll's cursor the bus had not accepted yet: what the cycle held. */
  readonly heldAtPoll: number[] = [];
  /** Events in each answer. */
  readonly answered: number[] = [];
  /** What each poll said it had room for (`maxBytes`). */
  readonly roomAsked: Array<number | undefined> = [];
  constructor(
    private readonly events: readonly BankingEvent[],
    private readonly pageEvents: number,
    private readonly accepted: ReadonlySet<number>,
    private readonly extra: Partial<FeedPage> = {},
  ) {}

  async poll(request: PollRequest): Promise<FeedPage> {
    request.signal.throwIfAborted();
    this.roomAsked.push(request.maxBytes);
    const after = request.after ?? 0;
    this.heldAtPoll.push(
      footprintOf(
        this.events.filter(
          (event) => event.sequence_number <= after && !this.accepted.has(event.sequence_number),
        ),
      ),
    );
    const events = this.events.filter((event) => event.sequence_number > after).slice(0, this.pageEvents);
    this.answered.push(events.length);
    return {
      events,
      lastSequenceNumber: events.at(-1)?.sequence_number ?? after,
      asked: ASKED,
      ...this.extra,
    };
  }
}

/** The bus, answering each PutEvents after `latencyMs` of virtual time. */
class SlowPublisher extends InMemoryPublisher {
  readonly acceptedNumbers = new Set<number>();
  constructor(
    private readonly clock: FakeClock,
    private readonly latencyMs: number,
  ) {
    super();
  }

  override async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    await this.clock.sleep(this.latencyMs, signal);
    const outcomes = await super.send(batch, signal);
    for (const event of batch) this.acceptedNumbers.add(event.sequence_number);
    return outcomes;
  }
}

function setup(options: {
  events: number;
  pageEvents: number;
  latencyMs: number;
  extra?: Partial<FeedPage>;
}) {
  const clock = new FakeClock();
  const events = Array.from({ length: options.events }, (_, i) => makeEvent(i + 1));
  const publisher = new SlowPublisher(clock, options.latencyMs);
  const feed = new LimitIgnoringFeed(events, options.pageEvents, publisher.acceptedNumbers, options.extra);
  const checkpoints = new MemoryCheckpointStore({ now: () => clock.now() });
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const deps = { feed, publisher, checkpoints, clock, metrics, logger, random: () => 0.5 };
  return { clock, events, feed, publisher, checkpoints, metrics, logger, deps };
}

const invocation = { program: 'default', owner: 'req-1', remainingMs: 60_000 };

describe('a bank that ignores limit', () => {
  it('holds no more than its budget of the events read ahead, whatever the size of the pages, and loses none', async () => {
    const { deps, feed, publisher, events } = setup({ events: 6_000, pageEvents: 5_000, latencyMs: 20 });
    const heldBytes = 400 * footprintOf([events[0]!]);

    const summary = await runPollCycle(deps, { ...invocation, heldBytes });

    expect(summary).toMatchObject({ status: 'completed', checkpoint: 6_000, published: 6_000 });
    expect(publisher.accepted.map((event) => event.sequence_number)).toEqual(
      events.map((e) => e.sequence_number),
    );
    // Several polls, each keeping what fits; never more held than the budget.
    expect(feed.heldAtPoll.length).toBeGreaterThan(6_000 / 400);
    expect(Math.max(...feed.heldAtPoll)).toBeLessThanOrEqual(heldBytes);
  });

  it('counts each page with more events than asked for, and says so at warning level once a cycle', async () => {
    const { deps, feed, metrics, logger } = setup({ events: 3_000, pageEvents: 1_000, latencyMs: 1 });
    const heldBytes = 200 * footprintOf([makeEvent(1)]);

    const summary = await runPollCycle(deps, { ...invocation, heldBytes });

    expect(summary.checkpoint).toBe(3_000);
    const overLimit = feed.answered.filter((count) => count > ASKED).length;
    expect(overLimit).toBeGreaterThan(3);
    expect(metrics.sum('OversizePages')).toBe(overLimit);
    const said = logger.lines.filter((line) => line.message.includes('more events than the poll asked for'));
    expect(said.filter((line) => line.level === 'warn')).toHaveLength(1);
    expect(said[0]!.attributes).toMatchObject({ asked: ASKED, received: 1_000 });
    expect(said.length).toBe(metrics.sum('OversizePages'));
  });

  it('counts a page read in parts, with the bytes read', async () => {
    const { deps, metrics, logger } = setup({
      events: 50,
      pageEvents: 20,
      latencyMs: 1,
      extra: { cut: { bytesRead: 4_096 } },
    });

    await runPollCycle(deps, invocation);

    expect(metrics.sum('OversizePages')).toBeGreaterThanOrEqual(3);
    const said = logger.lines.find((line) => line.message.includes('longer than is read at once'));
    expect(said).toMatchObject({
      level: 'warn',
      attributes: { bytesRead: 4_096, received: 20, asked: ASKED },
    });
  });

  it('asks for no more of a page than its room takes as text, once it has seen how long events are', async () => {
    const { deps, feed, events } = setup({ events: 12_000, pageEvents: 10_000, latencyMs: 1 });

    await runPollCycle(deps, invocation);

    const [first, ...later] = feed.roomAsked;
    const longest = Math.max(...events.map((event) => event.detail.length));
    // At most 2,000 events are read at once (half of the 4,000 in flight), with a quarter to spare.
    expect(later.length).toBeGreaterThan(3);
    for (const room of later) expect(room).toBeLessThanOrEqual(2_000 * longest * 1.25 + 1);
    expect(first).toBeGreaterThan(later[0]!);
  });

  it('asks again for the whole page when its first event is longer than the room', async () => {
    const { deps, feed, publisher, events } = setup({ events: 30, pageEvents: 30, latencyMs: 1 });
    const poll = feed.poll.bind(feed);
    const tried: Array<number | undefined> = [];
    const feedOfLargeEvents: EventFeed = {
      poll: async (request) => {
        tried.push(request.maxBytes);
        if (tried.length === 1) throw new PageTooLargeError('no event ends within it', { bytesRead: 1 });
        return poll(request);
      },
    };

    const summary = await runPollCycle({ ...deps, feed: feedOfLargeEvents }, invocation);

    expect(tried.slice(0, 2)).toEqual([expect.any(Number), undefined]);
    expect(summary.checkpoint).toBe(30);
    expect(publisher.accepted).toHaveLength(events.length);
  });

  it('ends within its time with a slow bus: what it read and could not send in time is left for the next run, not failed', async () => {
    const { deps, publisher, checkpoints, logger, clock } = setup({
      events: 20_000,
      pageEvents: 20_000,
      latencyMs: 100,
    });
    const startedAt = clock.now();

    // Two requests of 10 in flight, 100 ms each: 200 events a second, fewer than one page's worth.
    const summary = await runPollCycle(deps, {
      ...invocation,
      remainingMs: 20_000,
      publish: { concurrency: 2 },
    });

    expect(summary.status).toBe('completed');
    expect(clock.now() - startedAt).toBeLessThanOrEqual(20_000);
    const accepted = publisher.accepted.map((event) => event.sequence_number);
    expect(accepted.length).toBeGreaterThan(500);
    expect(accepted.length).toBeLessThan(20_000);
    // Nothing beyond what the bus took in order: the next run starts after it.
    const { checkpoint } = await checkpoints.read();
    expect(checkpoint).toBe(summary.checkpoint);
    expect(Array.from({ length: checkpoint! }, (_, i) => i + 1).every((n) => accepted.includes(n))).toBe(
      true,
    );
    expect(
      logger.lines.some((line) => line.message.includes('not sent before the end of the invocation')),
    ).toBe(true);
  });
});
