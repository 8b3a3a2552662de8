/**
 * `replay` from the source, the one loop both ends run: the CLI on the operator's machine
 * (`--local`) and the deployed function for an operator request. Reads a closed range with
 * `readRange` and publishes each chunk before reading the next; the checkpoint is never touched.
 * A chunk the bus did not take whole ends the replay with the reason, so a caller records
 * progress only up to the last chunk taken whole and resumes from there.
 */
import type { BankingEvent } from './banking-event.ts';
import { CheckpointTracker } from './checkpoint/tracker.ts';
import type { PublishPipeline } from './publish-pipeline.ts';
import { type RangeOptions, type RangeSource, readRange } from './range-reader.ts';

/** Why the bus did not take a chunk whole; JSON-serialisable, so the function can return it. */
export type ReplayFailure =
  | {
      readonly kind: 'rejected';
      /** Events the bus refused. */
      readonly count: number;
      readonly sequenceNumber: number;
      readonly errorCode: string;
      readonly errorMessage: string;
    }
  | {
      readonly kind: 'oversize';
      readonly eventId: string;
      readonly sequenceNumber: number;
      readonly sizeBytes: number;
    };

/** One chunk of the range, read and (unless a dry run) published. */
export interface ReplayStep {
  /** The chunk's events (what a dry run prints). */
  readonly events: readonly BankingEvent[];
  readonly missing: readonly number[];
  /** Every number up to this one is published (or does not exist); meaningless with `failure`. */
  readonly through: number;
  /** Events the bus accepted (a dry run: events read). */
  readonly published: number;
  /** The feed has nothing after `through` yet; the step carries no events. */
  readonly endOfFeed: boolean;
  /** The bus did not take the chunk whole: the last step; resume after the previous one. */
  readonly failure?: ReplayFailure;
}

/**
 * Yields the range chunk by chunk, each published through `pipeline` before the next is read;
 * without a pipeline (a dry run) nothing is sent.
 *
 * @example
 * for await (const step of replayRange(feed, pipeline, { from: 5, to: 12, signal, pollHoldMs: 10_000, clock })) save(step.through);
 */
export async function* replayRange(
  source: RangeSource,
  pipeline: PublishPipeline | undefined,
  options: RangeOptions,
): AsyncGenerator<ReplayStep> {
  let through = options.from - 1;
  for await (const chunk of readRange(source, options)) {
    if (chunk.endOfFeed) {
      yield { events: [], missing: [], through: chunk.through, published: 0, endOfFeed: true };
      return;
    }
    const outcome =
      pipeline === undefined
        ? { published: chunk.events.length }
        : await publishChunk(pipeline, chunk.events, through);
    yield {
      events: chunk.events,
      missing: chunk.missing,
      through: chunk.through,
      endOfFeed: false,
      ...outcome,
    };
    if ('failure' in outcome) return;
    through = chunk.through;
  }
}

async function publishChunk(
  pipeline: PublishPipeline,
  events: readonly BankingEvent[],
  before: number,
): Promise<{ published: number; failure?: ReplayFailure }> {
  const tracker = new CheckpointTracker(before);
  tracker.track(events.map((event) => event.sequence_number));
  const report = await pipeline.publish(events, {
    // No deadline of its own: the caller stops between chunks, never inside one.
    deadline: Number.POSITIVE_INFINITY,
    signal: new AbortController().signal,
    onAccepted: (event) => tracker.accept(event.sequence_number),
  });
  const failed = report.failed[0];
  if (failed !== undefined) {
    return {
      published: report.accepted,
      failure: {
        kind: 'rejected',
        count: report.failed.length,
        sequenceNumber: failed.event.sequence_number,
        errorCode: failed.errorCode,
        errorMessage: failed.errorMessage,
      },
    };
  }
  if (report.oversize !== undefined) {
    return {
      published: report.accepted,
      failure: {
        kind: 'oversize',
        eventId: report.oversize.event.id,
        sequenceNumber: report.oversize.event.sequence_number,
        sizeBytes: report.oversize.sizeBytes,
      },
    };
  }
  return { published: report.accepted };
}
