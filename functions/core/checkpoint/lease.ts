/**
 * The lease's life in one cycle: taken, or awaited while the previous run hands it over
 * (`takeLease`); given back at the end with the cycle's record in the same write (`releaseLease`,
 * `completedRecord`, `failedRecord`). Whether a lease may be taken, and when it has expired, is a
 * rule of the store (`rules.ts`); a run that dies without releasing leaves its lease to expire.
 */
import type { CycleBudget } from '../cycle-budget.ts';
import { PollerError } from '../errors.ts';
import type { Clock, CycleLogger, MetricsSink } from '../ports.ts';
import type { CheckpointStore, CycleRecord, HeldJump, LeaseGrant } from './store.ts';

export interface LeaseHandoverDeps {
  readonly checkpoints: CheckpointStore;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
}

export interface LeaseHandoverRequest {
  /** The invocation asking. */
  readonly owner: string;
  /** Epoch ms the lease is held until once taken. */
  readonly expiresAt: number;
  /**
   * How long to wait for a live holder to hand the lease over. The schedule starts each run a
   * little before the previous one stops polling, so the next is already waiting when the lease
   * is released. 0 returns at once, as a tick without overlap would.
   */
  readonly waitMs: number;
  /** How often the lease is looked at while waiting. */
  readonly checkIntervalMs: number;
  /**
   * How long before its lease's expiry a live holder stops polling at the earliest: the most skew
   * a holder adds to its expiry, the safety margin it keeps back and its min poll window (no poll
   * starts that close to its deadline; neither more than this run's). Its hand-over is not looked
   * for before then, less one check interval.
   */
  readonly holderStopsBeforeExpiryMs: number;
  /** Ends the wait early (the invocation's deadline). */
  readonly signal: AbortSignal;
}

/**
 * A lease owner for one invocation: its id (Lambda's request id) and a random part. An
 * asynchronous invocation may be delivered twice with the same request id; the two deliveries
 * must not both hold the lease (the lease is re-entrant for its owner).
 *
 * @example uniqueLeaseOwner(context.awsRequestId) // '6c1f…-a2#3f9c2b1d'
 */
export function uniqueLeaseOwner(invocationId: string): string {
  return `${invocationId}#${globalThis.crypto.randomUUID().slice(0, 8)}`;
}

/**
 * Takes the lease, waiting for the run that holds it to release it at its own deadline: the hand
 * over then takes about one check interval instead of a blackout until the next tick. While
 * waiting it only reads the item (cheaper than refused conditional writes) and tries to take
 * the lease once it looks free or expired; the conditional write still decides, so two waiters
 * never both win.
 *
 * The refused grant tells when the holder's lease expires: its end plus skew, so it stops polling
 * no earlier than `holderStopsBeforeExpiryMs` before that (its margin, and its min poll window: a
 * poll that returns within it is its last), then publishes, commits and releases. The wait sleeps
 * until one check interval before that moment and only then reads every check interval: from 3
 * reads a hand-over (a holder whose last poll ends early) to 23 (a quiet feed, whose last poll is
 * cut at the deadline), instead of one every check of the whole overlap (51 at 100 ms over 5 s).
 * Never past `waitMs`: when the holder is not due before, the wait reads once at its end. A holder
 * that releases early (its cycle failed) is found no later than when it was due: that costs at
 * most the overlap window, and only when the holder fails inside it. A crashed holder's lease is
 * taken once it expires, as before.
 *
 * Timeline, ticks every 60 s, runs polling 65 s (timeout 75 s, margin 10 s, skew 5 s, min poll
 * window 2 s):
 * ```
 * t=0     A takes the lease (expires t=80), polls until t=63 to 65
 * t=60    B finds A's lease: sleeps until t=62.9 (80 − 5 − 10 − 2 − 0.1)
 * t=62.9  B reads: still A's; again every 100 ms
 * t=64.2  A's last poll returns with less than 2 s left: it publishes what it holds, commits, releases (t≈64.25)
 * t=64.3  B reads the lease free, takes it, polls from A's checkpoint
 * ```
 */
export async function takeLease(deps: LeaseHandoverDeps, request: LeaseHandoverRequest): Promise<LeaseGrant> {
  const { checkpoints, clock, metrics, logger } = deps;
  const { owner, expiresAt, waitMs, checkIntervalMs, holderStopsBeforeExpiryMs, signal } = request;
  const startedAt = clock.now();
  let grant = await checkpoints.acquireLease({ owner, expiresAt, now: startedAt });
  if (grant.acquired || waitMs <= 0) return grant;
  const waitUntil = startedAt + waitMs;
  // When to start looking at the lease of a holder whose lease expires at `expiry`.
  const lookFromFor = (expiry: number) =>
    Math.min(expiry - holderStopsBeforeExpiryMs - checkIntervalMs, waitUntil);
  let lookFrom = lookFromFor(grant.expiresAt);
  logger.info('Another invocation holds the lease; waiting for it to hand over', {
    leaseHolder: grant.holder,
    leaseExpiresAt: new Date(grant.expiresAt).toISOString(),
    waitMs,
    firstLookInMs: Math.max(0, lookFrom - startedAt),
  });
  while (!grant.acquired && clock.now() < waitUntil) {
    const now = clock.now();
    try {
      await clock.sleep(lookFrom > now ? lookFrom - now : Math.min(checkIntervalMs, waitUntil - now), signal);
    } catch {
      break;
    }
    const { lease } = await checkpoints.read();
    const readAt = clock.now();
    let holderExpiresAt = lease?.expiresAt;
    if (lease === null || lease.expiresAt < readAt || lease.owner === owner) {
      grant = await checkpoints.acquireLease({ owner, expiresAt, now: readAt });
      if (!grant.acquired) holderExpiresAt = grant.expiresAt;
    }
    // Another run may have taken it meanwhile (a second waiter): its hand-over is due at its own deadline.
    if (holderExpiresAt !== undefined) lookFrom = lookFromFor(holderExpiresAt);
  }
  if (grant.acquired) {
    const waited = clock.now() - startedAt;
    metrics.add('HandoverWaitMs', 'Milliseconds', waited);
    logger.info('Lease handed over', { waitedMs: waited });
  }
  return grant;
}

/** The lease release must be answered this long before Lambda ends the invocation. */
const RELEASE_RESERVE_MS = 250;

export interface LeaseReleaseRequest {
  /** The lease holder. */
  readonly owner: string;
  /** Bounds the write: it must be answered before Lambda ends the invocation. */
  readonly budget: CycleBudget;
  /** How the cycle ended, written by the same update that frees the lease. */
  readonly record: CycleRecord;
  /** Held jumps no checkpoint write carried, written by the same update (`ReleaseOptions`). */
  readonly heldJumps?: readonly HeldJump[];
}

/**
 * Gives the lease back with the cycle's record, in one write: the next run finds the record. A
 * failed release is logged, never thrown: the lease then expires on its own.
 */
export async function releaseLease(
  { checkpoints, logger }: Pick<LeaseHandoverDeps, 'checkpoints' | 'logger'>,
  { owner, budget, record, heldJumps }: LeaseReleaseRequest,
): Promise<void> {
  try {
    // Its own bound, so it is tried even when the work signal has fired, yet returns before Lambda's end.
    await checkpoints.releaseLease(owner, {
      signal: budget.signalBeforeEnd(RELEASE_RESERVE_MS),
      record,
      ...(heldJumps === undefined ? {} : { heldJumps }),
    });
  } catch (error) {
    logger.warn('Could not release the lease nor record the cycle for status; the lease expires on its own', {
      error,
    });
  }
}

/** Long enough to say what failed, short enough for one line of `status`. */
const MAX_MESSAGE_CHARS = 500;

/** What the cycle did, whichever way it ended. */
export interface CycleTally {
  /** Events the cycle published. */
  readonly published: number;
  /** Lag of the newest event it published (0 once caught up; `null` when unknown). */
  readonly lagSeconds: number | null;
}

/** The record of a cycle that ran to its end. */
export function completedRecord(now: number, tally: CycleTally): CycleRecord {
  return {
    endedAt: new Date(now).toISOString(),
    outcome: 'completed',
    published: tally.published,
    lagSeconds: tally.lagSeconds,
  };
}

/** The record of a cycle that threw: its stable code and message (errors never carry secrets). */
export function failedRecord(now: number, error: unknown, tally?: CycleTally): CycleRecord {
  const code = error instanceof PollerError ? error.code : 'UNEXPECTED_ERROR';
  const message = error instanceof Error ? `${error.message}` : String(error);
  return {
    endedAt: new Date(now).toISOString(),
    outcome: 'failed',
    published: tally?.published ?? 0,
    lagSeconds: tally?.lagSeconds ?? null,
    error: {
      code,
      message: message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message,
    },
  };
}
