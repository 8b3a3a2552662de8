/**
 * A cycle on a thread it shares with other programs' cycles (a worker's): it takes its turn
 * (`CpuTurns`) before each page is parsed and before each request to the bus, and reads a page at
 * most a step's bytes at once, an event longer than a step still whole. Without turns (a single
 * program's run) nothing of this applies.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../functions/adapters/local/memory-checkpoint-store.ts';
import type { BankingEvent, FeedPage } from '../../../functions/core/banking-event.ts';
import { PageTooLargeError } from '../../../functions/core/errors.ts';
import { FairCpuTurns } from '../../../functions/core/fleet/cpu-turns.ts';
import { runPollCycle } from '../../../functions/core/poll-cycle.ts';
import type { CpuTurns, EntryOutcome, EventFeed, PollRequest } from '../../../functions/core/ports.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import {
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

const STEP_BYTES = 8 * 1024;

/** The worker's turns, one a pass of the event loop, logging each turn as it is given. */
class LoggedTurns implements CpuTurns {
  readonly stepBytes = STEP_BYTES;
  readonly #turns: CpuTurns;
  constructor(
    private readonly log: string[],
    clock: FakeClock,
  ) {
    // A pass of the real event loop, time standing still meanwhile (as it does on a real clock).
    const defer = (serve: () => void) =>
      void clock.during(
        () =>
          new Promise<void>((resolve) =>
            setImmediate(() => {
              serve();
              resolve();
            }),
          ),
      );
    this.#turns = new FairCpuTurns(defer).of('default');
  }
  async take(): Promise<void> {
    await this.#turns.take();
    this.log.push('turn');
  }
}

/**
 * A feed of `events` that answers as much as the room asked for holds (the whole rest without a
 * room), takes the turn before it "parses", and refuses a room smaller than its next event.
 */
class SteppedFeed implements EventFeed {
  readonly requests: Array<{ maxBytes: number | undefined; turn: boolean }> = [];
  constructor(
    private readonly events: readonly BankingEvent[],
    private readonly log: string[],
  ) {}

  async poll(request: PollRequest): Promise<FeedPage> {
    request.signal.throwIfAborted();
    this.requests.push({ maxBytes: request.maxBytes, turn: request.cpuTurn !== undefined });
    const after = request.after ?? 0;
    const rest = this.events.filter((event) => event.sequence_number > after);
    const page: BankingEvent[] = [];
    let bytes = 0;
    for (const event of rest) {
      bytes += event.detail.length;
      if (request.maxBytes !== undefined && bytes > request.maxBytes) break;
      page.push(event);
    }
    if (rest.length > 0 && page.length === 0)
      throw new PageTooLargeError('no event ends within the bytes read');
    await request.cpuTurn?.();
    this.log.push('parse');
    if (page.length === 0) {
      // Caught up: the run is over.
      request.signal.throwIfAborted();
      return { events: [], lastSequenceNumber: after, timedOut: true };
    }
    return { events: page, lastSequenceNumber: page.at(-1)!.sequence_number };
  }
}

class LoggedPublisher extends InMemoryPublisher {
  constructor(private readonly log: string[]) {
    super();
  }
  override async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    this.log.push('send');
    return super.send(batch, signal);
  }
}

function setup(events: readonly BankingEvent[], turns: boolean) {
  const clock = new FakeClock();
  const log: string[] = [];
  const feed = new SteppedFeed(events, log);
  const publisher = new LoggedPublisher(log);
  const deps = {
    feed,
    publisher,
    checkpoints: new MemoryCheckpointStore({ now: () => clock.now() }),
    clock,
    metrics: new RecordingMetrics(),
    logger: new RecordingLogger(),
    random: () => 0.5,
    ...(turns ? { cpuTurns: new LoggedTurns(log, clock) } : {}),
  };
  return { log, feed, publisher, deps };
}

const invocation = { program: 'default', owner: 'req-1', remainingMs: 10_000 };

describe('a cycle on a shared thread', () => {
  it('takes its turn before parsing each page and before each request to the bus, and publishes everything', async () => {
    const events = Array.from({ length: 120 }, (_, i) => makeEvent(i + 1));
    const { log, feed, publisher, deps } = setup(events, true);

    const summary = await runPollCycle(deps, invocation);

    expect(summary.checkpoint).toBe(120);
    expect(publisher.accepted.map((event) => event.sequence_number)).toEqual(
      events.map((e) => e.sequence_number),
    );
    expect(feed.requests.every((request) => request.turn)).toBe(true);
    const steps = log.filter((entry) => entry !== 'turn');
    expect(steps.filter((entry) => entry === 'send').length).toBe(publisher.batches.length);
    // Every parse and every send comes right after a turn of its own.
    log.forEach((entry, index) => {
      if (entry !== 'turn') expect(log[index - 1], `${entry} at ${index}`).toBe('turn');
    });
  });

  it('reads a page at most a step at once, and an event longer than a step whole', async () => {
    const long = makeEvent(41, { data: { note: 'x'.repeat(2 * STEP_BYTES) } });
    const events = [
      ...Array.from({ length: 40 }, (_, i) => makeEvent(i + 1)),
      long,
      ...Array.from({ length: 40 }, (_, i) => makeEvent(i + 42)),
    ];
    const { feed, publisher, deps } = setup(events, true);

    const summary = await runPollCycle(deps, invocation);

    expect(summary.checkpoint).toBe(81);
    expect(publisher.accepted).toHaveLength(81);
    const bounded = feed.requests.filter((request) => request.maxBytes !== undefined);
    expect(bounded.length).toBeGreaterThan(0);
    expect(Math.max(...bounded.map((request) => request.maxBytes!))).toBeLessThanOrEqual(STEP_BYTES);
    // The long event: refused within a step, then read as far as the feed reads at all.
    expect(feed.requests.some((request) => request.maxBytes === undefined)).toBe(true);
  });

  it('takes no turn and asks for no step without turns: a single program has the thread to itself', async () => {
    const events = Array.from({ length: 30 }, (_, i) => makeEvent(i + 1));
    const { log, feed, deps } = setup(events, false);

    await runPollCycle(deps, invocation);

    expect(log).not.toContain('turn');
    expect(feed.requests.every((request) => !request.turn)).toBe(true);
    // Read as far as the room goes: no step.
    expect(feed.requests[0]!.maxBytes).toBeGreaterThan(STEP_BYTES);
  });
});
