/**
 * The checkpoint and its lease: the map. Each question is answered by one function.
 *
 * **What is accepted.** An event counts once the bus has accepted it (its PutEvents entry came
 * back without an error). The checkpoint that may be written is the highest sequence number below
 * which every event read was accepted: the contiguous prefix, `CheckpointTracker.accept`
 * (`tracker.ts`). A store accepts a write only if every rule of `CHECKPOINT_RULES` (`rules.ts`)
 * holds for it.
 *
 * **When it is written.** In the background while publishing goes on, one write at a time, each
 * carrying the newest safe checkpoint: the first at once, then once 500 accepted numbers wait and
 * 100 ms have passed since the last write, or 500 ms after it (`CheckpointCommitter`, its pacing
 * in `#pace`, `progress.ts`). At the end of the cycle, `CheckpointProgress.flush` writes what is
 * left at once. A row's first run writes where its start position landed before it publishes
 * anything (`recordStart`, called by `cycle/start-landing.ts`).
 *
 * **What it may never pass.** An event not yet accepted, nor a number whose twin (a second event
 * with the same number) is still in flight (`CheckpointTracker`), nor an event held for a number
 * implausibly far past the one before it: it is never tracked (`sequence-jumps.ts`; the held
 * jumps are written with the checkpoint, `CommitRequest.heldJumps`). And, whichever store it is, the
 * rules of `rules.ts`: it never moves back (`forwardOnly`), only the lease holder writes
 * (`holderOnly`), the start position never lands over a checkpoint (`noLandingOverCheckpoint`),
 * and a row serves one feed (`sameFeed`). Reading stops running ahead when more than
 * `MAX_UNCOMMITTED` accepted numbers wait for a write (`cycle/read-loop.ts`).
 *
 * **How the lease ends.** The cycle gives it back with its record in the same write
 * (`releaseLease`, `lease.ts`), so the next run, already waiting in `takeLease`, takes it within one
 * check interval. A run that dies holding it leaves it to expire: once `expiresAt` is past
 * (`leaseFree`) the next run takes it over, and every later write of the old holder is refused
 * with `LeaseLostError` (`holderOnly`). An operator's `rewind --force` removes it
 * (`DynamoDbCheckpointStore.moveCheckpoint`).
 *
 * | file          | its one job                                                                 |
 * |---------------|-----------------------------------------------------------------------------|
 * | `store.ts`    | the port: `CheckpointStore`, the row's state, the requests                  |
 * | `rules.ts`    | the rules, each stated once; the `decide…` functions the memory store runs  |
 * | `tracker.ts`  | the contiguous prefix of accepted events                                    |
 * | `progress.ts` | the writes during a cycle: pacing (`CheckpointCommitter`), the cycle's view |
 * | `lease.ts`    | taking the lease (hand-over), giving it back with the cycle's record        |
 *
 * The stores: `adapters/local/memory-checkpoint-store.ts` and `file-checkpoint-store.ts` apply
 * `rules.ts`; `adapters/aws/dynamodb-checkpoint-store.ts` writes each rule as a condition
 * expression under its name (`CONDITION`). One table of cases, `test/support/checkpoint-store-contract.ts`,
 * runs on all three. The core's own files import the file they need, not this one, so the graph
 * stays free of circles; code outside the core imports from here.
 */

export {
  type CycleTally,
  completedRecord,
  failedRecord,
  type LeaseHandoverDeps,
  type LeaseHandoverRequest,
  type LeaseReleaseRequest,
  releaseLease,
  takeLease,
  uniqueLeaseOwner,
} from './lease.ts';
export {
  CHECKPOINT_WRITE_PACING,
  CheckpointCommitter,
  type CheckpointCommitterDeps,
  type CheckpointCommitterOptions,
  CheckpointProgress,
  type CheckpointProgressOptions,
} from './progress.ts';
export {
  CHECKPOINT_RULES,
  type CheckpointRuleName,
  decideCommit,
  decideCycleRecord,
  decideHighestSeen,
  decideLease,
  decideRelease,
  decideStart,
  EMPTY_CHECKPOINT_STATE,
  isStartApplied,
  type LeaseDecision,
} from './rules.ts';
export type {
  CheckpointState,
  CheckpointStore,
  CommitRequest,
  CycleRecord,
  HeldJump,
  HighestSeenRequest,
  LeaseGrant,
  LeaseRequest,
  OpenGap,
  RecordedError,
  ReleaseOptions,
  StartRecord,
  StartRequest,
} from './store.ts';
export { CheckpointTracker } from './tracker.ts';
