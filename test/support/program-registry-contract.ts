/**
 * The program registry's contract (`core/fleet/program-registry.ts`) as one table of cases, run on
 * every registry with the same expectations: the memory and file registries in the unit project,
 * the DynamoDB table on moto in the integration project. Errors are checked by their stable `code`.
 *
 * A registry under test starts from `seed`: items as its storage holds them, which may be
 * malformed (a hand-edited item), so a case can show such an item refused alone.
 */
import { describe, expect, it } from 'vitest';
import type { ProgramRecordInput } from '../../functions/core/fleet/program-record.ts';
import type { ProgramRegistry } from '../../functions/core/fleet/program-registry.ts';

export type ProgramRegistryFactory = (seed: readonly unknown[]) => Promise<ProgramRegistry>;

const record = (name: string, change: Partial<ProgramRecordInput> = {}): ProgramRecordInput => ({
  name,
  secretId: `banking-events-poller/Test/${name}`,
  state: 'active',
  owner: 'operator',
  settings: {},
  ...change,
});

async function refusal(
  promise: Promise<unknown>,
): Promise<{ code?: string; context?: Record<string, unknown> }> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  expect(outcome, 'expected the registry to refuse').toBeDefined();
  return outcome!.error as { code?: string; context?: Record<string, unknown> };
}

interface ContractCase {
  readonly name: string;
  readonly seed?: readonly unknown[];
  run(registry: ProgramRegistry): Promise<void>;
}

export const PROGRAM_REGISTRY_CASES: readonly ContractCase[] = [
  {
    name: 'an empty registry lists nothing and has no record of any name',
    async run(registry) {
      expect(await registry.list()).toEqual({ records: [], refused: [] });
      expect(await registry.get('cards')).toBeUndefined();
    },
  },
  {
    name: 'a record written where none was is stored at revision 1, and listed in name order',
    async run(registry) {
      const stored = await registry.put(record('loans', { settings: { pollLimit: 50 } }), 'absent');
      await registry.put(record('cards', { state: 'paused', owner: 'stack' }), 'absent');

      expect(stored).toEqual({ ...record('loans', { settings: { pollLimit: 50 } }), revision: 1 });
      expect(await registry.get('loans')).toEqual(stored);
      const { records, refused } = await registry.list();
      expect(records.map((r) => [r.name, r.state, r.owner, r.revision])).toEqual([
        ['cards', 'paused', 'stack', 1],
        ['loans', 'active', 'operator', 1],
      ]);
      expect(refused).toEqual([]);
    },
  },
  {
    name: 'a write at the stored revision replaces the record at the next revision',
    async run(registry) {
      await registry.put(record('cards'), 'absent');
      const second = await registry.put(record('cards', { state: 'paused' }), 1);

      expect(second.revision).toBe(2);
      expect(await registry.get('cards')).toEqual(second);
    },
  },
  {
    name: 'a write at another revision is refused and changes nothing',
    async run(registry) {
      await registry.put(record('cards'), 'absent');
      await registry.put(record('cards', { state: 'paused' }), 1);

      const error = await refusal(registry.put(record('cards', { state: 'active' }), 1));
      expect(error.code).toBe('PROGRAM_REVISION_CONFLICT');
      expect(error.context).toMatchObject({ program: 'cards', expected: 1, found: 2 });
      expect((await registry.get('cards'))?.state).toBe('paused');
    },
  },
  {
    name: 'creating a record that exists is refused',
    async run(registry) {
      await registry.put(record('cards'), 'absent');

      const error = await refusal(registry.put(record('cards', { secretId: 'other' }), 'absent'));
      expect(error.code).toBe('PROGRAM_REVISION_CONFLICT');
      expect((await registry.get('cards'))?.secretId).toBe(record('cards').secretId);
    },
  },
  {
    name: 'updating a record that is gone is refused and creates nothing',
    async run(registry) {
      const error = await refusal(registry.put(record('cards'), 3));

      expect(error.code).toBe('PROGRAM_REVISION_CONFLICT');
      expect(error.context).toMatchObject({ found: 'absent' });
      expect(await registry.get('cards')).toBeUndefined();
    },
  },
  {
    name: 'of two writes based on one revision, one is stored and the other refused',
    async run(registry) {
      await registry.put(record('cards'), 'absent');

      const outcomes = await Promise.allSettled([
        registry.put(record('cards', { state: 'paused' }), 1),
        registry.put(record('cards', { secretId: 'banking-events-poller/Test/cards-2' }), 1),
      ]);
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect((await registry.get('cards'))?.revision).toBe(2);
    },
  },
  {
    name: 'a record removed at its revision is gone; at another, or gone already, the removal is refused',
    async run(registry) {
      await registry.put(record('cards'), 'absent');
      await registry.put(record('loans'), 'absent');

      expect((await refusal(registry.remove('cards', 2))).code).toBe('PROGRAM_REVISION_CONFLICT');
      await registry.remove('cards', 1);
      expect(await registry.get('cards')).toBeUndefined();
      expect((await refusal(registry.remove('cards', 1))).code).toBe('PROGRAM_REVISION_CONFLICT');
      expect((await registry.list()).records.map((r) => r.name)).toEqual(['loans']);
    },
  },
  {
    name: 'a malformed record is refused by name before anything is written',
    async run(registry) {
      const error = await refusal(
        registry.put({ ...record('cards'), state: 'stopped' } as unknown as ProgramRecordInput, 'absent'),
      );

      expect(error.code).toBe('PROGRAM_RECORD_INVALID');
      expect(error.context).toMatchObject({ program: 'cards', field: 'state' });
      expect(await registry.get('cards')).toBeUndefined();
    },
  },
  {
    name: 'a malformed stored item is refused alone: the others are listed',
    seed: [
      { ...record('cards'), revision: 1 },
      { ...record('loans'), state: 'stopped', revision: 1 },
      { ...record('savings'), revision: 4 },
    ],
    async run(registry) {
      const { records, refused } = await registry.list();

      expect(records.map((r) => r.name)).toEqual(['cards', 'savings']);
      expect(refused.map((item) => item.key)).toEqual(['loans']);
      expect(refused[0]?.error).toMatchObject({
        code: 'PROGRAM_RECORD_INVALID',
        context: { field: 'state' },
      });
      expect((await refusal(registry.get('loans'))).code).toBe('PROGRAM_RECORD_INVALID');
    },
  },
];

/** Runs every case on a fresh registry from `create`. */
export function describeProgramRegistryContract(name: string, create: ProgramRegistryFactory): void {
  describe(`${name}: the program registry contract`, () => {
    it.each(PROGRAM_REGISTRY_CASES.map((c) => [c.name, c] as const))('%s', async (_name, contractCase) => {
      await contractCase.run(await create(contractCase.seed ?? []));
    });
  });
}
