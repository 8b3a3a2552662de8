import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileCheckpointStore } from '../../../../functions/adapters/local/file-checkpoint-store.ts';
import {
  CheckpointRegressionError,
  ConfigurationError,
  FeedProgramMismatchError,
  LeaseLostError,
} from '../../../../functions/core/errors.ts';

async function tempFile(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'checkpoint-')), 'nested', 'checkpoint.json');
}

describe('FileCheckpointStore', () => {
  it('persists the checkpoint across instances (a restart resumes from it)', async () => {
    const path = await tempFile();
    const first = new FileCheckpointStore(path);
    await first.acquireLease({ owner: 'a', expiresAt: Date.now() + 60_000, now: Date.now() });
    await first.commit({ owner: 'a', sequenceNumber: 17, feedProgramId: 'program-1' });
    await first.releaseLease('a');

    const second = new FileCheckpointStore(path);
    expect(await second.read()).toMatchObject({ checkpoint: 17, lease: null, feedProgramId: 'program-1' });
    expect(JSON.parse(await readFile(path, 'utf8')).checkpoint).toBe(17);
  });

  it('applies the lease rules: busy while live, commit only by the holder, never backwards', async () => {
    const store = new FileCheckpointStore(await tempFile());
    const now = Date.now();
    expect(await store.acquireLease({ owner: 'a', expiresAt: now + 60_000, now })).toEqual({
      acquired: true,
      checkpoint: null,
      feedProgramId: null,
      openGaps: [],
      firstLeasedAt: now,
      startApplied: false,
      highestSeen: null,
    });
    expect(await store.acquireLease({ owner: 'b', expiresAt: now + 60_000, now })).toMatchObject({
      acquired: false,
      holder: 'a',
    });
    const commit = (owner: string, sequenceNumber: number, feedProgramId = 'program-1') =>
      store.commit({ owner, sequenceNumber, feedProgramId });
    await expect(commit('b', 3)).rejects.toBeInstanceOf(LeaseLostError);
    await commit('a', 5);
    await expect(commit('a', 4)).rejects.toBeInstanceOf(CheckpointRegressionError);
    await expect(commit('a', 6, 'program-2')).rejects.toBeInstanceOf(FeedProgramMismatchError);
    expect((await store.read()).checkpoint).toBe(5);
    expect(await store.acquireLease({ owner: 'b', expiresAt: now + 120_000, now: now + 61_000 })).toEqual({
      acquired: true,
      checkpoint: 5,
      feedProgramId: 'program-1',
      openGaps: [],
      firstLeasedAt: now,
      startApplied: true,
      highestSeen: null,
    });
  });

  it('keeps the highest number seen across instances, for the lease holder only, never lowered', async () => {
    const path = await tempFile();
    const now = Date.now();
    const first = new FileCheckpointStore(path);
    await first.acquireLease({ owner: 'a', expiresAt: now + 60_000, now });
    await first.recordHighestSeen({ owner: 'a', sequenceNumber: 7 });
    await first.recordHighestSeen({ owner: 'a', sequenceNumber: 3 });
    await expect(first.recordHighestSeen({ owner: 'b', sequenceNumber: 9 })).rejects.toBeInstanceOf(
      LeaseLostError,
    );

    const second = new FileCheckpointStore(path);
    expect(await second.acquireLease({ owner: 'a', expiresAt: now + 60_000, now })).toMatchObject({
      highestSeen: 7,
    });
    expect(JSON.parse(await readFile(path, 'utf8')).highestSeen).toBe(7);
  });

  it('reports a corrupt file with its path and what to do', async () => {
    const path = await tempFile();
    const store = new FileCheckpointStore(path);
    await store.read();
    await store.releaseLease('nobody');
    await writeFile(path, '{ not json');
    await expect(store.read()).rejects.toBeInstanceOf(ConfigurationError);
    await expect(store.read()).rejects.toThrow(/is not valid; fix or delete it/);
  });
});
