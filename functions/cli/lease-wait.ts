/**
 * What the commands that write a program's checkpoint row without its lease (`rewind`, `jumps`)
 * do about a run that holds it: refuse (a run writes the row back at its next commit), wait for
 * it to end (`--wait`), or take it (`--force`: that run stops at its next commit with
 * `LEASE_LOST`). The write itself stays conditional on the lease: this only decides when to try.
 */
import type { DynamoDbCheckpointStore } from '../adapters/aws/dynamodb-checkpoint-store.ts';
import { systemClock } from '../adapters/system-clock.ts';
import type { CheckpointState } from '../core/checkpoint/index.ts';
import { InterruptedError, RefusedError } from './cli-errors.ts';
import type { CommandContext } from './command-context.ts';
import { onInterrupt } from './interrupt.ts';
import { formatInstant } from './output-format.ts';

export interface LeaseFlags {
  readonly force?: boolean;
  readonly wait?: boolean;
}

/** How long `--wait` waits for a lease beyond its expiry before giving up. */
const WAIT_GRACE_MS = 10_000;

/** A live lease means a run is polling: it would write over the change, so it is refused. */
export function refuseWhileLeased(
  program: string,
  state: CheckpointState,
  flags: LeaseFlags,
  now: number,
): void {
  const { lease } = state;
  if (lease === null || lease.expiresAt < now || flags.force || flags.wait) return;
  throw new RefusedError(
    `Program ${program} is being polled by ${lease.owner} (lease until ${formatInstant(lease.expiresAt, now)})`,
    'pass --wait to go ahead as soon as that run ends, or --force to take the lease (that run stops at its next commit)',
  );
}

/**
 * Waits until no live lease is held, re-reading the row; refuses when `changed` says the row moved
 * on meanwhile (what the operator decided on is no longer what is there). Returns the row as read last.
 */
export async function waitForLease(
  context: CommandContext,
  store: DynamoDbCheckpointStore,
  program: string,
  initial: CheckpointState,
  changed: (next: CheckpointState) => string | undefined,
): Promise<CheckpointState> {
  let state = initial;
  const interrupt = onInterrupt('Stopped waiting; nothing was changed', context.terminal.err);
  try {
    const giveUpAt = (state.lease?.expiresAt ?? 0) + WAIT_GRACE_MS;
    let announced = false;
    while (state.lease !== null && state.lease.expiresAt >= Date.now()) {
      if (!announced) {
        context.terminal.err(`Waiting for ${state.lease.owner} to release the lease of ${program}…\n`);
        announced = true;
      }
      if (Date.now() > giveUpAt) {
        throw new RefusedError(
          `The lease of ${program} is still held by ${state.lease.owner}`,
          'try again later, or pass --force',
        );
      }
      await systemClock.sleep(500, interrupt.signal).catch(() => {
        throw new InterruptedError('Stopped waiting for the lease');
      });
      const next = await store.read();
      const change = changed(next);
      if (change !== undefined) {
        throw new RefusedError(
          change,
          'nothing was changed; run the command again to decide on the new value',
        );
      }
      state = next;
    }
    return state;
  } finally {
    interrupt.dispose();
  }
}
