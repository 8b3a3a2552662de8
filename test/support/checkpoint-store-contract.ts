/**
 * The checkpoint store's contract: the lease, landing, checkpoint and release rules as one table
 * of cases, run against every store (`CheckpointStore`) with the same expectations: the in-memory
 * and file stores in the unit project (`core/checkpoint/rules.ts`), the DynamoDB store on moto in the
 * integration project (its condition expressions). A rule one store keeps and another does not
 * fails here, whichever store drifted.
 *
 * Errors are checked by their stable `code`, not their class: a mutation test runs the cases on a
 * copy of the code (`cycle-mutants.ts`), whose error classes are copies too.
 *
 * To add a landing rule, add a row to `LANDING_CASES`; any other rule, a case to its group.
 */
import { describe, expect, it } from 'vitest';
import type {
  CheckpointState,
  CheckpointStore,
  CommitRequest,
  CycleRecord,
  LeaseGrant,
  StartRequest,
} from '../../functions/core/checkpoint/store.ts';

/** A fresh, empty row of a store, whose clock (for `updatedAt`, `appliedAt`) reads `now()`. */
export type CheckpointStoreFactory = (now: () => number) => CheckpointStore | Promise<CheckpointStore>;

/** What a case works on: one fresh row, and the store's clock. */
export interface ContractRow {
  readonly store: CheckpointStore;
  /** Sets the store's clock (epoch ms); it starts at `T0`. */
  at(now: number): void;
}

export interface ContractCase {
  readonly rule: 'lease' | 'landing' | 'highest seen' | 'checkpoint' | 'release';
  readonly name: string;
  run(row: ContractRow): Promise<void>;
}

export const LEASE_MS = 60_000;
/** The stores' clock when a case starts. */
export const T0 = Date.parse('2026-11-26T00:00:00.000Z');
const FEED = 'feed-program-1';

const lease = (owner: string, now: number) => ({ owner, now, expiresAt: now + LEASE_MS });

const commit = (
  store: CheckpointStore,
  owner: string,
  sequenceNumber: number,
  options: Partial<Omit<CommitRequest, 'owner' | 'sequenceNumber'>> = {},
) => store.commit({ owner, sequenceNumber, feedProgramId: FEED, ...options });

/** What `promise` rejected with (fails the case when it resolves). */
async function refusal(promise: Promise<unknown>): Promise<{ code?: string; context?: unknown }> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  expect(outcome, 'expected the store to refuse').toBeDefined();
  return outcome!.error as { code?: string; context?: unknown };
}

const EMPTY_ROW: CheckpointState = {
  checkpoint: null,
  updatedAt: null,
  lease: null,
  feedProgramId: null,
  openGaps: [],
};

const FAILED_CYCLE: CycleRecord = {
  endedAt: '2026-11-26T00:01:00.000Z',
  outcome: 'failed',
  published: 3,
  lagSeconds: null,
  error: { code: 'PUBLISH_FAILED', message: 'refused' },
};

const COMPLETED_CYCLE: CycleRecord = {
  endedAt: '2026-11-26T00:05:00.000Z',
  outcome: 'completed',
  published: 9,
  lagSeconds: 0,
};

const LEASE_CASES: readonly ContractCase[] = [
  {
    rule: 'lease',
    name: 'grants a free lease, reporting no checkpoint and its first lease time',
    async run({ store }) {
      const grant = await store.acquireLease(lease('A', T0));

      expect(grant).toEqual({
        acquired: true,
        checkpoint: null,
        feedProgramId: null,
        openGaps: [],
        heldJumps: [],
        firstLeasedAt: T0,
        startApplied: false,
        highestSeen: null,
      });
      expect((await store.read()).lease).toEqual({ owner: 'A', expiresAt: T0 + LEASE_MS });
    },
  },
  {
    rule: 'lease',
    name: 'refuses a live lease, naming its holder and expiry, and changes nothing',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      const before = await store.read();

      const grant = await store.acquireLease(lease('B', T0 + 10_000));

      expect(grant).toEqual({ acquired: false, holder: 'A', expiresAt: T0 + LEASE_MS });
      expect(await store.read()).toEqual(before);
    },
  },
  {
    rule: 'lease',
    name: 'still refuses at the very millisecond the lease expires',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));

      const grant = await store.acquireLease(lease('B', T0 + LEASE_MS));

      expect(grant.acquired).toBe(false);
    },
  },
  {
    rule: 'lease',
    name: 'lets another owner take over an expired lease, handing it the row as it is',
    async run({ store }) {
      const openGaps = [{ from: 5, to: 6, seenAt: T0 }];
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 41, { openGaps });

      const grant = await store.acquireLease(lease('B', T0 + LEASE_MS + 1));

      expect(grant).toEqual({
        acquired: true,
        checkpoint: 41,
        feedProgramId: FEED,
        openGaps,
        heldJumps: [],
        firstLeasedAt: T0,
        startApplied: true,
        highestSeen: null,
      } satisfies LeaseGrant);
      expect((await store.read()).lease).toEqual({ owner: 'B', expiresAt: T0 + 2 * LEASE_MS + 1 });
    },
  },
  {
    rule: 'lease',
    name: 'is re-entrant for the holder, extending the expiry',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));

      const grant = await store.acquireLease(lease('A', T0 + 20_000));

      expect(grant.acquired).toBe(true);
      expect((await store.read()).lease).toEqual({ owner: 'A', expiresAt: T0 + 20_000 + LEASE_MS });
    },
  },
  {
    rule: 'lease',
    name: 'keeps the time of the first lease ever taken, whoever takes it later',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await store.acquireLease(lease('B', T0 + 1_000));
      await store.releaseLease('A');

      const grant = await store.acquireLease(lease('C', T0 + 5_000));

      expect(grant).toMatchObject({ acquired: true, firstLeasedAt: T0 });
      expect((await store.read()).firstLeasedAt).toBe(T0);
    },
  },
  {
    rule: 'lease',
    name: 'grants a free lease to exactly one of many simultaneous takers',
    async run({ store }) {
      const grants = await Promise.all(
        Array.from({ length: 8 }, (_, index) => store.acquireLease(lease(`T${index}`, T0))),
      );

      const granted = grants.filter((grant) => grant.acquired);
      expect(granted).toHaveLength(1);
      expect((await store.read()).lease?.owner).toMatch(/^T\d$/);
    },
  },
  {
    rule: 'lease',
    name: 'reads a row whose last cycle completed without a checkpoint as started (written before the start record)',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await store.releaseLease('A', { record: { ...COMPLETED_CYCLE, published: 0 } });

      expect(await store.acquireLease(lease('B', T0 + 1))).toMatchObject({
        acquired: true,
        checkpoint: null,
        startApplied: true,
        highestSeen: null,
      });
    },
  },
];

/**
 * One landing (`recordStart`) on a row whose lease `A` took at `T0`, after `before`: recorded as
 * `recorded` (and `A`'s next grant matches `grant`), or refused with `refused` and nothing written.
 */
export interface LandingCase {
  readonly name: string;
  readonly before?: (row: ContractRow) => Promise<void>;
  /** On top of `{ owner: 'A', position: 'latest', checkpoint: null, feedProgramId: null }`. */
  readonly landing: Partial<StartRequest>;
  readonly expected:
    | { readonly recorded: Partial<CheckpointState>; readonly grant: Partial<LeaseGrant> }
    | { readonly refused: string };
}

export const LANDING_CASES: readonly LandingCase[] = [
  {
    name: 'on an empty feed: applied, no checkpoint, the next run reads from the beginning',
    landing: {},
    expected: {
      recorded: {
        checkpoint: null,
        updatedAt: null,
        start: { position: 'latest', appliedAt: iso(T0 + 500) },
      },
      grant: { checkpoint: null, startApplied: true },
    },
  },
  {
    name: 'with a number: the checkpoint and the feed recorded with the start',
    landing: { checkpoint: 40, feedProgramId: FEED },
    expected: {
      recorded: {
        checkpoint: 40,
        updatedAt: iso(T0 + 500),
        feedProgramId: FEED,
        start: { position: 'latest', appliedAt: iso(T0 + 500) },
      },
      grant: { checkpoint: 40, feedProgramId: FEED, startApplied: true },
    },
  },
  {
    name: 'at a sequence number: the number before it as the checkpoint',
    landing: { position: '10', checkpoint: 9, feedProgramId: null },
    expected: {
      recorded: { checkpoint: 9, feedProgramId: null, start: { position: '10', appliedAt: iso(T0 + 500) } },
      grant: { checkpoint: 9, startApplied: true },
    },
  },
  {
    name: 'refused for an owner that does not hold the lease',
    landing: { owner: 'B', checkpoint: 9 },
    expected: { refused: 'LEASE_LOST' },
  },
  {
    name: 'refused once the holder has released the lease',
    before: ({ store }) => store.releaseLease('A'),
    landing: { checkpoint: 9 },
    expected: { refused: 'LEASE_LOST' },
  },
  {
    name: 'refused on a row that has a checkpoint (a writer without the lease set it)',
    before: async ({ store }) => {
      await commit(store, 'A', 3);
    },
    landing: { position: '10', checkpoint: 9 },
    expected: { refused: 'CHECKPOINT_REGRESSION' },
  },
  {
    name: "refused for another feed than the row's",
    before: ({ store }) =>
      store.recordStart({ owner: 'A', position: 'beginning', checkpoint: null, feedProgramId: FEED }),
    landing: { checkpoint: 7, feedProgramId: 'another-program' },
    expected: { refused: 'FEED_PROGRAM_MISMATCH' },
  },
  {
    name: 'refused when its signal aborted, recording nothing',
    landing: { checkpoint: 9, signal: AbortSignal.abort() },
    expected: { refused: 'DEADLINE_EXCEEDED' },
  },
];

function iso(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

function landingCase(landing: LandingCase): ContractCase {
  return {
    rule: 'landing',
    name: `a landing ${landing.name}`,
    async run(row) {
      const { store } = row;
      await store.acquireLease(lease('A', T0));
      await landing.before?.(row);
      const before = await store.read();
      row.at(T0 + 500);
      const request: StartRequest = {
        owner: 'A',
        position: 'latest',
        checkpoint: null,
        feedProgramId: null,
        ...landing.landing,
      };

      if ('refused' in landing.expected) {
        expect(await refusal(store.recordStart(request))).toMatchObject({ code: landing.expected.refused });
        expect(await store.read()).toEqual(before);
        return;
      }
      await store.recordStart(request);
      expect(await store.read()).toMatchObject(landing.expected.recorded);
      expect(await store.acquireLease(lease('A', T0 + 1_000))).toMatchObject({
        acquired: true,
        ...landing.expected.grant,
      });
    },
  };
}

const CHECKPOINT_CASES: readonly ContractCase[] = [
  {
    rule: 'checkpoint',
    name: 'moves forward for the holder and stamps updatedAt',
    async run({ store, at }) {
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 5);
      at(T0 + 2_000);

      await commit(store, 'A', 10);

      expect(await store.read()).toMatchObject({
        checkpoint: 10,
        updatedAt: iso(T0 + 2_000),
        feedProgramId: FEED,
      });
    },
  },
  {
    rule: 'checkpoint',
    name: 'accepts the same number again (a retried commit)',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 10);

      await commit(store, 'A', 10);

      expect((await store.read()).checkpoint).toBe(10);
    },
  },
  {
    rule: 'checkpoint',
    name: 'never moves backwards, even for the holder',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 10);

      const error = await refusal(commit(store, 'A', 5));

      expect(error).toMatchObject({
        code: 'CHECKPOINT_REGRESSION',
        context: { checkpoint: 10, sequenceNumber: 5 },
      });
      expect((await store.read()).checkpoint).toBe(10);
    },
  },
  {
    rule: 'checkpoint',
    name: 'is refused to an owner that does not hold the lease, naming the holder',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 3);

      const error = await refusal(commit(store, 'B', 9));

      expect(error).toMatchObject({
        code: 'LEASE_LOST',
        context: { owner: 'B', holder: 'A', sequenceNumber: 9 },
      });
      expect((await store.read()).checkpoint).toBe(3);
    },
  },
  {
    rule: 'checkpoint',
    name: 'is refused when nobody holds the lease',
    async run({ store }) {
      const error = await refusal(commit(store, 'A', 1));

      expect(error).toMatchObject({ code: 'LEASE_LOST', context: { owner: 'A', holder: null } });
      expect(await store.read()).toEqual(EMPTY_ROW);
    },
  },
  {
    rule: 'checkpoint',
    name: 'is refused to the old holder once its expired lease was taken over, even moving forward',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await store.acquireLease(lease('B', T0 + LEASE_MS + 1));
      await commit(store, 'B', 60);

      const error = await refusal(commit(store, 'A', 65));

      expect(error).toMatchObject({ code: 'LEASE_LOST' });
      expect((await store.read()).checkpoint).toBe(60);
    },
  },
  {
    rule: 'checkpoint',
    name: 'records the feed at the first commit and refuses another feed afterwards',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 10);

      const error = await refusal(commit(store, 'A', 20, { feedProgramId: 'another-program' }));

      expect(error).toMatchObject({
        code: 'FEED_PROGRAM_MISMATCH',
        context: { expectedProgramId: FEED, receivedProgramId: 'another-program' },
      });
      expect(await store.read()).toMatchObject({ checkpoint: 10, feedProgramId: FEED });
    },
  },
  {
    rule: 'checkpoint',
    name: 'moves without a feed while none is known, and keeps the recorded one',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));

      await commit(store, 'A', 3, { feedProgramId: null });
      expect(await store.read()).toMatchObject({ checkpoint: 3, feedProgramId: null });
      await commit(store, 'A', 5);
      await commit(store, 'A', 7, { feedProgramId: null });

      expect(await store.read()).toMatchObject({ checkpoint: 7, feedProgramId: FEED });
    },
  },
  {
    rule: 'checkpoint',
    name: 'writes open gaps and the newest created_dt with the checkpoint; a commit without them keeps them',
    async run({ store }) {
      const openGaps = [{ from: 5, to: 6, seenAt: T0, gaveUpAt: T0 + 1 }];
      await store.acquireLease(lease('A', T0));

      await commit(store, 'A', 10, { openGaps, newestCreatedDt: '2026-11-26T00:00:05Z' });
      await commit(store, 'A', 12);

      expect(await store.read()).toMatchObject({
        checkpoint: 12,
        openGaps,
        newestCreatedDt: '2026-11-26T00:00:05Z',
      });
      await commit(store, 'A', 13, { openGaps: [] });
      expect((await store.read()).openGaps).toEqual([]);
    },
  },
  {
    rule: 'checkpoint',
    name: 'is not written when its signal aborted',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 5);

      const error = await refusal(commit(store, 'A', 9, { signal: AbortSignal.abort() }));

      expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
      expect(await store.read()).toMatchObject({ checkpoint: 5, lease: { owner: 'A' } });
    },
  },
  {
    rule: 'checkpoint',
    name: 'writes held jumps with the checkpoint, keeps them through commits without them, and grants them with the next lease',
    async run({ store }) {
      const heldJumps = [
        { sequenceNumber: 9_007_199_254_740_991, eventId: 'e-max', fingerprint: 'a'.repeat(64), heldAt: T0 },
        {
          sequenceNumber: 2_147_483_648,
          eventId: 'e-31',
          fingerprint: 'b'.repeat(64),
          heldAt: T0 + 1,
          decision: 'rejected' as const,
          decidedAt: T0 + 2,
        },
      ];
      await store.acquireLease(lease('A', T0));

      await commit(store, 'A', 3, { heldJumps });
      await commit(store, 'A', 5);
      const grant = await store.acquireLease(lease('B', T0 + LEASE_MS + 1));

      expect((await store.read()).checkpoint).toBe(5);
      expect(grant).toMatchObject({ acquired: true, checkpoint: 5, heldJumps });
      await commit(store, 'B', 6, { heldJumps: [] });
      expect((await store.read()).heldJumps).toEqual([]);
    },
  },
  {
    rule: 'checkpoint',
    name: 'refuses held jumps from an owner that does not hold the lease, keeping the recorded ones',
    async run({ store }) {
      const heldJumps = [
        { sequenceNumber: 1_000_004, eventId: 'e-j', fingerprint: 'c'.repeat(64), heldAt: T0 },
      ];
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 3, { heldJumps });
      await store.acquireLease(lease('B', T0 + LEASE_MS + 1));

      const error = await refusal(commit(store, 'A', 4, { heldJumps: [] }));

      expect(error).toMatchObject({ code: 'LEASE_LOST' });
      expect((await store.read()).heldJumps).toEqual(heldJumps);
    },
  },
];

const RELEASE_CASES: readonly ContractCase[] = [
  {
    rule: 'release',
    name: 'frees the lease for the next run and keeps the checkpoint',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await commit(store, 'A', 7);

      await store.releaseLease('A');

      expect(await store.read()).toMatchObject({ checkpoint: 7, lease: null });
      expect(await store.acquireLease(lease('B', T0 + 1_000))).toMatchObject({
        acquired: true,
        checkpoint: 7,
      });
    },
  },
  {
    rule: 'release',
    name: "writes the holder's cycle record with it, a failed one as the last error too",
    async run({ store }) {
      await store.acquireLease(lease('A', T0));

      await store.releaseLease('A', { record: FAILED_CYCLE });

      expect(await store.read()).toMatchObject({
        lease: null,
        lastCycle: FAILED_CYCLE,
        lastError: { code: 'PUBLISH_FAILED', message: 'refused', at: FAILED_CYCLE.endedAt },
      });
    },
  },
  {
    rule: 'release',
    name: 'keeps the last error after a completed cycle',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await store.releaseLease('A', { record: FAILED_CYCLE });
      await store.acquireLease(lease('B', T0 + 1));

      await store.releaseLease('B', { record: COMPLETED_CYCLE });

      expect(await store.read()).toMatchObject({
        lastCycle: COMPLETED_CYCLE,
        lastError: { code: 'PUBLISH_FAILED', at: FAILED_CYCLE.endedAt },
      });
    },
  },
  {
    rule: 'release',
    name: 'by a holder that lost its lease: leaves the lease, writes its record only if it is the newer',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await store.acquireLease(lease('B', T0 + LEASE_MS + 1));
      await store.releaseLease('B', { record: COMPLETED_CYCLE });
      await store.acquireLease(lease('C', T0 + LEASE_MS + 2));
      const older = { ...FAILED_CYCLE, endedAt: '2026-11-26T00:04:00.000Z' };

      await store.releaseLease('A', { record: older });
      const kept = await store.read();
      await store.releaseLease('A', { record: { ...older, endedAt: '2026-11-26T00:06:00.000Z' } });

      expect(kept).toMatchObject({ lastCycle: COMPLETED_CYCLE, lease: { owner: 'C' } });
      expect(await store.read()).toMatchObject({
        lastCycle: { outcome: 'failed', endedAt: '2026-11-26T00:06:00.000Z' },
        lease: { owner: 'C' },
      });
    },
  },
  {
    rule: 'release',
    name: "writes the holder's held jumps with it (a row without a checkpoint); a holder that lost the lease writes none",
    async run({ store }) {
      const heldJumps = [
        { sequenceNumber: 9_007_199_254_740_991, eventId: 'e', fingerprint: 'd'.repeat(64), heldAt: T0 },
      ];
      await store.acquireLease(lease('A', T0));

      await store.releaseLease('A', { record: COMPLETED_CYCLE, heldJumps });
      const written = await store.read();
      await store.acquireLease(lease('B', T0 + 1));
      await store.acquireLease(lease('C', T0 + LEASE_MS + 2));
      await store.releaseLease('B', { heldJumps: [] });

      expect(written).toMatchObject({ checkpoint: null, lease: null, heldJumps, lastCycle: COMPLETED_CYCLE });
      expect(await store.read()).toMatchObject({ heldJumps, lease: { owner: 'C' } });
    },
  },
  {
    rule: 'release',
    name: 'by an owner that does not hold the lease changes nothing',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      const before = await store.read();

      await store.releaseLease('B');

      expect(await store.read()).toEqual(before);
    },
  },
  {
    rule: 'release',
    name: 'with no lease at all changes nothing',
    async run({ store }) {
      await store.releaseLease('A');

      expect(await store.read()).toEqual(EMPTY_ROW);
    },
  },
  {
    rule: 'release',
    name: 'does not happen when its signal aborted',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));

      const error = await refusal(store.releaseLease('A', { signal: AbortSignal.abort() }));

      expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
      expect((await store.read()).lease?.owner).toBe('A');
    },
  },
];

/** The highest number a run saw at the end of the feed: what `latest` trusts over clocks. */
export const HIGHEST_SEEN_CASES: readonly ContractCase[] = [
  {
    rule: 'highest seen',
    name: 'is kept for the holder, never lowered, and granted with the next lease',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 0 });
      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 12 });
      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 5 });
      await store.releaseLease('A');

      const grant = await store.acquireLease(lease('B', T0 + 1));

      expect(grant).toMatchObject({ acquired: true, highestSeen: 12, checkpoint: null, startApplied: false });
      expect((await store.read()).highestSeen).toBe(12);
    },
  },
  {
    rule: 'highest seen',
    name: 'is refused to an invocation that does not hold the lease, leaving the value',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));
      await store.recordHighestSeen({ owner: 'A', sequenceNumber: 4 });
      await store.acquireLease(lease('B', T0 + LEASE_MS + 1));

      const error = await refusal(store.recordHighestSeen({ owner: 'A', sequenceNumber: 9 }));

      expect(error).toMatchObject({ code: 'LEASE_LOST' });
      expect((await store.read()).highestSeen).toBe(4);
    },
  },
  {
    rule: 'highest seen',
    name: 'is not written when its signal aborted',
    async run({ store }) {
      await store.acquireLease(lease('A', T0));

      const error = await refusal(
        store.recordHighestSeen({ owner: 'A', sequenceNumber: 3, signal: AbortSignal.abort() }),
      );

      expect(error).toMatchObject({ code: 'DEADLINE_EXCEEDED' });
      expect((await store.read()).highestSeen ?? null).toBeNull();
    },
  },
];

/** Every case of the contract, by rule. */
export const CHECKPOINT_STORE_CONTRACT: readonly ContractCase[] = [
  ...LEASE_CASES,
  ...LANDING_CASES.map(landingCase),
  ...HIGHEST_SEEN_CASES,
  ...CHECKPOINT_CASES,
  ...RELEASE_CASES,
];

async function runCase(contractCase: ContractCase, newStore: CheckpointStoreFactory): Promise<void> {
  let now = T0;
  const store = await newStore(() => now);
  await contractCase.run({
    store,
    at: (epochMs) => {
      now = epochMs;
    },
  });
}

/** Registers the contract's cases as tests of `name`, one fresh row per case. */
export function describeCheckpointStoreContract(name: string, newStore: CheckpointStoreFactory): void {
  describe(`${name} keeps the checkpoint store contract`, () => {
    for (const rule of ['lease', 'landing', 'highest seen', 'checkpoint', 'release'] as const) {
      describe(rule, () => {
        for (const contractCase of CHECKPOINT_STORE_CONTRACT.filter((each) => each.rule === rule)) {
          it(contractCase.name, () => runCase(contractCase, newStore));
        }
      });
    }
  });
}

/** Runs every case against `newStore` (a mutant's, say) and returns the names of those that failed. */
export async function contractFailures(newStore: CheckpointStoreFactory): Promise<string[]> {
  const failed: string[] = [];
  for (const contractCase of CHECKPOINT_STORE_CONTRACT) {
    try {
      await runCase(contractCase, newStore);
    } catch {
      failed.push(contractCase.name);
    }
  }
  return failed;
}
