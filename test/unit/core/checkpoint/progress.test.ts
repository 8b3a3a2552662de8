/**
 * The committer's write pacing on a virtual clock: a write carries a few hundred numbers during a
 * catch-up rather than whatever 100 ms brought, a trickle is written within `maxIntervalMs`, and
 * `flush` writes at once.
 */
import { describe, expect, it } from 'vitest';
import { MemoryCheckpointStore } from '../../../../functions/adapters/local/memory-checkpoint-store.ts';
import {
  CHECKPOINT_WRITE_PACING,
  CheckpointCommitter,
} from '../../../../functions/core/checkpoint/progress.ts';
import type { CommitRequest } from '../../../../functions/core/checkpoint/store.ts';
import { GapLedger } from '../../../../functions/core/gap-ledger.ts';
import { FakeClock } from '../../../support/fake-clock.ts';
import { RecordingLogger, RecordingMetrics } from '../../../support/in-memory-ports.ts';

/** Records each write's virtual time and checkpoint; the lease is not what is tested here. */
class RecordingStore extends MemoryCheckpointStore {
  readonly writes: Array<{ readonly at: number; readonly sequenceNumber: number }> = [];

  constructor(private readonly clock: FakeClock) {
    super();
  }

  override async commit(request: CommitRequest): Promise<void> {
    this.writes.push({ at: this.clock.now(), sequenceNumber: request.sequenceNumber });
  }
}

function setUp(committed: number | null = 0) {
  const clock = new FakeClock();
  const store = new RecordingStore(clock);
  const committer = new CheckpointCommitter(
    { checkpoints: store, clock, metrics: new RecordingMetrics(), logger: new RecordingLogger() },
    { owner: 'owner-1', committed, gaps: new GapLedger([]), signal: new AbortController().signal },
  );
  const start = clock.now();
  /** Virtual ms since the start, for reading the writes. */
  const writes = () => store.writes.map((write) => ({ ...write, at: write.at - start }));
  return { clock, committer, writes };
}

const { minIntervalMs, writeAfterNumbers, maxIntervalMs } = CHECKPOINT_WRITE_PACING;

describe('CheckpointCommitter pacing', () => {
  it('writes a trickle within maxIntervalMs of the last write, all of it in one write', async () => {
    const { clock, committer, writes } = setUp();

    committer.offer(1, 'program-1');
    await clock.sleep(10);
    for (let sequence = 2; sequence <= 20; sequence += 1) {
      committer.offer(sequence, 'program-1');
      await clock.sleep(10);
    }
    await clock.sleep(maxIntervalMs);

    expect(writes()).toEqual([
      { at: 0, sequenceNumber: 1 },
      { at: maxIntervalMs, sequenceNumber: 20 },
    ]);
  });

  it(`writes once ${writeAfterNumbers} numbers wait, but never sooner than minIntervalMs after the last`, async () => {
    const { clock, committer, writes } = setUp();

    committer.offer(1, 'program-1');
    await clock.sleep(10);
    committer.offer(1 + writeAfterNumbers, 'program-1');
    await clock.sleep(minIntervalMs + 100);
    // Enough again, offered while the pause runs: the pause is cut short.
    committer.offer(1 + 2 * writeAfterNumbers, 'program-1');
    await clock.sleep(maxIntervalMs);

    expect(writes()).toEqual([
      { at: 0, sequenceNumber: 1 },
      { at: minIntervalMs, sequenceNumber: 1 + writeAfterNumbers },
      { at: minIntervalMs + 110, sequenceNumber: 1 + 2 * writeAfterNumbers },
    ]);
  });

  it('writes everything offered at once when flushed', async () => {
    const { clock, committer, writes } = setUp();

    committer.offer(1, 'program-1');
    await clock.sleep(10);
    committer.offer(3, 'program-1');
    await committer.flush();

    expect(writes()).toEqual([
      { at: 0, sequenceNumber: 1 },
      { at: 10, sequenceNumber: 3 },
    ]);
  });

  it("writes a new row's first checkpoint at once", async () => {
    const { committer, writes } = setUp(null);

    committer.offer(5, 'program-1');
    await committer.settled();

    expect(writes()).toEqual([{ at: 0, sequenceNumber: 5 }]);
  });
});
