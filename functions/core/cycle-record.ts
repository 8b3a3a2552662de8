/**
 * What a cycle leaves behind for operators: how it ended, in the checkpoint row (`status` reads
 * it). The record is written by the update that releases the lease, so it is in place before the
 * next run can start; a failed write is logged and never changes the cycle's own result.
 */

import type { CycleRecord } from './checkpoint/store.ts';
import { PollerError } from './errors.ts';

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
