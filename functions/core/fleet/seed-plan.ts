/**
 * What a deploy does to the registry so that its records match the stack's programs (the
 * construct's `programs` prop): the stack owns the records it seeded (`owner: 'stack'`), and only
 * those. For each program of the stack:
 *
 * - no record: add it, active, with no settings of its own;
 * - a record the stack owns: update its secret when it changed; its state and settings stay (an
 *   operator may pause a stack program, and the pause survives every deploy);
 * - a record an operator added: refused (`ProgramSeedConflictError`): the deploy fails naming it,
 *   and nothing is written; remove it (`programs remove`) or drop it from the props;
 * - an item that is not a readable record: refused the same way (a hand-edited item is fixed or
 *   deleted by hand, not overwritten).
 *
 * And every record the stack owns that the stack no longer names is removed: forgotten, not its
 * checkpoint row nor its secret, so adding it back resumes where it stopped.
 */
import { ProgramRevisionConflictError, ProgramSeedConflictError } from '../errors.ts';
import type { ProgramRecord, ProgramRecordInput } from './program-record.ts';
import type { ProgramListing, ProgramRegistry } from './program-registry.ts';

/** A program of the stack: its name and its secret's id or ARN. */
export interface StackProgram {
  readonly name: string;
  readonly secretId: string;
}

export type SeedStep =
  | { readonly kind: 'add'; readonly record: ProgramRecordInput }
  | { readonly kind: 'update'; readonly record: ProgramRecordInput; readonly revision: number }
  | { readonly kind: 'remove'; readonly name: string; readonly revision: number };

export interface SeedPlan {
  readonly steps: readonly SeedStep[];
  /** Stack programs whose record is already as the stack has it. */
  readonly unchanged: number;
}

/** How many names an error lists before "and n more": the deploy's reason stays short. */
const NAMES_SHOWN = 10;

/**
 * The steps that make `listing` hold exactly `programs` as the stack's records.
 *
 * @throws ProgramSeedConflictError naming the programs an operator owns, or whose item is unreadable.
 * @example
 * seedPlan(await registry.list(), [{ name: 'cards', secretId: 'arn:…' }]);
 */
export function seedPlan(listing: ProgramListing, programs: readonly StackProgram[]): SeedPlan {
  const records = new Map(listing.records.map((record) => [record.name, record]));
  const unreadable = new Set(listing.refused.map((refused) => refused.key));
  const wanted = new Set(programs.map((program) => program.name));
  const operators = programs.filter((program) => records.get(program.name)?.owner === 'operator');
  if (operators.length > 0) {
    throw conflict(
      operators.map((program) => program.name),
      'were added by an operator (programs add), not by this stack',
      'remove each (`banking-events-poller programs remove`; its checkpoint and secret stay) or drop it from the programs prop',
    );
  }
  const broken = programs.filter((program) => !records.has(program.name) && unreadable.has(program.name));
  if (broken.length > 0) {
    throw conflict(
      broken.map((program) => program.name),
      'have an item in the programs table that is not a readable program record',
      'fix or delete each item by hand (docs/runbook.md#program-seed-conflict)',
    );
  }
  const steps: SeedStep[] = [];
  let unchanged = 0;
  for (const program of programs) {
    const record = records.get(program.name);
    if (record === undefined) {
      steps.push({ kind: 'add', record: stackRecord(program) });
    } else if (record.secretId !== program.secretId) {
      steps.push({
        kind: 'update',
        record: { ...inputOf(record), secretId: program.secretId },
        revision: record.revision,
      });
    } else {
      unchanged += 1;
    }
  }
  for (const record of listing.records) {
    if (record.owner === 'stack' && !wanted.has(record.name)) {
      steps.push({ kind: 'remove', name: record.name, revision: record.revision });
    }
  }
  return { steps, unchanged };
}

function stackRecord(program: StackProgram): ProgramRecordInput {
  return { name: program.name, secretId: program.secretId, state: 'active', owner: 'stack', settings: {} };
}

function inputOf(record: ProgramRecord): ProgramRecordInput {
  const { revision: _revision, ...input } = record;
  return input;
}

function conflict(names: readonly string[], problem: string, fix: string): ProgramSeedConflictError {
  const shown = names.slice(0, NAMES_SHOWN).join(', ');
  const more = names.length > NAMES_SHOWN ? ` and ${names.length - NAMES_SHOWN} more` : '';
  return new ProgramSeedConflictError(
    `Programs of the stack ${shown}${more} ${problem}: nothing was seeded. Fix: ${fix}`,
    { programs: names.slice(0, NAMES_SHOWN).join(',') },
  );
}

/** What a deploy's seeding did. */
export interface SeedOutcome {
  readonly added: number;
  readonly updated: number;
  readonly removed: number;
  readonly unchanged: number;
}

export interface SeedRegistryOptions {
  /** Writes in flight at once. @default 16 */
  readonly concurrency?: number;
  /** Plans made again after a write met another writer's revision. @default 3 */
  readonly rounds?: number;
  readonly signal?: AbortSignal;
}

/**
 * Makes `registry` hold `programs` as the stack's records (`seedPlan`), writing each step under
 * the revision it was planned from. A write that meets another writer (an operator pausing a
 * program meanwhile) is not forced: the registry is read again and the remaining steps planned
 * anew, at most `rounds` times.
 *
 * @throws ProgramSeedConflictError from the plan; ProgramRevisionConflictError when writers kept
 *   interfering through every round; the registry's own errors.
 */
export async function seedRegistry(
  registry: ProgramRegistry,
  programs: readonly StackProgram[],
  options: SeedRegistryOptions = {},
): Promise<SeedOutcome> {
  const { concurrency = 16, rounds = 3, signal } = options;
  const done = { added: 0, updated: 0, removed: 0 };
  for (let round = 1; ; round += 1) {
    const plan = seedPlan(await registry.list(signal), programs);
    const conflicts: unknown[] = [];
    const queue = [...plan.steps];
    const lane = async (): Promise<void> => {
      for (let step = queue.shift(); step !== undefined; step = queue.shift()) {
        signal?.throwIfAborted();
        try {
          await apply(registry, step, signal);
          done[step.kind === 'add' ? 'added' : step.kind === 'update' ? 'updated' : 'removed'] += 1;
        } catch (error) {
          if (!(error instanceof ProgramRevisionConflictError)) throw error;
          conflicts.push(error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queue.length) }, lane));
    if (conflicts.length === 0) return { ...done, unchanged: plan.unchanged };
    if (round >= rounds) throw conflicts[0];
  }
}

function apply(registry: ProgramRegistry, step: SeedStep, signal?: AbortSignal): Promise<unknown> {
  switch (step.kind) {
    case 'add':
      return registry.put(step.record, 'absent', signal);
    case 'update':
      return registry.put(step.record, step.revision, signal);
    case 'remove':
      return registry.remove(step.name, step.revision, signal);
  }
}
