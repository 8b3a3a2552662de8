/**
 * The program registry contract (`test/support/program-registry-contract.ts`) on the registries in
 * memory and in a file; the DynamoDB registry runs the same cases on moto.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileProgramRegistry } from '../../../../functions/adapters/local/file-program-registry.ts';
import { MemoryProgramRegistry } from '../../../../functions/adapters/local/memory-program-registry.ts';
import { describeProgramRegistryContract } from '../../../support/program-registry-contract.ts';

async function programFile(seed: readonly unknown[]): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), 'programs-')), 'programs.json');
  if (seed.length > 0) await writeFile(path, JSON.stringify({ programs: seed }));
  return path;
}

describeProgramRegistryContract('MemoryProgramRegistry', async (seed) => new MemoryProgramRegistry(seed));

describeProgramRegistryContract(
  'FileProgramRegistry',
  async (seed) => new FileProgramRegistry(await programFile(seed)),
);

describe('FileProgramRegistry', () => {
  it('keeps its records in the file, for the next process to read', async () => {
    const path = await programFile([]);
    await new FileProgramRegistry(path).put(
      { name: 'cards', secretId: 'bep/Test/cards', state: 'active', owner: 'operator', settings: {} },
      'absent',
    );

    expect(JSON.parse(await readFile(path, 'utf8'))).toEqual({
      programs: [
        {
          name: 'cards',
          secretId: 'bep/Test/cards',
          state: 'active',
          owner: 'operator',
          settings: {},
          revision: 1,
        },
      ],
    });
    expect((await new FileProgramRegistry(path).list()).records.map((r) => r.name)).toEqual(['cards']);
  });

  it.each([
    ['not JSON', '{"programs": ['],
    ['without a programs list', '{"records": []}'],
  ])('names a file that is %s', async (_name, text) => {
    const path = await programFile([]);
    await writeFile(path, text);

    await expect(new FileProgramRegistry(path).list()).rejects.toMatchObject({
      code: 'CONFIGURATION_INVALID',
      context: { path },
    });
  });
});
