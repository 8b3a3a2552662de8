/**
 * The stack's seeding of its programs: what a deploy adds, updates and removes, what it never
 * touches (an operator's record, a record's state and settings), and how it meets another writer.
 */
import { describe, expect, it } from 'vitest';
import { MemoryProgramRegistry } from '../../../../functions/adapters/local/memory-program-registry.ts';
import { ProgramRevisionConflictError, ProgramSeedConflictError } from '../../../../functions/core/errors.ts';
import type { ProgramRecord, ProgramRecordInput } from '../../../../functions/core/fleet/program-record.ts';
import type { ExpectedRevision, ProgramListing } from '../../../../functions/core/fleet/program-registry.ts';
import { seedPlan, seedRegistry } from '../../../../functions/core/fleet/seed-plan.ts';

function record(fields: Partial<ProgramRecord> & { name: string }): ProgramRecord {
  return {
    secretId: `bep/Prod/${fields.name}`,
    state: 'active',
    owner: 'stack',
    settings: {},
    revision: 1,
    ...fields,
  };
}

const stackProgram = (name: string, secretId = `bep/Prod/${name}`) => ({ name, secretId });

describe('seedPlan', () => {
  it('adds the programs the registry lacks as active records of the stack', () => {
    const plan = seedPlan({ records: [], refused: [] }, [stackProgram('cards')]);

    expect(plan).toEqual({
      steps: [
        {
          kind: 'add',
          record: {
            name: 'cards',
            secretId: 'bep/Prod/cards',
            state: 'active',
            owner: 'stack',
            settings: {},
          },
        },
      ],
      unchanged: 0,
    });
  });

  it("updates a stack record's secret, keeping its state and settings, and leaves an unchanged one alone", () => {
    const listing: ProgramListing = {
      records: [
        record({ name: 'cards', state: 'paused', settings: { pollLimit: 50 }, revision: 4 }),
        record({ name: 'loans' }),
      ],
      refused: [],
    };

    const plan = seedPlan(listing, [stackProgram('cards', 'arn:new'), stackProgram('loans')]);

    expect(plan).toEqual({
      steps: [
        {
          kind: 'update',
          record: {
            name: 'cards',
            secretId: 'arn:new',
            state: 'paused',
            owner: 'stack',
            settings: { pollLimit: 50 },
          },
          revision: 4,
        },
      ],
      unchanged: 1,
    });
  });

  it('removes the stack records the stack no longer names, and never an operator record', () => {
    const listing: ProgramListing = {
      records: [record({ name: 'gone', revision: 7 }), record({ name: 'added', owner: 'operator' })],
      refused: [],
    };

    expect(seedPlan(listing, []).steps).toEqual([{ kind: 'remove', name: 'gone', revision: 7 }]);
  });

  it('refuses a program of the stack that an operator added, naming it, and plans nothing', () => {
    const listing: ProgramListing = { records: [record({ name: 'cards', owner: 'operator' })], refused: [] };

    expect(() => seedPlan(listing, [stackProgram('cards'), stackProgram('loans')])).toThrow(
      expect.objectContaining({
        code: 'PROGRAM_SEED_CONFLICT',
        context: { programs: 'cards' },
        message: expect.stringMatching(/cards were added by an operator.*programs remove/),
      }),
    );
  });

  it('refuses a program of the stack whose item is unreadable, and ignores other unreadable items', () => {
    const refused = [
      { key: 'cards', error: new Error('bad') },
      { key: '<item 3>', error: new Error('bad') },
    ];

    expect(() => seedPlan({ records: [], refused }, [stackProgram('cards')])).toThrow(
      ProgramSeedConflictError,
    );
    expect(seedPlan({ records: [], refused }, [stackProgram('loans')]).steps).toHaveLength(1);
  });

  it('names at most ten programs in its reason, and how many more', () => {
    const records = Array.from({ length: 25 }, (_, index) =>
      record({ name: `p${index}`, owner: 'operator' }),
    );
    const programs = records.map(({ name }) => stackProgram(name));

    expect(() => seedPlan({ records, refused: [] }, programs)).toThrow(/p9 and 15 more were added/);
  });
});

describe('seedRegistry', () => {
  it('makes the registry hold the stack programs, and a second deploy changes nothing', async () => {
    const registry = new MemoryProgramRegistry([
      record({ name: 'gone' }),
      record({ name: 'mine', owner: 'operator' }),
      record({ name: 'cards', secretId: 'old', state: 'paused' }),
    ]);
    const programs = [stackProgram('cards'), ...Array.from({ length: 40 }, (_, i) => stackProgram(`p${i}`))];

    const first = await seedRegistry(registry, programs, { concurrency: 4 });
    const second = await seedRegistry(registry, programs);

    expect(first).toEqual({ added: 40, updated: 1, removed: 1, unchanged: 0 });
    expect(second).toEqual({ added: 0, updated: 0, removed: 0, unchanged: 41 });
    const { records } = await registry.list();
    expect(records.map(({ name }) => name)).toEqual(
      ['cards', 'mine', ...Array.from({ length: 40 }, (_, i) => `p${i}`)].sort(),
    );
    expect(records.find(({ name }) => name === 'cards')).toMatchObject({
      secretId: 'bep/Prod/cards',
      state: 'paused',
    });
  });

  it('plans again after another writer changed a record meanwhile, keeping that writer’s change', async () => {
    const { revision: _r, ...cards } = record({ name: 'cards', secretId: 'old' });
    const registry = new InterferingRegistry([record({ name: 'cards', secretId: 'old' })], (write) =>
      // An operator pauses cards between the deploy's read and its write.
      write({ ...cards, state: 'paused' }, 1),
    );

    const outcome = await seedRegistry(registry, [stackProgram('cards')]);

    expect(outcome).toMatchObject({ updated: 1 });
    expect(registry.writesRefused).toBe(1);
    expect(await registry.get('cards')).toMatchObject({
      secretId: 'bep/Prod/cards',
      state: 'paused',
      revision: 3,
    });
  });

  it('gives up after its rounds when writers keep interfering, with the conflict', async () => {
    let revision = 1;
    const { revision: _r, ...cards } = record({ name: 'cards', secretId: 'old' });
    const registry = new InterferingRegistry(
      [record({ name: 'cards', secretId: 'old' })],
      async (write) => {
        await write(cards, revision);
        revision += 1;
      },
      Number.POSITIVE_INFINITY,
    );

    await expect(seedRegistry(registry, [stackProgram('cards')], { rounds: 2 })).rejects.toBeInstanceOf(
      ProgramRevisionConflictError,
    );
    expect(registry.writesRefused).toBe(2);
  });
});

type Write = (record: ProgramRecordInput, ifRevision: ExpectedRevision) => Promise<ProgramRecord>;

/** A registry in which another writer (`interfere`) writes right before each of the first `times` writes. */
class InterferingRegistry extends MemoryProgramRegistry {
  writesRefused = 0;
  #times: number;
  readonly #interfere: (write: Write) => Promise<unknown>;

  constructor(items: unknown[], interfere: (write: Write) => Promise<unknown>, times = 1) {
    super(items);
    this.#interfere = interfere;
    this.#times = times;
  }

  override async put(record: ProgramRecordInput, ifRevision: ExpectedRevision): Promise<ProgramRecord> {
    if (this.#times > 0) {
      this.#times -= 1;
      await this.#interfere((other, revision) => super.put(other, revision));
    }
    try {
      return await super.put(record, ifRevision);
    } catch (error) {
      if (error instanceof ProgramRevisionConflictError) this.writesRefused += 1;
      throw error;
    }
  }
}
