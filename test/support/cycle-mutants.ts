/**
 * Mutants of the cycle for mutation tests: a copy of `functions/` with one fix undone, loaded as
 * the no-loss property's modules. If the property still passes on a mutant, it cannot see the bug
 * the fix closed. Each edit must match its file exactly once, so a change to the code that makes a
 * mutant meaningless fails the test instead of passing it.
 */
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CycleModules } from './no-loss-property.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** One textual edit of a file under `functions/`. */
export interface SourceEdit {
  readonly file: string;
  readonly find: string;
  readonly replace: string;
}

export interface Mutant {
  readonly name: string;
  readonly edits: readonly SourceEdit[];
}

/** A mutant's copy of the code: the cycle's modules, and any other module of the copy. */
export interface MutantCode {
  readonly modules: CycleModules;
  /** Imports `file` (under `functions/`) from the mutant's copy. */
  import(file: string): Promise<Record<string, unknown>>;
}

/** Copies `functions/` into `.mutants/<name>/` (git-ignored), applies the edits and loads the modules. */
export async function loadMutant(mutant: Mutant): Promise<CycleModules> {
  return (await buildMutant(mutant)).modules;
}

/** The same, with a way to import the copy's other modules (a store's adapter, say). */
export async function buildMutant(mutant: Mutant): Promise<MutantCode> {
  const root = path.join(REPO, '.mutants', mutant.name.replace(/[^a-z0-9-]+/gi, '-'));
  await rm(root, { recursive: true, force: true });
  await cp(path.join(REPO, 'functions'), path.join(root, 'functions'), { recursive: true });
  for (const edit of mutant.edits) {
    const file = path.join(root, 'functions', edit.file);
    const text = await readFile(file, 'utf8');
    const occurrences = text.split(edit.find).length - 1;
    if (occurrences !== 1) {
      throw new Error(`Mutant "${mutant.name}": expected one match in ${edit.file}, found ${occurrences}`);
    }
    await writeFile(file, text.replace(edit.find, edit.replace));
  }
  const load = (file: string): Promise<Record<string, unknown>> =>
    import(/* @vite-ignore */ path.join(root, 'functions', file));
  const [cycle, store, claimCheck, errors, model] = await Promise.all([
    load('core/poll-cycle.ts'),
    load('adapters/local/memory-checkpoint-store.ts'),
    load('core/claim-check-publisher.ts'),
    load('core/errors.ts'),
    load('core/event-model.ts'),
  ]);
  const modules = {
    runPollCycle: cycle.runPollCycle,
    MemoryCheckpointStore: store.MemoryCheckpointStore,
    ClaimCheckPublisher: claimCheck.ClaimCheckPublisher,
    UpstreamHttpError: errors.UpstreamHttpError,
    PublishError: errors.PublishError,
    parsePollResponse: model.parsePollResponse,
  } as CycleModules;
  return { modules, import: load };
}
