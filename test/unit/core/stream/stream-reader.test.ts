import { describe, expect, it } from 'vitest';
import type { BankingEvent } from '../../../../functions/core/banking-event.ts';
import {
  AuthenticationError,
  PayloadValidationError,
  UpstreamHttpError,
} from '../../../../functions/core/errors.ts';
import { FeedReader } from '../../../../functions/core/feed-reader.ts';
import { eventFootprint } from '../../../../functions/core/memory-budget.ts';
import type { StreamMessage } from '../../../../functions/core/ports.ts';
import {
  MAX_SERVER_RETRY_MS,
  MIN_RECONNECT_WAIT_MS,
} from '../../../../functions/core/stream/stream-connection.ts';
import { StreamReader } from '../../../../functions/core/stream/stream-reader.ts';
import type { StreamRecovery } from '../../../../functions/core/stream/stream-recovery.ts';
import { FakeClock } from '../../../support/fake-clock.ts';
import {
  InMemoryFeed,
  InMemoryLookup,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
  ScriptedStream,
} from '../../../support/in-memory-ports.ts';

const WINDOW_MS = 30_000;

interface Options {
  readonly recovery?: StreamRecovery;
  readonly feedEvents?: BankingEvent[];
  readonly lookupEvents?: BankingEvent[];
  readonly lookupDelayMs?: number;
  readonly maxBufferedEvents?: number;
  readonly maxBufferedBytes?: number;
  readonly recordedGaps?: readonly number[];
  /** Whether earlier events are being published (micro-batches wait only then). @default true */
  readonly busy?: boolean;
  /** @default WINDOW_MS */
  readonly windowMs?: number;
}

function setup(options: Options = {}) {
  const clock = new FakeClock();
  const stream = new ScriptedStream(clock);
  const feed = new InMemoryFeed(clock, options.feedEvents ?? [], { holdMs: 5_000 });
  const lookup = new InMemoryLookup(clock, options.lookupEvents ?? [], options.lookupDelayMs ?? 0);
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  const deadline = clock.now() + (options.windowMs ?? WINDOW_MS);
  const window = { deadline, signal: clock.deadline(deadline).signal };
  const gaps = new Set(options.recordedGaps ?? []);
  const recordedGaps = { includes: (sequence: number) => gaps.has(sequence) };
  const base = { clock, metrics, logger, random: () => 0.5, recordedGaps };
  const publishing = { busy: options.busy ?? true };
  const pages = new FeedReader(
    { ...base, feed },
    { minPollWindowMs: 500, pollBackoff: { baseMs: 200, capMs: 2_000 }, minEmptyPollIntervalMs: 1_000 },
    window,
  );
  const reader = new StreamReader(
    { ...base, stream, pages, lookup, publishing },
    {
      recovery: options.recovery ?? 'lookup',
      lingerMs: 100,
      minPollWindowMs: 500,
      reconnectBackoff: { baseMs: 200, capMs: 2_000 },
      maxBufferedEvents: options.maxBufferedEvents,
      maxBufferedBytes: options.maxBufferedBytes,
    },
    window,
  );
  return { clock, stream, feed, lookup, metrics, logger, reader, publishing, startedAt: clock.now() };
}

function message(events: BankingEvent[], recover: readonly number[] = []): StreamMessage {
  return {
    kind: 'events',
    lastEventId: events.at(-1)?.sequence_number ?? null,
    events: events.map((event) => ({ event, needsRecovery: recover.includes(event.sequence_number) })),
  };
}

function sequences(read: Awaited<ReturnType<StreamReader['next']>>): number[] {
  if (read.kind !== 'events') throw new Error(`expected events, got ${JSON.stringify(read)}`);
  return read.events.map((event) => event.sequence_number);
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => makeEvent(from + i));

describe('StreamReader', () => {
  it('while publishing is busy, hands out a micro-batch 100 ms after its first event arrived, or at once at 10 events', async () => {
    const { stream, reader, clock, startedAt } = setup();
    stream.connection(
      { message: message(range(1, 3)) },
      { afterMs: 50, message: message(range(4, 5)) },
      { afterMs: 500, message: message(range(6, 17)) },
    );

    expect(sequences(await reader.next(null))).toEqual([1, 2, 3, 4, 5]);
    expect(clock.now() - startedAt).toBe(100);
    expect(sequences(await reader.next(5))).toEqual(range(6, 17).map((e) => e.sequence_number));
    expect(clock.now() - startedAt).toBe(550);
    await reader.close();
  });

  it('hands out what is ready at once when nothing is being published, and when publishing settles', async () => {
    const { stream, reader, clock, publishing, startedAt } = setup({ busy: false });
    stream.connection(
      { afterMs: 30, message: message(range(1, 2)) },
      { afterMs: 10, message: message(range(3, 3)) },
    );

    expect(sequences(await reader.next(null))).toEqual([1, 2]);
    expect(clock.now() - startedAt).toBe(30);
    publishing.busy = true;
    const lingering = reader.next(2);
    void clock.sleep(25).then(() => {
      publishing.busy = false;
      reader.publishingSettled();
    });
    expect(sequences(await lingering)).toEqual([3]);
    expect(clock.now() - startedAt).toBe(55);
    await reader.close();
  });

  it.each([
    ['days (retry: 999999999)', 999_999_999, MAX_SERVER_RETRY_MS],
    ['nothing (retry: 0)', 0, MIN_RECONNECT_WAIT_MS],
  ])('honours a stream asking to wait %s only within bounds', async (_label, retryMs, expectedWaitMs) => {
    const { stream, reader, clock, logger, startedAt } = setup({
      windowMs: 3 * MAX_SERVER_RETRY_MS,
      busy: false,
    });
    stream
      .connection({ message: { kind: 'retry', retryMs } }, { message: message(range(1, 1)) }, { end: true })
      .connection({ message: message(range(2, 2)) });

    expect(sequences(await reader.next(null))).toEqual([1]);
    expect(sequences(await reader.next(1))).toEqual([2]);

    // Reopened after the bounded delay: neither given up for the run nor reopened in a hot loop.
    expect(stream.opens).toEqual([null, 1]);
    expect(clock.now() - startedAt).toBe(expectedWaitMs);
    expect(logger.lines.map((line) => line.message)).toContain(
      'The stream asked for a reconnection delay out of bounds; using the nearest bound',
    );
    await reader.close();
  });

  it('reopens after the last event received: at once after a clean end, with backoff after a failure', async () => {
    const { stream, reader, clock, metrics, startedAt } = setup();
    const dropped = new UpstreamHttpError('GET /events/stream failed before a response: ECONNRESET', {
      retryable: true,
    });
    stream
      .connection({ message: message(range(1, 2)) }, { afterMs: 200, end: true })
      .connection({ message: message(range(3, 3)) }, { afterMs: 200, error: dropped })
      .refuse(new UpstreamHttpError('429', { status: 429, retryable: true, retryAfterMs: 1_500 }))
      .connection({ message: message(range(4, 4)) });

    expect(sequences(await reader.next(null))).toEqual([1, 2]);
    expect(sequences(await reader.next(2))).toEqual([3]);
    expect(sequences(await reader.next(3))).toEqual([4]);

    expect(stream.opens).toEqual([null, 2, 3, 3]);
    // Retry-After (1.5 s) was the floor of the wait before the fourth connection.
    expect(clock.now() - startedAt).toBeGreaterThanOrEqual(1_500 + 100);
    expect(metrics.sum('StreamReconnects')).toBe(3);
    expect(metrics.sum('PollErrors')).toBe(2);
    await reader.close();
  });

  it('fetches an event the stream may carry differently, and keeps the order while it waits', async () => {
    const polled = makeEvent(2, { data: { transaction_id: 'tx-2', type: 'card' } });
    const { stream, reader, lookup } = setup({ lookupEvents: [polled], lookupDelayMs: 300 });
    const streamed = makeEvent(2, { id: polled.id, data: { transaction_id: 'tx-2', type: 'transaction' } });
    stream.connection({ message: message([makeEvent(1), streamed, makeEvent(3)], [2]) });

    const first = await reader.next(null);
    const read =
      sequences(first).length < 3
        ? [...sequences(first), ...sequences(await reader.next(1))]
        : sequences(first);

    expect(read).toEqual([1, 2, 3]);
    expect(lookup.byId).toEqual([polled.id]);
    await reader.close();
  });

  it('returns the recovered event, not the streamed one', async () => {
    const polled = makeEvent(1, { data: { transaction_id: 'tx-1', type: 'fee' } });
    const { stream, reader } = setup({ lookupEvents: [polled] });
    stream.connection({ message: message([makeEvent(1, { id: polled.id })], [1]) });

    const read = await reader.next(null);

    expect(read).toEqual({ kind: 'events', events: [polled], late: [] });
    await reader.close();
  });

  it.each([
    ['page recovery', 'page' as const, []],
    ['a lookup that finds nothing', 'lookup' as const, undefined],
  ])('reads the page from the cursor on %s', async (_name, recovery, lookupEvents) => {
    const polled = range(1, 4);
    const { stream, reader, feed, lookup } = setup({ recovery, feedEvents: polled, lookupEvents });
    stream.connection({ message: message(range(1, 3), [2]) });

    expect(sequences(await reader.next(null))).toEqual([1]);
    expect(sequences(await reader.next(1))).toEqual([2, 3, 4]);
    expect(feed.requests).toEqual([1]);
    expect(lookup.byId.length).toBe(recovery === 'lookup' ? 1 : 0);
    expect((await reader.next(4)).kind).toBe('caught-up');
    await reader.close();
  });

  it('reads a message it cannot read with a poll, then goes on with the stream', async () => {
    const { stream, reader, feed, logger } = setup({ feedEvents: range(1, 3) });
    stream.connection(
      { message: { kind: 'unreadable', lastEventId: 3, reason: 'its data is not JSON' } },
      { afterMs: 10, message: message(range(4, 4)) },
    );

    expect(sequences(await reader.next(null))).toEqual([1, 2, 3]);
    expect(sequences(await reader.next(3))).toEqual([4]);
    expect(feed.requests).toEqual([null]);
    expect(logger.lines.some((line) => line.message.includes('could not be read'))).toBe(true);
    await reader.close();
  });

  it('reads the events of an unreadable message with pages until the poll has them, though the poll lags the stream', async () => {
    const { stream, reader, feed, clock, logger } = setup();
    stream.connection(
      { message: { kind: 'unreadable', lastEventId: 3, reason: 'its data is not JSON' } },
      { afterMs: 10, message: message(range(4, 4)) },
    );
    // The poll index has events 1..3 only 12 s later: its long polls answer "nothing new" meanwhile.
    void clock.sleep(12_000).then(() => feed.append(...range(1, 3)));

    expect(sequences(await reader.next(null))).toEqual([1, 2, 3]);
    expect(sequences(await reader.next(3))).toEqual([4]);
    expect(feed.requests.length).toBeGreaterThan(1);
    expect(feed.requests.every((after) => after === null)).toBe(true);
    expect(logger.lines.some((line) => line.message.startsWith('The poll does not have the events'))).toBe(
      true,
    );
    await reader.close();
  });

  it('reconnects below the events of an unreadable message, never past them', async () => {
    const { stream, reader, feed, clock } = setup();
    stream
      .connection(
        { message: message(range(1, 2)) },
        { message: { kind: 'unreadable', lastEventId: 5, reason: 'its data is not JSON' } },
        { afterMs: 10, error: new UpstreamHttpError('reset', { retryable: true }) },
      )
      .connection({ message: message(range(3, 6)) });
    void clock.sleep(8_000).then(() => feed.append(...range(1, 5)));

    expect(sequences(await reader.next(null))).toEqual([1, 2, 3, 4, 5]);
    expect(sequences(await reader.next(5))).toEqual([6]);
    expect(stream.opens).toEqual([null, 2]);
    await reader.close();
  });

  it.each([
    ['the service has no stream (406)', new UpstreamHttpError('406', { status: 406, retryable: false })],
    ['the stream breaks its format', new PayloadValidationError('GET /events/stream: not valid UTF-8')],
  ])('reads pages for the rest of the window when %s', async (_name, error) => {
    const { stream, reader, feed, logger } = setup({ feedEvents: range(1, 3) });
    stream.refuse(error);

    expect(sequences(await reader.next(null))).toEqual([1, 2, 3]);
    expect((await reader.next(3)).kind).toBe('caught-up');
    expect(stream.opens).toEqual([null]);
    expect(feed.requests).toEqual([null, 3]);
    expect(logger.lines.some((line) => line.message.startsWith('Reading pages instead of the stream'))).toBe(
      true,
    );
  });

  it('throws what cannot be retried', async () => {
    const refused = new AuthenticationError('GET /events/stream: refused a freshly issued token');
    const { stream, reader } = setup();
    stream.refuse(refused);

    await expect(reader.next(null)).rejects.toBe(refused);
  });

  it('says caught up once the stream has been quiet for a second, once per quiet spell', async () => {
    const { stream, reader, clock, startedAt } = setup();
    stream.connection({ message: message(range(1, 1)) }, { afterMs: 5_000, message: message(range(2, 2)) });

    expect(sequences(await reader.next(null))).toEqual([1]);
    expect(await reader.next(1)).toEqual({ kind: 'caught-up' });
    expect(clock.now() - startedAt).toBe(1_000);
    expect(sequences(await reader.next(1))).toEqual([2]);
    expect(await reader.next(2)).toEqual({ kind: 'caught-up' });
    await reader.close();
  });

  it('hands over what is ready at the window close without lingering, then closes and leaves the stream', async () => {
    const { stream, reader, clock, startedAt } = setup();
    stream.connection({ afterMs: WINDOW_MS - 50, message: message(range(1, 2)) });

    expect(sequences(await reader.next(null))).toEqual([1, 2]);
    expect(clock.now() - startedAt).toBe(WINDOW_MS);
    expect(await reader.next(2)).toEqual({ kind: 'closed', upstreamUnavailable: false });
    await reader.close();
    expect(stream.closedByReader).toBe(1);
  });

  it('gives up when no reconnection fits before the deadline, as an unavailable upstream', async () => {
    const { stream, reader, metrics } = setup();
    for (let i = 0; i < 100; i += 1)
      stream.refuse(new UpstreamHttpError('503', { status: 503, retryable: true }));

    expect(await reader.next(null)).toEqual({ kind: 'closed', upstreamUnavailable: true });
    expect(reader.stats.polls).toBe(0);
    expect(reader.lastError).toBeInstanceOf(UpstreamHttpError);
    expect(metrics.sum('PollErrors')).toBe(stream.opens.length);
  });

  it('passes on a late event that fills a recorded gap and drops what it read already', async () => {
    const { stream, reader, metrics } = setup({ recordedGaps: [2] });
    stream.connection(
      { message: message([makeEvent(1), makeEvent(3)]) },
      { afterMs: 500, message: message([makeEvent(1), makeEvent(2), makeEvent(4)]) },
    );

    expect(sequences(await reader.next(null))).toEqual([1, 3]);
    const read = await reader.next(3);

    expect(read.kind === 'events' && read.late.map((event) => event.sequence_number)).toEqual([2]);
    expect(sequences(read)).toEqual([4]);
    expect(metrics.sum('LateEvents')).toBe(1);
    await reader.close();
  });

  it('stops taking messages off the connection while the events buffered take its bytes, and hands them out within the bytes asked for', async () => {
    const each = eventFootprint(range(1, 1)[0]!);
    const { stream, reader } = setup({ maxBufferedBytes: 5 * each, busy: false });
    stream.connection(
      ...Array.from({ length: 10 }, (_, i) => ({ message: message(range(i * 3 + 1, i * 3 + 3)) })),
    );

    const room = { bytes: 2 * each, events: 100 };
    const first = await reader.next(null, room);
    // Two messages fill the buffer past 5 events' bytes; the third stays on the connection.
    expect(stream.pulled).toBeLessThanOrEqual(2);
    expect(sequences(first)).toEqual([1, 2]);
    const all = [...sequences(first)];
    while (all.length < 30) all.push(...sequences(await reader.next(all.at(-1)!, room)));

    expect(all).toEqual(range(1, 30).map((event) => event.sequence_number));
    await reader.close();
  });

  it('stops taking messages off the connection while its buffer is full', async () => {
    const { stream, reader } = setup({ maxBufferedEvents: 5 });
    stream.connection(
      ...Array.from({ length: 10 }, (_, i) => ({ message: message(range(i * 3 + 1, i * 3 + 3)) })),
    );

    const first = await reader.next(null);
    expect(stream.pulled).toBeLessThanOrEqual(3);
    const all = [...sequences(first)];
    while (all.length < 30) all.push(...sequences(await reader.next(all.at(-1)!)));

    expect(all).toEqual(range(1, 30).map((event) => event.sequence_number));
    await reader.close();
  });
});
