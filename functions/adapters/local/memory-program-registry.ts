/**
 * Program records in memory (tests), and the base of the file registry (`file-program-registry.ts`),
 * which only loads and saves the same items. Items are kept as stored, unchecked, so that a test
 * can seed a malformed one and see it refused alone, as the DynamoDB table's would be. Writes are
 * read-modify-write, one at a time within the process.
 */
import { ProgramRevisionConflictError } from '../../core/errors.ts';
import {
  type ProgramRecord,
  type ProgramRecordInput,
  parseProgramRecord,
  parseProgramRecordInput,
} from '../../core/fleet/program-record.ts';
import {
  type ExpectedRevision,
  type ProgramListing,
  type ProgramRegistry,
  programListing,
} from '../../core/fleet/program-registry.ts';
import { isJsonObject } from '../../core/json-object.ts';

export class MemoryProgramRegistry implements ProgramRegistry {
  #items: readonly unknown[];
  /** Writes one after another: each reads what the one before it saved. */
  #writes: Promise<unknown> = Promise.resolve();

  /** @param items stored items, as a table or a file would hold them (records, or anything). */
  constructor(items: readonly unknown[] = []) {
    this.#items = [...items];
  }

  protected async load(): Promise<readonly unknown[]> {
    return this.#items;
  }

  protected async save(items: readonly unknown[]): Promise<void> {
    this.#items = items;
  }

  /** Where an item comes from, in errors. */
  protected where(index: number): string {
    return `program registry item ${index}`;
  }

  async list(signal?: AbortSignal): Promise<ProgramListing> {
    signal?.throwIfAborted();
    return programListing(await this.load(), (index) => this.where(index));
  }

  async get(name: string, signal?: AbortSignal): Promise<ProgramRecord | undefined> {
    signal?.throwIfAborted();
    const items = await this.load();
    const index = indexOf(items, name);
    return index < 0 ? undefined : parseProgramRecord(items[index], this.where(index));
  }

  async put(
    record: ProgramRecordInput,
    ifRevision: ExpectedRevision,
    signal?: AbortSignal,
  ): Promise<ProgramRecord> {
    const input = parseProgramRecordInput(record, 'the record written');
    return await this.#write(signal, async (items) => {
      const index = indexOf(items, input.name);
      const found = index < 0 ? 'absent' : revisionOf(items[index]);
      if (found !== ifRevision) throw new ProgramRevisionConflictError(input.name, ifRevision, found);
      const stored = Object.freeze({ ...input, revision: found === 'absent' ? 1 : found + 1 });
      const next = [...items];
      if (index < 0) next.push(stored);
      else next[index] = stored;
      return { items: next, result: stored };
    });
  }

  remove(name: string, ifRevision: number, signal?: AbortSignal): Promise<void> {
    return this.#write(signal, async (items) => {
      const index = indexOf(items, name);
      const found = index < 0 ? 'absent' : revisionOf(items[index]);
      if (found !== ifRevision) throw new ProgramRevisionConflictError(name, ifRevision, found);
      return { items: items.filter((_, at) => at !== index), result: undefined };
    });
  }

  #write<T>(
    signal: AbortSignal | undefined,
    change: (items: readonly unknown[]) => Promise<{ items: readonly unknown[]; result: T }>,
  ): Promise<T> {
    const done = this.#writes.then(async () => {
      signal?.throwIfAborted();
      const { items, result } = await change(await this.load());
      await this.save(items);
      return result;
    });
    this.#writes = done.catch(() => undefined);
    return done;
  }
}

function indexOf(items: readonly unknown[], name: string): number {
  return items.findIndex((item) => isJsonObject(item) && item.name === name);
}

/** A stored item's revision; a malformed item counts as revision 0, so only a write that expects 0 replaces it. */
function revisionOf(item: unknown): number {
  const revision = isJsonObject(item) ? item.revision : undefined;
  return typeof revision === 'number' && Number.isSafeInteger(revision) ? revision : 0;
}
