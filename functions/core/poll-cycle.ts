import type { BackoffOptions } from './backoff.ts';
import { CheckpointCommitter } from './checkpoint-committer.ts';
import { CheckpointTracker } from './checkpoint-tracker.ts';
import { CycleBudget } from './cycle-budget.ts';
import { completedRecord, failedRecord } from './cycle-record.ts';
import {
  ConfigurationError,
  DeadlineExceededError,
  EventTooLargeError,
  FeedCursorError,
  FeedProgramMismatchError,
  PublishError,
  StartPositionIncompleteError,
} from './errors.ts';
import { type BankingEvent, findSequenceGaps } from './event-model.ts';
import { FeedReader, type FeedSource } from './feed-reader.ts';
import { GapLedger } from './gap-ledger.ts';
import { GapRepair, type GapRepairOptions } from './gap-repair.ts';
import { takeLease } from './lease-handover.ts';
import type {
  CheckpointStore,
  Clock,
  CycleLogger,
  CycleRecord,
  EventFeed,
  EventLookup,
  EventPublisher,
  EventStream,
  LeaseGrant,
  MetricsSink,
  OpenGap,
} from './ports.ts';
import { PublishPipeline, type PublishPipelineOptions, type PublishReport } from './publish-pipeline.ts';
import {
  fastForward,
  formatStartPosition,
  initialCursor,
  type StartPosition,
  type StartPositionOptions,
} from './start-position.ts';
import { StreamReader, type StreamRecovery } from './stream-reader.ts';

export interface PollCycleDeps {
  readonly feed: EventFeed;
  /** Single-event lookups: gap repair, and recovery of streamed events. Without them, neither. */
  readonly lookup?: EventLookup;
  /** The feed as a stream; required when `feedMode` is `stream`. */
  readonly stream?: EventStream;
  readonly publisher: EventPublisher;
  readonly checkpoints: CheckpointStore;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  /** Source of jitter; injectable for deterministic tests. @default Math.random */
  readonly random?: () => number;
}

export interface PollCycleOptions {
  /** Names the checkpoint row and the metrics dimension. */
  readonly program: string;
  /**
   * Lease owner, unique per invocation: the request id and a random part (`uniqueLeaseOwner`), so
   * an asynchronous invocation delivered twice with one request id cannot share a lease.
   */
  readonly owner: string;
  /** Time left in the invocation at start (`context.getRemainingTimeInMillis()`). */
  readonly remainingMs: number;
  /** Time kept back at the end; never more than a quarter of `remainingMs`. @default 10_000 */
  readonly safetyMarginMs?: number;
  /** No new poll starts with less than this left. @default 2_000 */
  readonly minPollWindowMs?: number;
  /** Added to the lease expiry for clock skew between invocations; capped at 5 s. @default 5_000 */
  readonly leaseSkewMs?: number;
  /**
   * How long to wait for another invocation to hand the lease over before giving up with
   * `lease-busy` (the schedule overlaps runs so the next one is waiting at the hand-over).
   * @default 0
   */
  readonly leaseWaitMs?: number;
  /** How often the lease is looked at while waiting for it. @default 100 */
  readonly leaseCheckIntervalMs?: number;
  /** Waits after a failed poll that gave no `Retry-After`. @default { baseMs: 200, capMs: 20_000 } */
  readonly pollBackoff?: BackoffOptions;
  /** Two quick answers without events in a row: the next poll waits until this long after the last. @default 1_000 */
  readonly minEmptyPollIntervalMs?: number;
  readonly publish?: PublishPipelineOptions;
  /** Stops polling (not publishing) when aborted: Ctrl-C in local mode. */
  readonly stopSignal?: AbortSignal;
  /** Called each time the feed says nothing is new (`run --until-caught-up` stops there). */
  readonly onCaughtUp?: () => void;
  /**
   * Where a program's first run starts reading; applied once and recorded before any event is
   * read to be published. @default the beginning of the feed
   */
  readonly startPosition?: StartPositionOptions;
  /** How events are read: long polls of `GET /events`, or `GET /events/stream`. @default 'poll' */
  readonly feedMode?: FeedMode;
  readonly stream?: StreamModeOptions;
  /** Looking up skipped sequence numbers (needs `deps.lookup`). */
  readonly gapRepair?: GapRepairOptions;
}

export type FeedMode = 'poll' | 'stream';

export interface StreamModeOptions {
  /** How streamed events that may differ from the poll's are fetched. @default 'page' */
  readonly recovery?: StreamRecovery;
  /**
   * While earlier events are being published, a micro-batch waits for 10 events or this long
   * after its first arrived; with nothing being published it goes at once. @default 100
   */
  readonly lingerMs?: number;
  /** Waits before reconnecting after a failure. @default { baseMs: 200, capMs: 20_000 } */
  readonly reconnectBackoff?: BackoffOptions;
}

export type StopReason = 'deadline' | 'stopped' | 'upstream-unavailable' | 'lease-busy';

export interface CycleSummary {
  readonly program: string;
  readonly status: 'completed' | 'lease-busy';
  /** Events this invocation published (accepted by the bus). */
  readonly published: number;
  /** Events the feed returned, duplicates included. */
  readonly received: number;
  /** Polls the feed answered (gateway timeouts included). */
  readonly polls: number;
  readonly pollErrors: number;
  /** Polls that ended with 408 or 504. */
  readonly pollTimeouts: number;
  /** Last committed sequence number, or `null` when none exists (or the lease was busy). */
  readonly checkpoint: number | null;
  readonly startCheckpoint: number | null;
  /** Seconds between now and the newest published event; 0 when caught up; null when unknown. */
  readonly lagSeconds: number | null;
  readonly durationMs: number;
  readonly stopReason: StopReason;
}

/** Counts and logs the quarantined events of a page (their text goes to the bus, never to a log). */
function reportInvalidEvents({ metrics, logger }: PollCycleDeps, fresh: readonly BankingEvent[]): void {
  const invalid = fresh.filter((event) => event.invalid !== undefined);
  if (invalid.length === 0) return;
  metrics.add('InvalidEvents', 'Count', invalid.length);
  for (const event of invalid) {
    logger.warn('An event failed validation; publishing it as invalid_event for the quarantine queue', {
      position: event.sequence_number,
      sequenceNumber: event.invalid!.sequenceNumber,
      field: event.invalid!.field,
      error: event.invalid!.message,
      fingerprint: event.invalid!.fingerprint,
    });
  }
}

/** The lease release must be answered this long before Lambda ends the invocation. */
const RELEASE_RESERVE_MS = 250;

/**
 * Pages being published while the next is polled. Publishing a page takes longer than polling
 * one (ten PutEvents round trips in waves of the gate's concurrency), so a few must overlap for
 * the poll loop never to wait; the benchmark measured 2 → 4 raising the drain rate by about 8 %.
 * More would only hold more events in memory (and in doubt after a crash).
 */
const MAX_PAGES_IN_FLIGHT = 4;
/**
 * Accepted sequence numbers past the last checkpoint written, at most, before the next page is
 * read: what a run cut short sends again. Writes go out every 100 ms, so a catch-up at 3 000
 * events/s stays far below it; a write that hangs (DynamoDB slow, the lease being taken over)
 * stops the reading instead of letting duplicates grow with its duration. Large pages raise it
 * to twice the pages in flight, so that it never throttles a healthy catch-up.
 */
export const MAX_UNCOMMITTED = 1_000;

const DEFAULTS = {
  safetyMarginMs: 10_000,
  minPollWindowMs: 2_000,
  leaseSkewMs: 5_000,
  leaseCheckIntervalMs: 100,
  pollBackoff: { baseMs: 200, capMs: 20_000 },
  minEmptyPollIntervalMs: 1_000,
  streamRecovery: 'page',
  streamLingerMs: 100,
} as const;

/** How often young gaps are looked at for a re-check that is due (most looks find none due). */
const GAP_RECHECK_TICK_MS = 1_000;

/**
 * One invocation: take the lease, then poll → publish → checkpoint until the budget runs out.
 * The checkpoint only ever moves to the contiguous prefix of accepted events, so a failure at
 * any point loses nothing: the next invocation starts from the last committed number. Every timer
 * the cycle starts is cleared before it returns.
 */
export async function runPollCycle(deps: PollCycleDeps, options: PollCycleOptions): Promise<CycleSummary> {
  if (options.feedMode === 'stream' && deps.stream === undefined) {
    throw new ConfigurationError('Stream mode needs an event stream (deps.stream)', { option: 'feedMode' });
  }
  const budget = new CycleBudget(
    deps.clock,
    options.remainingMs,
    options.safetyMarginMs ?? DEFAULTS.safetyMarginMs,
  );
  try {
    const leaseSkewMs = Math.min(options.leaseSkewMs ?? DEFAULTS.leaseSkewMs, 5_000);
    const minPollWindowMs = options.minPollWindowMs ?? DEFAULTS.minPollWindowMs;
    // Credentials and token are fetched while the lease is awaited, not after the hand-over.
    const prepared = deps.feed.prepare?.(budget.deadlineSignal).catch(() => undefined);
    // The lease lasts until Lambda would end this invocation, plus skew: a crashed run frees it soon.
    const lease = await takeLease(deps, {
      owner: options.owner,
      expiresAt: budget.end + leaseSkewMs,
      // Waiting past the point where no poll fits would only take the lease to give it back.
      waitMs: Math.min(options.leaseWaitMs ?? 0, budget.untilDeadline() - minPollWindowMs),
      checkIntervalMs: options.leaseCheckIntervalMs ?? DEFAULTS.leaseCheckIntervalMs,
      signal: budget.deadlineSignal,
    });
    if (!lease.acquired) {
      await prepared;
      return leaseBusy(deps, options, budget, lease);
    }
    return await new PollCycle(deps, options, budget, lease).run();
  } finally {
    budget.dispose();
  }
}

function leaseBusy(
  { metrics, logger }: PollCycleDeps,
  options: PollCycleOptions,
  budget: CycleBudget,
  lease: Extract<LeaseGrant, { acquired: false }>,
): CycleSummary {
  metrics.add('LeaseBusy', 'Count', 1);
  logger.info('Another invocation holds the lease and did not hand it over; not polling', {
    leaseHolder: lease.holder,
    leaseExpiresAt: new Date(lease.expiresAt).toISOString(),
  });
  return {
    program: options.program,
    status: 'lease-busy',
    published: 0,
    received: 0,
    polls: 0,
    pollErrors: 0,
    pollTimeouts: 0,
    checkpoint: null,
    startCheckpoint: null,
    lagSeconds: null,
    durationMs: budget.elapsed(),
    stopReason: 'lease-busy',
  };
}

/** The cycle once the lease is held: its state, and the steps that change it. */
class PollCycle {
  readonly #deps: PollCycleDeps;
  readonly #options: PollCycleOptions;
  readonly #budget: CycleBudget;
  /** Long polls: the reader in poll mode, and the page reads of the stream reader. */
  readonly #pages: FeedReader;
  #reader: FeedSource;
  /** The reader in stream mode, told when publishing settles (its micro-batches wait on that). */
  #stream: StreamReader | undefined;
  readonly #repair: GapRepair | undefined;
  /** Stops polling: the deadline, a failure, or Ctrl-C. */
  readonly #pollSignal: AbortSignal;
  /** The running loop of re-checks of young gaps, if any. */
  #rechecking: Promise<void> | undefined;
  /** Set when the pump is over: the re-check loop stops with it. */
  readonly #pumpOver = new AbortController();
  readonly #pipeline: PublishPipeline;
  #committer: CheckpointCommitter;
  /** The contiguous prefix of accepted events, over every page of the run. */
  #tracker: CheckpointTracker;
  readonly #startCheckpoint: number | null;
  /** The lease as granted: the row's state when this run took it. */
  readonly #lease: Extract<LeaseGrant, { acquired: true }>;
  /** The `program_id` this row's feed serves, once known. */
  #feedProgramId: string | null;
  /** Skipped sequence numbers below the checkpoint, so a late event for one of them is published. */
  readonly #gaps: GapLedger;
  /** Aborted when the run must stop early (a publish or a checkpoint write failed). */
  readonly #halt = new AbortController();
  #failure: { readonly error: unknown } | undefined;
  #published = 0;
  #lagSeconds: number | null = null;
  #newest: BankingEvent | undefined;
  /**
   * The highest sequence number seen when the feed last said nothing was new (`null` inside: it
   * had nothing at all): once everything up to it is accepted, the run is caught up.
   */
  #caughtUpThrough: { readonly sequence: number | null } | undefined;

  constructor(
    deps: PollCycleDeps,
    options: PollCycleOptions,
    budget: CycleBudget,
    lease: Extract<LeaseGrant, { acquired: true }>,
  ) {
    this.#deps = deps;
    this.#options = options;
    this.#budget = budget;
    this.#lease = lease;
    this.#startCheckpoint = lease.checkpoint;
    this.#feedProgramId = lease.feedProgramId;
    this.#gaps = new GapLedger(lease.openGaps);
    this.#tracker = new CheckpointTracker(lease.checkpoint);
    // Ctrl-C stops the next poll, never a publish in progress: its events would only come again.
    const pollSignal = AbortSignal.any(
      [budget.deadlineSignal, this.#halt.signal, options.stopSignal].filter(
        (signal): signal is AbortSignal => signal !== undefined,
      ),
    );
    this.#pollSignal = pollSignal;
    const window = { deadline: budget.deadline, signal: pollSignal };
    const minPollWindowMs = options.minPollWindowMs ?? DEFAULTS.minPollWindowMs;
    const reading = {
      clock: deps.clock,
      metrics: deps.metrics,
      logger: deps.logger,
      random: deps.random,
      recordedGaps: this.#gaps,
    };
    this.#pages = new FeedReader(
      { ...reading, feed: deps.feed },
      {
        minPollWindowMs,
        pollBackoff: options.pollBackoff ?? DEFAULTS.pollBackoff,
        minEmptyPollIntervalMs: options.minEmptyPollIntervalMs ?? DEFAULTS.minEmptyPollIntervalMs,
      },
      window,
    );
    this.#reader = this.#pages;
    if (options.feedMode === 'stream' && deps.stream !== undefined) {
      const inFlight = this.#inFlight;
      this.#stream = new StreamReader(
        {
          ...reading,
          stream: deps.stream,
          pages: this.#pages,
          lookup: deps.lookup,
          publishing: {
            get busy() {
              return inFlight.size > 0;
            },
          },
        },
        {
          recovery: options.stream?.recovery ?? DEFAULTS.streamRecovery,
          lingerMs: options.stream?.lingerMs ?? DEFAULTS.streamLingerMs,
          minPollWindowMs,
          reconnectBackoff: options.stream?.reconnectBackoff ?? DEFAULTS.pollBackoff,
        },
        window,
      );
      this.#reader = this.#stream;
    }
    const maxLookups = options.gapRepair?.maxLookups;
    this.#repair =
      deps.lookup === undefined || maxLookups === 0
        ? undefined
        : new GapRepair(
            { lookup: deps.lookup, clock: deps.clock, metrics: deps.metrics, logger: deps.logger },
            options.gapRepair,
          );
    this.#pipeline = new PublishPipeline(
      {
        publisher: deps.publisher,
        clock: deps.clock,
        metrics: deps.metrics,
        logger: deps.logger,
        random: deps.random,
      },
      options.publish,
    );
    this.#committer = this.#newCommitter(lease.checkpoint);
  }

  async run(): Promise<CycleSummary> {
    this.#deps.logger.info('Lease taken; polling', {
      checkpoint: this.#startCheckpoint,
      deadline: new Date(this.#budget.deadline).toISOString(),
    });
    this.#reportForgottenGaps(this.#gaps.prune(this.#deps.clock.now()));
    let summary: CycleSummary;
    try {
      await this.#applyStartPosition();
      let stopReason = await this.#pump();
      await this.#committer.flush().catch((error: unknown) => this.#fail(error));
      if (this.#failure !== undefined) throw this.#failure.error;
      if (this.#options.stopSignal?.aborted) stopReason = 'stopped';
      this.#failIfTheFeedNeverAnswered();
      summary = this.#finish(stopReason);
    } catch (error) {
      const tally = { published: this.#published, lagSeconds: this.#lagSeconds };
      await this.#releaseLease(failedRecord(this.#deps.clock.now(), error, tally));
      throw error;
    }
    await this.#releaseLease(completedRecord(this.#deps.clock.now(), summary));
    return summary;
  }

  /**
   * Reads page after page and hands each to the publish pipeline without waiting for it: the
   * next read needs only the highest sequence number seen, so it overlaps the publishing of the
   * pages before it (at most `MAX_PAGES_IN_FLIGHT` of them). Numbers a page skipped are looked up
   * first (gap repair); young gaps are looked up again beside the reads. Stops at the deadline,
   * on Ctrl-C, or at the first failure, then waits for the pages still being published.
   */
  async #pump(): Promise<StopReason> {
    let stopReason: StopReason = 'deadline';
    this.#startRechecks();
    try {
      while (this.#failure === undefined) {
        if (this.#inFlight.size >= MAX_PAGES_IN_FLIGHT) {
          await Promise.race(this.#inFlight);
          continue;
        }
        const uncommittedLimit = Math.max(MAX_UNCOMMITTED, 2 * MAX_PAGES_IN_FLIGHT * this.#largestPage);
        if (this.#uncommitted() > uncommittedLimit && this.#committer.busy) {
          await this.#committer.settled();
          continue;
        }
        const read = await this.#reader.next(this.#tracker.highestTracked);
        if (read.kind === 'closed') {
          if (read.upstreamUnavailable) stopReason = 'upstream-unavailable';
          break;
        }
        if (read.kind === 'caught-up') {
          this.#caughtUp();
          continue;
        }
        const fresh = await this.#withSkippedEvents(read.events);
        this.#admit(fresh, read.late);
        this.#inBackground(this.#publishPage(fresh, read.late));
      }
    } catch (error) {
      // Not retryable (authentication, payload, another program's events): what is in flight
      // still finishes and is checkpointed before the run fails with it.
      this.#fail(error);
    }
    this.#pumpOver.abort();
    await this.#rechecking;
    await this.#reader.close?.();
    await Promise.all(this.#inFlight);
    return stopReason;
  }

  /** Accepted sequence numbers past the checkpoint written (a new row: past its first event). */
  #uncommitted(): number {
    const safe = this.#tracker.safeCheckpoint;
    const written = this.#committer.committed ?? this.#firstAdmitted;
    return safe === null || written === undefined ? 0 : safe - written;
  }

  /** Just below the first sequence number admitted: a new row's baseline for `#uncommitted`. */
  #firstAdmitted: number | undefined;
  /** Events in the largest page admitted so far. */
  #largestPage = 0;

  /** Publishing under way: pages, and late events found by re-checks. */
  readonly #inFlight = new Set<Promise<void>>();

  #inBackground(publishing: Promise<void>): void {
    const tracked: Promise<void> = publishing
      .catch((error: unknown) => this.#fail(error))
      .finally(() => {
        this.#inFlight.delete(tracked);
        this.#stream?.publishingSettled();
      });
    this.#inFlight.add(tracked);
  }

  /**
   * The read's events with those of the numbers it skipped that a lookup finds (gap repair),
   * ascending. `SequenceGaps` counts what the feed skipped; what stays missing is recorded when
   * the events are admitted.
   */
  async #withSkippedEvents(events: readonly BankingEvent[]): Promise<readonly BankingEvent[]> {
    const gaps = findSequenceGaps(this.#tracker.highestTracked, events);
    if (gaps.length === 0) return events;
    this.#deps.metrics.add(
      'SequenceGaps',
      'Count',
      gaps.reduce((missing, gap) => missing + gap.to - gap.from + 1, 0),
    );
    const found = this.#repair === undefined ? [] : await this.#repair.fill(gaps, this.#pollSignal);
    this.#deps.logger.warn('The feed skipped sequence numbers', {
      gaps: gaps.slice(0, 10),
      foundByLookup: found.map((event) => event.sequence_number).slice(0, 10),
      checkpoint: this.#committer.committed,
    });
    if (found.length === 0) return events;
    return [...events, ...found].sort((a, b) => a.sequence_number - b.sequence_number);
  }

  /** Starts the loop of re-checks of young gaps, unless it runs already or has nothing to do. */
  #startRechecks(): void {
    const repair = this.#repair;
    if (repair === undefined || this.#rechecking !== undefined) return;
    if (!repair.hasWork(this.#gaps, this.#deps.clock.now())) return;
    this.#rechecking = this.#recheckGaps(repair).finally(() => {
      this.#rechecking = undefined;
    });
  }

  /** Looks young gaps up again while the pump runs; events found are published as late ones. */
  async #recheckGaps(repair: GapRepair): Promise<void> {
    const { clock } = this.#deps;
    const signal = AbortSignal.any([this.#pollSignal, this.#pumpOver.signal]);
    while (this.#failure === undefined && repair.hasWork(this.#gaps, clock.now())) {
      try {
        await clock.sleep(GAP_RECHECK_TICK_MS, signal);
      } catch {
        return;
      }
      let found: BankingEvent[];
      try {
        found = await repair.recheck(this.#gaps, signal);
      } catch (error) {
        this.#fail(error);
        return;
      }
      if (found.length > 0) {
        this.#admit([], found);
        this.#inBackground(this.#publishPage([], found));
      } else if (this.#gaps.changed) {
        // Gaps given up: written now, so the next run does not count them again.
        this.#committer.offer(this.#tracker.safeCheckpoint, this.#feedProgramId, this.#newest?.created_dt);
      }
    }
  }

  /** Records the first failure and stops everything else: polling, and batches not yet sent. */
  #fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    this.#pipeline.halt();
    this.#halt.abort();
  }

  #caughtUp(): void {
    this.#caughtUpThrough = { sequence: this.#tracker.highestTracked };
    this.#updateLag();
    this.#options.onCaughtUp?.();
  }

  /**
   * Lag: 0 once every event the feed had when it last said "nothing new" is accepted (pages still
   * being published when that answer came count too); otherwise the age of the newest accepted
   * event. A 0 is emitted once per change, not once per empty long poll.
   */
  #updateLag(): void {
    const through = this.#caughtUpThrough;
    const safe = this.#tracker.safeCheckpoint;
    const caughtUp =
      through !== undefined && (through.sequence === null || (safe !== null && safe >= through.sequence));
    if (caughtUp) {
      if (this.#lagSeconds !== 0) this.#deps.metrics.add('LagSeconds', 'Seconds', 0);
      this.#lagSeconds = 0;
    } else if (this.#newest !== undefined) {
      this.#lagSeconds = Math.max(0, (this.#deps.clock.now() - Date.parse(this.#newest.created_dt)) / 1000);
      this.#deps.metrics.add('LagSeconds', 'Seconds', this.#lagSeconds);
    }
  }

  /** Checks a page and registers its new events before anything of it is published. */
  #admit(fresh: readonly BankingEvent[], late: readonly BankingEvent[]): void {
    this.#checkFeedIdentity([...late, ...fresh]);
    this.#recordGaps(fresh);
    this.#tracker.track(fresh.map((event) => event.sequence_number));
    if (this.#firstAdmitted === undefined && fresh.length > 0)
      this.#firstAdmitted = fresh[0]!.sequence_number - 1;
    this.#largestPage = Math.max(this.#largestPage, fresh.length);
    reportInvalidEvents(this.#deps, [...late, ...fresh]);
  }

  /**
   * Publishes one page's new events, and late ones for recorded gaps, offering the checkpoint to
   * the committer as events are accepted; throws when an event stayed unpublished. Late events
   * are below the checkpoint: they only leave the gap ledger.
   */
  async #publishPage(fresh: readonly BankingEvent[], late: readonly BankingEvent[]): Promise<void> {
    const { metrics } = this.#deps;
    const lateOnes = new Set(late);
    const report = await this.#pipeline.publish([...late, ...fresh], {
      deadline: this.#budget.deadline,
      signal: this.#budget.workSignal,
      onAccepted: (event) => {
        this.#gaps.fill(event.sequence_number);
        if (!lateOnes.has(event)) {
          this.#tracker.accept(event.sequence_number);
          // A quarantined event's time may be anything: lag is measured on valid events only.
          const newer = this.#newest === undefined || event.sequence_number > this.#newest.sequence_number;
          if (newer && event.invalid === undefined) this.#newest = event;
        }
        // Unknown only while every event of a new row so far was quarantined: the row's feed is then
        // recorded by the first commit that has a valid event (the quarantined ones still move the
        // checkpoint, so they are not published again at every run).
        this.#committer.offer(this.#tracker.safeCheckpoint, this.#feedProgramId, this.#newest?.created_dt);
      },
    });
    this.#published += report.accepted;
    metrics.add('EventsPublished', 'Count', report.accepted);
    this.#updateLag();
    const failure = this.#committer.failure;
    if (failure !== undefined) throw failure.error;
    this.#throwIfIncomplete(report);
  }

  /**
   * Every event of a feed carries its program's id. One that differs from the row's (or from the
   * rest of the page, before the row has one) means the secret holds another program's credentials:
   * publish nothing and keep the checkpoint.
   */
  #checkFeedIdentity(events: readonly BankingEvent[]): void {
    // A quarantined event's program_id may be missing or wrong: it neither decides nor breaks the
    // row's identity (a page of nothing else leaves it unknown, and the checkpoint waits for it).
    const valid = events.filter((event) => event.invalid === undefined);
    const expected = this.#feedProgramId ?? valid[0]?.program_id;
    if (expected === undefined) return;
    const stranger = valid.find((event) => event.program_id !== expected);
    if (stranger !== undefined) {
      throw new FeedProgramMismatchError(
        this.#options.program,
        expected,
        stranger.program_id,
        stranger.sequence_number,
      );
    }
    this.#feedProgramId = expected;
  }

  /** Remembers the numbers still missing, for events that turn up late and for re-checks. */
  #recordGaps(fresh: readonly BankingEvent[]): void {
    const gaps = findSequenceGaps(this.#tracker.highestTracked, fresh);
    if (gaps.length === 0) return;
    this.#reportForgottenGaps(this.#gaps.record(gaps, this.#deps.clock.now()));
    this.#startRechecks();
  }

  /**
   * Skipped numbers the ledger no longer remembers (past its retention, or beyond its size bound):
   * an event filled in for them later would be taken for a re-send. Those still looked up count as
   * unfilled, so the alarm on `GapsUnfilled` sees them as it sees gaps given up after the grace.
   */
  #reportForgottenGaps(forgotten: readonly OpenGap[]): void {
    if (forgotten.length === 0) return;
    const unfilled = forgotten
      .filter((gap) => gap.gaveUpAt === undefined)
      .reduce((count, gap) => count + gap.to - gap.from + 1, 0);
    if (unfilled > 0) this.#deps.metrics.add('GapsUnfilled', 'Count', unfilled);
    this.#deps.logger.warn(
      'Skipped sequence numbers no longer remembered: an event filled in for them now would be taken for a re-send',
      { gaps: forgotten.slice(0, 10), ranges: forgotten.length, unfilled },
    );
  }

  /**
   * A row whose start position was never applied applies it now, before reading any event to
   * publish, and records where it landed (`recordStart`): `beginning` reads from the start of the
   * feed, a number N from just below N, and `latest` passes over, without publishing them, the
   * events created before the row's first run began (`firstLeasedAt`, recorded with its first
   * lease). So whatever becomes of this run, the next one reads every event created since then.
   */
  async #applyStartPosition(): Promise<void> {
    if (this.#lease.startApplied) return;
    const position: StartPosition = this.#options.startPosition?.position ?? { kind: 'beginning' };
    let landing: { readonly checkpoint: number | null; readonly feedProgramId: string | null } = {
      checkpoint: position.kind === 'latest' ? null : initialCursor(position),
      feedProgramId: null,
    };
    if (position.kind === 'latest') {
      const walk = await fastForward(this.#pages, {
        from: null,
        startedAt: this.#lease.firstLeasedAt,
        pageLimit: this.#options.startPosition!.pageLimit,
      });
      if (walk.kind === 'interrupted') {
        if (this.#options.stopSignal?.aborted) return;
        // Nothing recorded: the next run walks again, still from this row's first run.
        throw new StartPositionIncompleteError(this.#options.program, walk.reached, walk.pages);
      }
      this.#deps.logger.info(
        'Start position "latest": passed over the events created before the first run without publishing them',
        {
          checkpoint: walk.reached,
          skipped: walk.skipped,
          pages: walk.pages,
          firstRunStartedAt: new Date(this.#lease.firstLeasedAt).toISOString(),
        },
      );
      landing = { checkpoint: walk.reached, feedProgramId: walk.feedProgramId };
    }
    await this.#deps.checkpoints.recordStart({
      owner: this.#options.owner,
      position: formatStartPosition(position),
      checkpoint: landing.checkpoint,
      feedProgramId: landing.feedProgramId,
      signal: this.#budget.workSignal,
    });
    this.#feedProgramId ??= landing.feedProgramId;
    this.#startFrom(landing.checkpoint, landing.checkpoint);
  }

  #newCommitter(committed: number | null): CheckpointCommitter {
    const deps = this.#deps;
    return new CheckpointCommitter(
      { checkpoints: deps.checkpoints, clock: deps.clock, metrics: deps.metrics, logger: deps.logger },
      {
        owner: this.#options.owner,
        committed,
        gaps: this.#gaps,
        signal: this.#budget.workSignal,
        // A lost lease stops publishing now, not after the pages in flight: the new holder publishes them.
        onFailure: (error) => this.#fail(error),
      },
    );
  }

  /** Polls on from `cursor`, with `committed` the checkpoint as stored. */
  #startFrom(cursor: number | null, committed: number | null): void {
    this.#tracker = new CheckpointTracker(cursor);
    this.#committer = this.#newCommitter(committed);
  }

  #throwIfIncomplete(report: PublishReport): void {
    const firstFailure = report.failed[0];
    const checkpoint = this.#tracker.safeCheckpoint;
    if (firstFailure !== undefined) {
      const { event } = firstFailure;
      const context = {
        failedCount: report.failed.length,
        eventId: event.id,
        sequenceNumber: event.sequence_number,
        errorCode: firstFailure.errorCode,
        checkpoint,
      };
      if (this.#budget.workSignal.aborted) {
        // Whether the bus got them is unknown; they are sent again next time, the checkpoint did not move.
        throw new DeadlineExceededError(
          `The invocation ended while ${report.failed.length} event(s) were being published (first: ${event.id}, sequence ${event.sequence_number}); the checkpoint stays at ${checkpoint ?? 'none'}`,
          context,
        );
      }
      throw new PublishError(
        `${report.failed.length} event(s) were not accepted by the bus (first: ${event.id}, sequence ${event.sequence_number}: ${firstFailure.errorCode}: ${firstFailure.errorMessage}); the checkpoint stays at ${checkpoint ?? 'none'}`,
        context,
      );
    }
    if (report.oversize !== undefined) {
      const { event, sizeBytes } = report.oversize;
      throw new EventTooLargeError(
        event.id,
        event.sequence_number,
        sizeBytes,
        this.#deps.publisher.limits.maxBatchBytes,
      );
    }
  }

  /** A whole invocation without an answer must fail loudly, so the errors alarm sees it. */
  #failIfTheFeedNeverAnswered(): void {
    const { polls, pollTimeouts, stalePolls } = this.#reader.stats;
    if (polls === 0 && this.#reader.lastError !== undefined) throw this.#reader.lastError;
    if (stalePolls > 0 && stalePolls === polls - pollTimeouts) {
      throw new FeedCursorError(this.#committer.committed, stalePolls);
    }
  }

  /** Gives the lease back with the cycle's record, in one write: the next run finds the record. */
  async #releaseLease(record: CycleRecord): Promise<void> {
    try {
      // Its own bound, so it is tried even when the work signal has fired, yet returns before Lambda's end.
      await this.#deps.checkpoints.releaseLease(this.#options.owner, {
        signal: this.#budget.signalBeforeEnd(RELEASE_RESERVE_MS),
        record,
      });
    } catch (error) {
      this.#deps.logger.warn(
        'Could not release the lease nor record the cycle for status; the lease expires on its own',
        { error },
      );
    }
  }

  #finish(stopReason: StopReason): CycleSummary {
    const { metrics, logger } = this.#deps;
    const { polls, received, pollErrors, pollTimeouts, stalePolls } = this.#reader.stats;
    const durationMs = this.#budget.elapsed();
    // The stall alarm counts these: only a cycle in which the feed really answered is healthy.
    if (polls - pollTimeouts - stalePolls > 0) {
      metrics.add('CycleDurationMs', 'Milliseconds', durationMs);
    } else if (pollTimeouts > 0) {
      logger.warn(
        'Every poll of this cycle ended in a gateway timeout (408/504): the banking service did not answer. ' +
          'Not counted as a healthy cycle; the stall alarm fires if this goes on',
        { pollTimeouts, checkpoint: this.#committer.committed },
      );
    }
    const summary: CycleSummary = {
      program: this.#options.program,
      status: 'completed',
      published: this.#published,
      received,
      polls,
      pollErrors,
      pollTimeouts,
      checkpoint: this.#committer.committed,
      startCheckpoint: this.#startCheckpoint,
      lagSeconds: this.#lagSeconds,
      durationMs,
      stopReason,
    };
    logger.info('Cycle finished', { ...summary });
    return summary;
  }
}
