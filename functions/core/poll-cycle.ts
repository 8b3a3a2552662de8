/**
 * One invocation of the poller, step by step (each step in `cycle/`; the checkpoint's and the
 * lease's in `checkpoint/`, whose `index.ts` is their map):
 *
 * 1. take the lease, waiting for the previous run to hand it over (`checkpoint/lease.ts`);
 * 2. apply the start position, once per row (`cycle/start-landing.ts`);
 * 3. read, admit and publish pages until the deadline (`cycle/read-loop.ts`,
 *    `cycle/page-publisher.ts`, `cycle/gap-watch.ts`, `cycle/jump-watch.ts`), the checkpoint written
 *    in the background (`checkpoint/progress.ts`);
 * 4. write the last checkpoint, and release the lease with the cycle's record in one write
 *    (`checkpoint/lease.ts`).
 *
 * The checkpoint only ever moves to the contiguous prefix of accepted events, and never past a
 * number implausibly far beyond the one before it (`sequence-jumps.ts`), so a failure at any point
 * loses nothing: the next invocation starts from the last committed number. It does not
 * know how events were fetched (polls or the stream) nor how many batches are in flight. Every
 * timer the cycle starts is cleared before it returns.
 */

import { completedRecord, failedRecord, releaseLease, takeLease } from './checkpoint/lease.ts';
import { CheckpointProgress } from './checkpoint/progress.ts';
import type { HeldJump, LeaseGrant } from './checkpoint/store.ts';
import type { CycleDeps } from './cycle/cycle-deps.ts';
import { CycleHalt } from './cycle/cycle-halt.ts';
import {
  CYCLE_DEFAULTS,
  type CycleSettings,
  type PollCycleOptions,
  resolveCycleOptions,
} from './cycle/cycle-options.ts';
import {
  type CycleSummary,
  completedSummary,
  failIfTheFeedNeverAnswered,
  leaseBusySummary,
} from './cycle/cycle-summary.ts';
import { FeedIdentity } from './cycle/feed-identity.ts';
import { type FeedSources, openFeedSources } from './cycle/feed-sources.ts';
import { GapWatch } from './cycle/gap-watch.ts';
import { InFlight } from './cycle/in-flight.ts';
import { JumpWatch } from './cycle/jump-watch.ts';
import { LagGauge } from './cycle/lag-gauge.ts';
import { PagePublisher } from './cycle/page-publisher.ts';
import { readAndPublish } from './cycle/read-loop.ts';
import { ReusedIdWatch } from './cycle/reused-id-watch.ts';
import { applyStartPosition, type Landing } from './cycle/start-landing.ts';
import { CycleBudget } from './cycle-budget.ts';
import { ConfigurationError } from './errors.ts';
import { GapLedger } from './gap-ledger.ts';
import { HeldJumps } from './sequence-jumps.ts';

export type { CycleDeps as PollCycleDeps } from './cycle/cycle-deps.ts';
export type { FeedMode, PollCycleOptions, StreamModeOptions } from './cycle/cycle-options.ts';
export type { CycleSummary, StopReason } from './cycle/cycle-summary.ts';
export { MAX_UNCOMMITTED } from './cycle/read-loop.ts';

type GrantedLease = Extract<LeaseGrant, { acquired: true }>;

/** What a cycle holds from the lease on: its settings, budget and lease, and how it reads. */
interface OpenCycle {
  readonly deps: CycleDeps;
  readonly settings: CycleSettings;
  readonly budget: CycleBudget;
  readonly lease: GrantedLease;
  readonly halt: CycleHalt;
  readonly gaps: GapLedger;
  readonly gapWatch: GapWatch;
  readonly heldJumps: HeldJumps;
  readonly jumpWatch: JumpWatch;
  readonly inFlight: InFlight;
  readonly sources: FeedSources;
}

/** What a cycle adds once its start position is applied and reading begins. */
interface ReadingCycle {
  readonly lag: LagGauge;
  readonly progress: CheckpointProgress;
  readonly publisher: PagePublisher;
}

/** Takes the lease and, if it got it, runs the cycle and gives the lease back. */
export async function runPollCycle(deps: CycleDeps, options: PollCycleOptions): Promise<CycleSummary> {
  const settings = resolveCycleOptions(options);
  if (settings.feedMode === 'stream' && deps.stream === undefined) {
    throw new ConfigurationError('Stream mode needs an event stream (deps.stream)', { option: 'feedMode' });
  }
  const budget = new CycleBudget(deps.clock, settings.remainingMs, settings.safetyMarginMs);
  try {
    // Credentials and token are fetched while the lease is awaited, not after the hand-over.
    const prepared = deps.feed.prepare?.(budget.deadlineSignal).catch(() => undefined);
    // The lease lasts until Lambda would end this invocation, plus skew: a crashed run frees it soon.
    const lease = await takeLease(deps, {
      owner: settings.owner,
      expiresAt: budget.end + settings.leaseSkewMs,
      // Waiting past the point where no poll fits would only take the lease to give it back.
      waitMs: Math.min(settings.leaseWaitMs, budget.untilDeadline() - settings.minPollWindowMs),
      checkIntervalMs: settings.leaseCheckIntervalMs,
      // A holder keeps back at most the margin this run keeps (the deployment's), and adds at most the skew cap;
      // it starts no poll within its min poll window of its deadline, so it may stop that much earlier.
      holderStopsBeforeExpiryMs:
        CYCLE_DEFAULTS.maxLeaseSkewMs + settings.safetyMarginMs + settings.minPollWindowMs,
      signal: budget.deadlineSignal,
    });
    if (!lease.acquired) {
      await prepared;
      return leaseBusySummary(deps, settings.program, budget.elapsed(), lease);
    }
    return await holdingTheLease(openCycle(deps, settings, budget, lease));
  } finally {
    budget.dispose();
  }
}

/** Runs the cycle's steps, then releases the lease with the cycle's record, however it ended. */
async function holdingTheLease(cycle: OpenCycle): Promise<CycleSummary> {
  const { deps, settings, lease } = cycle;
  deps.logger.info('Lease taken; polling', {
    checkpoint: lease.checkpoint,
    deadline: new Date(cycle.budget.deadline).toISOString(),
  });
  let reading: ReadingCycle | undefined;
  try {
    cycle.gapWatch.prune();
    cycle.jumpWatch.reportWaiting();
    const landing = await applyStartPosition(
      deps,
      settings,
      lease,
      cycle.sources.pages,
      cycle.budget.workSignal,
    );
    reading = startReading(cycle, landing);
    const summary = await readToTheEnd(cycle, reading);
    await releaseLease(deps, {
      owner: settings.owner,
      budget: cycle.budget,
      record: completedRecord(deps.clock.now(), summary),
      heldJumps: unwrittenHeldJumps(cycle),
    });
    return summary;
  } catch (error) {
    const tally = {
      published: reading?.publisher.published ?? 0,
      lagSeconds: reading?.lag.lagSeconds ?? null,
    };
    await releaseLease(deps, {
      owner: settings.owner,
      budget: cycle.budget,
      record: failedRecord(deps.clock.now(), error, tally),
      heldJumps: unwrittenHeldJumps(cycle),
    });
    throw error;
  }
}

/**
 * Held jumps no checkpoint write carried: a row without a checkpoint has none to write them with,
 * so they go with the lease's release, lest the next run quarantine them again.
 */
function unwrittenHeldJumps({ heldJumps }: OpenCycle): readonly HeldJump[] | undefined {
  if (!heldJumps.changed) return undefined;
  heldJumps.written();
  return [...heldJumps.records];
}

/** The parts that exist from the lease on: the halt, the skipped numbers, the readers. */
function openCycle(
  deps: CycleDeps,
  settings: CycleSettings,
  budget: CycleBudget,
  lease: GrantedLease,
): OpenCycle {
  const halt = new CycleHalt();
  // Ctrl-C stops the next poll, never a publish in progress: its events would only come again.
  const pollSignal = AbortSignal.any(
    [budget.deadlineSignal, halt.signal, settings.stopSignal].filter(
      (signal): signal is AbortSignal => signal !== undefined,
    ),
  );
  const gaps = new GapLedger(lease.openGaps);
  const heldJumps = new HeldJumps(lease.heldJumps, { maxJump: settings.maxSequenceJump });
  heldJumps.passedThrough(lease.checkpoint);
  const inFlight = new InFlight({
    onFailure: (error) => halt.fail(error),
    onSettled: () => sources.stream?.publishingSettled(),
  });
  const window = { deadline: budget.deadline, signal: pollSignal };
  const sources = openFeedSources(deps, settings, window, gaps, heldJumps, {
    get busy() {
      return inFlight.size > 0;
    },
  });
  const gapWatch = new GapWatch(deps, settings, gaps, pollSignal);
  const jumpWatch = new JumpWatch(deps, heldJumps);
  return { deps, settings, budget, lease, halt, gaps, gapWatch, heldJumps, jumpWatch, inFlight, sources };
}

/** The parts that exist once reading begins at `landing`: the checkpoint's progress and the publisher. */
function startReading(cycle: OpenCycle, landing: Landing): ReadingCycle {
  const { deps, settings, budget, lease, halt, gaps, gapWatch, heldJumps } = cycle;
  const identity = new FeedIdentity(settings.program, lease.feedProgramId);
  identity.adopt(landing.feedProgramId);
  const lag = new LagGauge(deps);
  const progress = new CheckpointProgress(deps, {
    owner: settings.owner,
    checkpoint: landing.checkpoint,
    gaps,
    heldJumps,
    signal: budget.workSignal,
    // A lost lease stops publishing now, not after the pages in flight: the new holder publishes them.
    onWriteFailure: (error) => halt.fail(error),
  });
  const publisher = new PagePublisher(deps, settings, { budget, gaps, gapWatch, identity, lag, progress });
  halt.whenHalted(() => publisher.halt());
  return { lag, progress, publisher };
}

/** Reads and publishes to the deadline, writes the last checkpoint, and sums the cycle up. */
async function readToTheEnd(cycle: OpenCycle, reading: ReadingCycle): Promise<CycleSummary> {
  const { deps, settings, budget, lease, halt, sources } = cycle;
  const { lag, progress, publisher } = reading;
  let stopReason = await readAndPublish({
    reader: sources.reader,
    inFlightBytes: settings.heldBytes - (sources.stream?.maxBufferedBytes ?? 0),
    progress,
    publisher,
    gapWatch: cycle.gapWatch,
    jumpWatch: cycle.jumpWatch,
    lag,
    inFlight: cycle.inFlight,
    halt,
    reusedIds: new ReusedIdWatch(deps),
    onCaughtUp: settings.onCaughtUp,
  });
  await progress.flush().catch((error: unknown) => halt.fail(error));
  halt.throwIfFailed();
  if (settings.stopSignal?.aborted) stopReason = 'stopped';
  failIfTheFeedNeverAnswered(sources.reader, progress.committed);
  return completedSummary(deps, sources.reader, {
    program: settings.program,
    published: publisher.published,
    checkpoint: progress.committed,
    startCheckpoint: lease.checkpoint,
    lagSeconds: lag.lagSeconds,
    durationMs: budget.elapsed(),
    stopReason,
  });
}
