/**
 * The no-loss invariant as a property: fast-check draws a feed (some events invalid, some too
 * large for the bus) and a schedule of faults (failed polls, rejected entries, refused PutEvents,
 * failed checkpoint writes, a crash after a random number of port calls), runs poll cycles over
 * the in-memory ports and a virtual clock until the schedule is spent and the feed caught up, and
 * checks the same invariant as the fault matrix (`delivery-invariant.ts`) on the same kind of
 * timeline. A failure prints the seed and the shrunk schedule.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { MemoryCheckpointStore } from '../../functions/adapters/local/memory-checkpoint-store.ts';
import { ClaimCheckPublisher } from '../../functions/core/claim-check-publisher.ts';
import { PublishError, UpstreamHttpError } from '../../functions/core/errors.ts';
import { type BankingEvent, type FeedPage, parsePollResponse } from '../../functions/core/event-model.ts';
import { runPollCycle } from '../../functions/core/poll-cycle.ts';
import type {
  CheckpointState,
  CheckpointStore,
  ClaimCheckLocation,
  ClaimCheckStore,
  CommitRequest,
  EntryOutcome,
  EventFeed,
  EventPublisher,
  LeaseGrant,
  LeaseRequest,
  PollRequest,
  ReleaseOptions,
  StartRequest,
} from '../../functions/core/ports.ts';
import type { TimelineEntry } from './aws-fault-proxy.ts';
import { type BankEvent, checkDeliveryInvariant, type InvariantReport } from './delivery-invariant.ts';
import { FakeClock } from './fake-clock.ts';
import { InMemoryPublisher, RecordingLogger, RecordingMetrics } from './in-memory-ports.ts';

/** One drawn case: the feed and what goes wrong, by the index of the call it hits. */
export interface FaultSchedule {
  readonly events: number;
  readonly invalid: readonly number[];
  readonly oversize: readonly number[];
  readonly pageLimit: number;
  readonly failedPolls: readonly number[];
  readonly rejectedEntries: readonly { readonly sequence: number; readonly times: number }[];
  readonly refusedRequests: readonly number[];
  readonly failedCommits: readonly number[];
  /** Port calls after which the process "dies" (every port hangs), one per crash. */
  readonly crashes: readonly number[];
}

const scheduleArbitrary: fc.Arbitrary<FaultSchedule> = fc.integer({ min: 1, max: 60 }).chain((events) =>
  fc.record({
    events: fc.constant(events),
    invalid: fc.uniqueArray(fc.integer({ min: 1, max: events }), { maxLength: 4 }),
    oversize: fc.uniqueArray(fc.integer({ min: 1, max: events }), { maxLength: 3 }),
    pageLimit: fc.integer({ min: 1, max: 25 }),
    failedPolls: fc.uniqueArray(fc.integer({ min: 0, max: 12 }), { maxLength: 4 }),
    rejectedEntries: fc.array(
      fc.record({ sequence: fc.integer({ min: 1, max: events }), times: fc.integer({ min: 1, max: 6 }) }),
      { maxLength: 4 },
    ),
    refusedRequests: fc.uniqueArray(fc.integer({ min: 0, max: 15 }), { maxLength: 4 }),
    failedCommits: fc.uniqueArray(fc.integer({ min: 0, max: 10 }), { maxLength: 3 }),
    crashes: fc.array(fc.integer({ min: 1, max: 80 }), { maxLength: 2 }),
  }),
);

/** Calls of each kind so far, over every cycle of a case: the schedule's indexes count these. */
interface FaultCounters {
  polls: number;
  requests: number;
  commits: number;
}

/** Shared by every port of one cycle: counts calls, and after the crash point every call hangs. */
class Process {
  calls = 0;
  dead = false;
  constructor(
    private readonly crashAfter: number | undefined,
    private readonly onCrash: () => void,
  ) {}

  /** Runs `call` unless the process died; a dead process never answers. */
  run<T>(call: () => Promise<T>): Promise<T> {
    if (this.dead) return new Promise<T>(() => {});
    this.calls += 1;
    if (this.crashAfter !== undefined && this.calls > this.crashAfter) {
      this.dead = true;
      this.onCrash();
      return new Promise<T>(() => {});
    }
    return call();
  }
}

/** The bank: pages by cursor from a fixed list of parsed events. */
class ScheduledFeed implements EventFeed {
  constructor(
    private readonly events: readonly BankingEvent[],
    private readonly schedule: FaultSchedule,
    private readonly counters: FaultCounters,
    private readonly process: Process,
    private readonly clock: FakeClock,
  ) {}

  poll(request: PollRequest): Promise<FeedPage> {
    return this.process.run(async () => {
      request.signal.throwIfAborted();
      // Counted across cycles, like every scheduled fault: each one happens once, not once per run.
      const index = this.counters.polls++;
      if (this.schedule.failedPolls.includes(index)) {
        throw new UpstreamHttpError('injected 503', { status: 503, retryable: true });
      }
      const after = request.after ?? 0;
      const page = this.events
        .filter((event) => event.sequence_number > after)
        .slice(0, this.schedule.pageLimit);
      if (page.length === 0) await this.clock.sleep(5_000, request.signal);
      return { events: page, lastSequenceNumber: page.at(-1)?.sequence_number ?? after };
    });
  }
}

/** The bus: the shared sink, with scheduled refusals; records what it accepted on the timeline. */
class ScheduledBus implements EventPublisher {
  readonly limits = { maxEntriesPerBatch: 10, maxBatchBytes: 4_000 };
  constructor(
    private readonly sink: InMemoryPublisher,
    private readonly schedule: FaultSchedule,
    private readonly counters: FaultCounters,
    private readonly process: Process,
    private readonly timeline: Timeline,
  ) {}

  entrySize(event: BankingEvent): number {
    return this.sink.entrySize(event);
  }

  send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    return this.process.run(async () => {
      if (this.schedule.refusedRequests.includes(this.counters.requests++)) {
        throw new PublishError('injected throttle', { awsError: 'ThrottlingException', retryable: true });
      }
      const outcomes = await this.sink.send(batch, signal);
      batch.forEach((event, index) => {
        if (outcomes[index]?.ok)
          this.timeline.push({ kind: 'accepted', detailType: event.type, detail: event.detail });
      });
      return outcomes;
    });
  }
}

/** The checkpoint item: shared across cycles; scheduled write failures; commits on the timeline. */
class ScheduledStore implements CheckpointStore {
  constructor(
    private readonly store: MemoryCheckpointStore,
    private readonly counters: FaultCounters,
    private readonly schedule: FaultSchedule,
    private readonly process: Process,
    private readonly timeline: Timeline,
  ) {}

  acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    return this.process.run(() => this.store.acquireLease(request));
  }

  commit(request: CommitRequest): Promise<void> {
    return this.process.run(async () => {
      this.timeline.push({ kind: 'commit-requested', checkpoint: request.sequenceNumber });
      if (this.schedule.failedCommits.includes(this.counters.commits++)) {
        throw new PublishError('injected ProvisionedThroughputExceededException', { retryable: true });
      }
      await this.store.commit(request);
      this.timeline.push({ kind: 'commit-applied', checkpoint: request.sequenceNumber });
    });
  }

  recordStart(request: StartRequest): Promise<void> {
    return this.process.run(() => this.store.recordStart(request));
  }

  releaseLease(owner: string, options?: ReleaseOptions): Promise<void> {
    return this.process.run(() => this.store.releaseLease(owner, options));
  }

  read(): Promise<CheckpointState> {
    return this.process.run(() => this.store.read());
  }
}

class MemoryClaimChecks implements ClaimCheckStore {
  readonly objects = new Map<string, string>();
  async put(key: string, body: string): Promise<ClaimCheckLocation> {
    this.objects.set(key, body);
    return { bucket: 'claims', key };
  }
}

/** A timeline entry before the timeline numbers it (distributes over the union's members). */
type Unnumbered<T> = T extends TimelineEntry ? Omit<T, 'at'> : never;

class Timeline {
  readonly entries: TimelineEntry[] = [];
  push(entry: Unnumbered<TimelineEntry>): void {
    this.entries.push({ ...entry, at: this.entries.length + 1 } as TimelineEntry);
  }
}

/** The bank's events for a schedule: parsed from one answer, so invalid ones are real quarantines. */
function bankEvents(schedule: FaultSchedule): BankingEvent[] {
  const raw = Array.from({ length: schedule.events }, (_, index) => {
    const sequence = index + 1;
    return {
      id: `e-${sequence}`,
      program_id: 'p-1',
      sequence_number: sequence,
      created_dt: '2026-11-22T00:00:00.000+00:00',
      // A type of the wrong type makes the event invalid, at its own number.
      type: schedule.invalid.includes(sequence) ? 42 : 'TRANSACTION',
      data: { note: schedule.oversize.includes(sequence) ? 'x'.repeat(5_000) : `n${sequence}` },
    };
  });
  const value = { data: raw };
  return [
    ...parsePollResponse({ text: JSON.stringify(value), value }, { source: 'GET /events', status: 200 })
      .events,
  ];
}

/** Runs cycles until the schedule is spent and the feed caught up; returns the invariant report. */
export async function runSchedule(schedule: FaultSchedule): Promise<InvariantReport & { caughtUp: boolean }> {
  const clock = new FakeClock();
  const events = bankEvents(schedule);
  const sink = new InMemoryPublisher({ maxEntriesPerBatch: 10, maxBatchBytes: 4_000 });
  const store = new MemoryCheckpointStore({ now: () => clock.now() });
  const timeline = new Timeline();
  const counters: FaultCounters = { polls: 0, requests: 0, commits: 0 };
  const claimChecks = new MemoryClaimChecks();
  const crashes = [...schedule.crashes];
  let dead = 0;
  for (let cycle = 0; cycle < 20; cycle += 1) {
    const process = new Process(crashes.shift(), () => {
      dead += 1;
    });
    const metrics = new RecordingMetrics();
    const logger = new RecordingLogger();
    const bus = new ScheduledBus(sink, schedule, counters, process, timeline);
    const publisher = new ClaimCheckPublisher(
      { inner: bus, store: claimChecks, metrics, logger },
      { maxEntryBytes: 3_000 },
    );
    const deps = {
      feed: new ScheduledFeed(events, schedule, counters, process, clock),
      publisher,
      checkpoints: new ScheduledStore(store, counters, schedule, process, timeline),
      clock,
      metrics,
      logger,
      random: () => 0.5,
    };
    const crashedBefore = dead;
    const outcome = await Promise.race([
      runPollCycle(deps, {
        program: 'p',
        owner: `run-${cycle}`,
        remainingMs: 30_000,
        publish: { maxAttempts: 3 },
      }).then(
        () => 'completed' as const,
        () => 'failed' as const,
      ),
      // A dead process never settles its cycle: the harness moves on once it has died.
      waitUntil(clock, () => dead > crashedBefore).then(() => 'crashed' as const),
    ]);
    if (outcome === 'failed') timeline.push({ kind: 'mark', label: 'failed' });
    // What the dead process had in flight (a PutEvents the bus still answered) lands before the
    // mark: the mark closes the crash's window, so those events count as caught in flight.
    if (outcome === 'crashed') timeline.push({ kind: 'mark', label: 'crash' });
    // A dead holder's lease frees itself at its expiry.
    if (outcome === 'crashed') clock.advance(60_000);
    const state = await store.read();
    const last = events.at(-1)!.sequence_number;
    if (crashes.length === 0 && outcome === 'completed' && state.checkpoint === last) break;
  }
  const finalCheckpoint = (await store.read()).checkpoint;
  const feed: BankEvent[] = events.map((event) => ({
    id: event.id,
    sequenceNumber: event.sequence_number,
    ...(event.invalid === undefined ? {} : { quarantineFingerprint: event.invalid.fingerprint }),
  }));
  const report = checkDeliveryInvariant({
    feed,
    delivered: sink.accepted.map((event) => ({
      detailType: event.type,
      detail: JSON.parse(event.detail) as Record<string, unknown>,
    })),
    timeline: timeline.entries,
    finalCheckpoint,
  });
  return { ...report, caughtUp: finalCheckpoint === events.at(-1)!.sequence_number };
}

/** Resolves once `condition` holds, checked as virtual time passes. */
async function waitUntil(clock: FakeClock, condition: () => boolean): Promise<void> {
  while (!condition()) await clock.sleep(50);
}

/**
 * Checks the property for `numRuns` drawn schedules. The seed is fixed by default (the run is
 * the same every time); FC_SEED explores others. Every failure names its seed.
 */
export async function assertNoLossProperty(options: { numRuns: number; seed: number }): Promise<void> {
  await fc.assert(
    fc.asyncProperty(scheduleArbitrary, async (schedule) => {
      const report = await runSchedule(schedule);
      const context = `seed ${options.seed}; schedule ${JSON.stringify(schedule)}`;
      expect(report.lost, context).toEqual([]);
      expect(report.violations, context).toEqual([]);
      expect(report.caughtUp, context).toBe(true);
    }),
    { numRuns: options.numRuns, seed: options.seed },
  );
}
