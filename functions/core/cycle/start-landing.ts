/**
 * The start position, applied once per checkpoint row and recorded before any event is read to be
 * published, so a first run that fails at any point changes nothing for the next one.
 */

import type { LeaseGrant } from '../checkpoint/store.ts';
import { StartPositionIncompleteError } from '../errors.ts';
import type { FeedReader } from '../feed-reader.ts';
import {
  fastForward,
  formatStartPosition,
  initialCursor,
  START_POSITION_DEFAULTS,
  type StartPosition,
} from '../start-position.ts';
import type { CycleDeps } from './cycle-deps.ts';
import type { CycleSettings } from './cycle-options.ts';

/** Where reading goes on from: the cursor (and checkpoint) after the landing. */
export interface Landing {
  /** The checkpoint as stored after this step; the cursor of the first read. */
  readonly checkpoint: number | null;
  /** The feed's `program_id` learnt by a `latest` walk, if it passed over a valid event. */
  readonly feedProgramId: string | null;
}

/**
 * A row whose start position was applied reads on from its checkpoint (or from the beginning of
 * the feed when the landing had no number). Otherwise the position is applied now and recorded
 * (`recordStart`): `beginning` reads from the start of the feed, a number N from just below N, and
 * `latest` passes over, without publishing them, the events that were backlog at the row's first
 * run. Whatever becomes of this run, the next one reads every event created since then.
 *
 * Backlog is told from new events by the bank's own numbers where it can be: an event above the
 * highest number a run of the row saw at the end of the feed (`highestSeen`, recorded before the
 * landing) is new. A landing with no number (the feed held no backlog) reads from the beginning of
 * the feed, so once recorded no clock decides anything. Only where no run got as far as
 * recording what it saw does `created_dt`, the bank's clock, decide: an event stamped after the
 * first run began (`firstLeasedAt`, our clock) less the skew allowance is new.
 *
 * @throws StartPositionIncompleteError when a `latest` walk could not reach the end of the feed
 */
export async function applyStartPosition(
  deps: CycleDeps,
  settings: CycleSettings,
  lease: Extract<LeaseGrant, { acquired: true }>,
  pages: FeedReader,
  signal: AbortSignal,
): Promise<Landing> {
  if (lease.startApplied) return { checkpoint: lease.checkpoint, feedProgramId: null };
  const position: StartPosition = settings.startPosition?.position ?? { kind: 'beginning' };
  let landing: Landing = {
    checkpoint: position.kind === 'latest' ? null : initialCursor(position),
    feedProgramId: null,
  };
  if (position.kind === 'latest') {
    const options = settings.startPosition!;
    const allowanceMs = options.clockSkewAllowanceMs ?? START_POSITION_DEFAULTS.clockSkewAllowanceMs;
    const walk = await fastForward(pages, {
      from: null,
      startedAt: lease.firstLeasedAt - allowanceMs,
      newAbove: lease.highestSeen,
      pageLimit: options.pageLimit,
    });
    if (walk.kind === 'interrupted') {
      if (settings.stopSignal?.aborted) return { checkpoint: lease.checkpoint, feedProgramId: null };
      // Nothing recorded: the next run walks again, still from this row's first run.
      throw new StartPositionIncompleteError(settings.program, walk.reached, walk.pages);
    }
    // Where the feed ended goes in first, on its own: a landing refused or cut off still leaves it.
    await deps.checkpoints.recordHighestSeen({
      owner: settings.owner,
      sequenceNumber: walk.highestSeen,
      signal,
    });
    deps.logger.info(
      'Start position "latest": passed over the events created before the first run without publishing them',
      {
        checkpoint: walk.reached,
        skipped: walk.skipped,
        pages: walk.pages,
        highestSeen: walk.highestSeen,
        firstRunStartedAt: new Date(lease.firstLeasedAt).toISOString(),
        clockSkewAllowanceMs: allowanceMs,
      },
    );
    landing = { checkpoint: walk.reached, feedProgramId: walk.feedProgramId };
  }
  await deps.checkpoints.recordStart({
    owner: settings.owner,
    position: formatStartPosition(position),
    checkpoint: landing.checkpoint,
    feedProgramId: landing.feedProgramId,
    signal,
  });
  return landing;
}
