import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileCheckpointStore } from '../../../../functions/adapters/local/file-checkpoint-store.ts';
import { ConfigurationError, LeaseLostError } from '../../../../functions/core/errors.ts';

async function tempFile(): Promise<string> {
  return join(await mkdtemp(join(tmpdir(), 'checkpoint-')), 'nested', 'checkpoint.json');
}

// The lease and checkpoint rules: checkpoint-store-contract.test.ts, the same cases as every store.
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
