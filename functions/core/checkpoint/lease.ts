import type { Clock, CycleLogger, MetricsSink } from '../ports.ts';
import type { CheckpointStore, LeaseGrant } from './store.ts';

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
 * Timeline, ticks every 60 s, runs polling 65 s:
 * ```
 * t=0    A takes the lease, polls until t=65
 * t=60   B finds A's lease: waits, looking every 100 ms
 * t=65   A stops polling, publishes what it holds, commits, releases (t≈65.05)
 * t≈65.1 B sees the lease free, takes it, polls from A's checkpoint
 * ```
 */
export async function takeLease(deps: LeaseHandoverDeps, request: LeaseHandoverRequest): Promise<LeaseGrant> {
  const { checkpoints, clock, metrics, logger } = deps;
  const { owner, expiresAt, waitMs, checkIntervalMs, signal } = request;
  const startedAt = clock.now();
  let grant = await checkpoints.acquireLease({ owner, expiresAt, now: startedAt });
  if (grant.acquired || waitMs <= 0) return grant;
  logger.info('Another invocation holds the lease; waiting for it to hand over', {
    leaseHolder: grant.holder,
    leaseExpiresAt: new Date(grant.expiresAt).toISOString(),
    waitMs,
  });
  const waitUntil = startedAt + waitMs;
  while (!grant.acquired && clock.now() < waitUntil) {
    try {
      await clock.sleep(Math.min(checkIntervalMs, waitUntil - clock.now()), signal);
    } catch {
      break;
    }
    const { lease } = await checkpoints.read();
    const now = clock.now();
    if (lease === null || lease.expiresAt < now || lease.owner === owner) {
      grant = await checkpoints.acquireLease({ owner, expiresAt, now });
    }
  }
  if (grant.acquired) {
    const waited = clock.now() - startedAt;
    metrics.add('HandoverWaitMs', 'Milliseconds', waited);
    logger.info('Lease handed over', { waitedMs: waited });
  }
  return grant;
}
