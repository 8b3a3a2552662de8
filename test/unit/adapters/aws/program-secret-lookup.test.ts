import { describe, expect, it } from 'vitest';
import { lookUpProgramSecret } from '../../../../functions/adapters/aws/program-secret-lookup.ts';
import { ProgramSecretScope } from '../../../../functions/adapters/aws/program-secret-scope.ts';
import { MemoryProgramRegistry } from '../../../../functions/adapters/local/memory-program-registry.ts';
import { ProgramSecretRefusedError } from '../../../../functions/core/errors.ts';

const PREFIX = 'banking-events-poller/Prod/';
const record = (name: string, secretId: string) => ({
  name,
  secretId,
  state: 'active',
  owner: 'operator',
  settings: {},
  revision: 1,
});
const registry = new MemoryProgramRegistry([
  record('default', `${PREFIX}default-from-record`),
  record('cards', `${PREFIX}cards`),
  record('loans', 'other-team/loans'),
]);
const stackSecrets = new Map([['default', 'stack-default-secret']]);
const sources = {
  stackSecrets,
  registry,
  scope: new ProgramSecretScope({ prefix: PREFIX, stackSecrets: stackSecrets.values() }),
};

describe('lookUpProgramSecret', () => {
  it("takes the stack's own secret first, then the record's", async () => {
    expect(await lookUpProgramSecret('default', sources)).toBe('stack-default-secret');
    expect(await lookUpProgramSecret('cards', sources)).toBe(`${PREFIX}cards`);
  });

  it("refuses a record's secret that is not the deployment's, by the program's name", async () => {
    await expect(lookUpProgramSecret('loans', sources)).rejects.toThrow(ProgramSecretRefusedError);
    await expect(lookUpProgramSecret('loans', sources)).rejects.toThrow(/Program loans's secretId/);
  });

  it('answers undefined for a program neither knows, and reads no table when there is none', async () => {
    expect(await lookUpProgramSecret('nope', sources)).toBeUndefined();
    expect(await lookUpProgramSecret('cards', { ...sources, registry: undefined })).toBeUndefined();
  });
});
