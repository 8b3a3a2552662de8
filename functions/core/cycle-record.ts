/**
 * What a cycle leaves behind for operators: how it ended, in the checkpoint row (`status` reads it).
 * Recording is best effort: a failed write is logged and never changes the cycle's own result.
 */
import { PollerError } from './errors.ts';
import type { CycleSummary } from './poll-cycle.ts';
import type { CheckpointStore, Clock, CycleLogger, CycleRecord } from './ports.ts';

/** Long enough to say what failed, short enough for one line of `status`. */
const MAX_MESSAGE_CHARS = 500;

export interface CycleRecordDeps {
  readonly checkpoints: CheckpointStore;
  readonly clock: Clock;
  readonly logger: CycleLogger;
}

/**
 * Runs `cycle` and records its outcome (success or the error it throws) before handing it on.
 * `signal` bounds the write; it is asked for only when the write happens.
 */
export async function recordingOutcome(
  deps: CycleRecordDeps,
  signal: () => AbortSignal,
  cycle: () => Promise<CycleSummary>,
): Promise<CycleSummary> {
  let summary: CycleSummary;
  try {
    summary = await cycle();
  } catch (error) {
    await record(deps, failedRecord(deps.clock.now(), error), signal);
    throw error;
  }
  await record(
    deps,
    {
      endedAt: new Date(deps.clock.now()).toISOString(),
      outcome: 'completed',
      published: summary.published,
      lagSeconds: summary.lagSeconds,
    },
    signal,
  );
  return summary;
}

/** The record of a cycle that threw: its stable code and message (errors never carry secrets). */
export function failedRecord(now: number, error: unknown): CycleRecord {
  const code = error instanceof PollerError ? error.code : 'UNEXPECTED_ERROR';
  const message = error instanceof Error ? `${error.message}` : String(error);
  return {
    endedAt: new Date(now).toISOString(),
    outcome: 'failed',
    published: 0,
    lagSeconds: null,
    error: {
      code,
      message: message.length > MAX_MESSAGE_CHARS ? `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…` : message,
    },
  };
}

async function record(deps: CycleRecordDeps, outcome: CycleRecord, signal: () => AbortSignal): Promise<void> {
  if (deps.checkpoints.recordCycle === undefined) return;
  try {
    await deps.checkpoints.recordCycle(outcome, signal());
  } catch (error) {
    deps.logger.warn('Could not record the cycle outcome for status; the checkpoint is unaffected', {
      error,
    });
  }
}
