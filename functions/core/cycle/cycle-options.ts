/**
 * What a caller may tell a poll cycle, and the same with every default applied, resolved once into
 * a frozen object the steps read.
 */
import type { BackoffOptions } from '../backoff.ts';
import type { GapRepairOptions } from '../gap-repair.ts';
import { DEFAULT_MEMORY_BUDGET } from '../memory-budget.ts';
import type { PublishPipelineOptions } from '../publish-pipeline.ts';
import { SEQUENCE_JUMP_DEFAULTS } from '../sequence-jumps.ts';
import type { StartPositionOptions } from '../start-position.ts';
import type { StreamRecovery } from '../stream/stream-recovery.ts';

/** How events are read: long polls of `GET /events`, or the stream `GET /events/stream`. */
export const FEED_MODES = ['poll', 'stream'] as const;
export type FeedMode = (typeof FEED_MODES)[number];

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
  /**
   * The most a sequence number may lie above the one before it; an event beyond is held, not
   * trusted (`sequence-jumps.ts`). @default 100_000
   */
  readonly maxSequenceJump?: number;
  /**
   * Bytes the events the cycle holds may take, by `eventFootprint`: pages read ahead and being
   * published, and in stream mode a quarter of it for the events buffered from the stream
   * (`memory-budget.ts`; the handler derives it from the function's memory, `memoryBudget`). A
   * process running several cycles at once gives each its share.
   * @default what a 256 MB function gives, `DEFAULT_MEMORY_BUDGET.heldBytes`
   */
  readonly heldBytes?: number;
}

/** The options with every default applied: what the steps of a cycle read. */
export interface CycleSettings {
  readonly program: string;
  readonly owner: string;
  readonly remainingMs: number;
  readonly safetyMarginMs: number;
  readonly minPollWindowMs: number;
  readonly leaseSkewMs: number;
  readonly leaseWaitMs: number;
  readonly leaseCheckIntervalMs: number;
  readonly pollBackoff: BackoffOptions;
  readonly minEmptyPollIntervalMs: number;
  readonly publish: PublishPipelineOptions;
  readonly stopSignal: AbortSignal | undefined;
  readonly onCaughtUp: (() => void) | undefined;
  readonly startPosition: StartPositionOptions | undefined;
  readonly feedMode: FeedMode;
  readonly stream: Required<StreamModeOptions>;
  readonly gapRepair: GapRepairOptions;
  readonly maxSequenceJump: number;
  readonly heldBytes: number;
}

/** The defaults of the options a caller may leave out. */
export const CYCLE_DEFAULTS = Object.freeze({
  safetyMarginMs: 10_000,
  minPollWindowMs: 2_000,
  leaseSkewMs: 5_000,
  /** The longest skew allowance: a crashed run's lease must free itself soon. */
  maxLeaseSkewMs: 5_000,
  leaseWaitMs: 0,
  leaseCheckIntervalMs: 100,
  pollBackoff: Object.freeze({ baseMs: 200, capMs: 20_000 }),
  minEmptyPollIntervalMs: 1_000,
  feedMode: 'poll',
  streamRecovery: 'page',
  streamLingerMs: 100,
} as const);

/** Applies every default once; the result is frozen. */
export function resolveCycleOptions(options: PollCycleOptions): CycleSettings {
  return Object.freeze({
    program: options.program,
    owner: options.owner,
    remainingMs: options.remainingMs,
    safetyMarginMs: options.safetyMarginMs ?? CYCLE_DEFAULTS.safetyMarginMs,
    minPollWindowMs: options.minPollWindowMs ?? CYCLE_DEFAULTS.minPollWindowMs,
    leaseSkewMs: Math.min(options.leaseSkewMs ?? CYCLE_DEFAULTS.leaseSkewMs, CYCLE_DEFAULTS.maxLeaseSkewMs),
    leaseWaitMs: options.leaseWaitMs ?? CYCLE_DEFAULTS.leaseWaitMs,
    leaseCheckIntervalMs: options.leaseCheckIntervalMs ?? CYCLE_DEFAULTS.leaseCheckIntervalMs,
    pollBackoff: options.pollBackoff ?? CYCLE_DEFAULTS.pollBackoff,
    minEmptyPollIntervalMs: options.minEmptyPollIntervalMs ?? CYCLE_DEFAULTS.minEmptyPollIntervalMs,
    publish: options.publish ?? {},
    stopSignal: options.stopSignal,
    onCaughtUp: options.onCaughtUp,
    startPosition: options.startPosition,
    feedMode: options.feedMode ?? CYCLE_DEFAULTS.feedMode,
    stream: Object.freeze({
      recovery: options.stream?.recovery ?? CYCLE_DEFAULTS.streamRecovery,
      lingerMs: options.stream?.lingerMs ?? CYCLE_DEFAULTS.streamLingerMs,
      reconnectBackoff: options.stream?.reconnectBackoff ?? CYCLE_DEFAULTS.pollBackoff,
    }),
    gapRepair: options.gapRepair ?? {},
    maxSequenceJump: options.maxSequenceJump ?? SEQUENCE_JUMP_DEFAULTS.maxJump,
    heldBytes: options.heldBytes ?? DEFAULT_MEMORY_BUDGET.heldBytes,
  });
}
