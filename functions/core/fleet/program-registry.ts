/**
 * The port to a deployment's program records (`program-record.ts`). Workers only `list`; the
 * CLI and the stack's seeding read one record and write it under optimistic concurrency: a
 * write names the revision it was based on, so two operators' edits never overwrite each other
 * unseen. Adapters: `adapters/local/memory-program-registry.ts` (tests),
 * `adapters/local/file-program-registry.ts` (the CLI's local run), and the DynamoDB table of
 * a deployment (`adapters/aws/dynamodb-program-registry.ts`).
 */
import { ProgramRecordInvalidError } from '../errors.ts';
import { isJsonObject } from '../json-object.ts';
import { isProgramName } from '../name-rules.ts';
import { type ProgramRecord, type ProgramRecordInput, parseProgramRecord } from './program-record.ts';

/** The most records a registry holds: a worker reads them all at every run. */
export const MAX_REGISTRY_PROGRAMS = 10_000;

/** A stored item that is not a valid record: reported, and never the reason the others stop. */
export interface RefusedRecord {
  /**
   * The item's key as the error may show it: the program name when it is a valid one, else a
   * bounded label (never the raw key of a hand-edited item).
   */
  readonly key: string;
  /** `ProgramRecordInvalidError`'s message and context, naming the field. */
  readonly error: Error;
}

/** What a worker reads: every valid record in name order, and the items refused. */
export interface ProgramListing {
  readonly records: readonly ProgramRecord[];
  readonly refused: readonly RefusedRecord[];
}

/** The revision a write is based on: the one read, or `absent` when creating. */
export type ExpectedRevision = number | 'absent';

export interface ProgramRegistry {
  /**
   * Every record, valid ones in name order; a malformed item is refused on its own. Bounded by
   * `MAX_REGISTRY_PROGRAMS` (more is a `ProgramRecordInvalidError` for the whole listing).
   */
  list(signal?: AbortSignal): Promise<ProgramListing>;
  /** One record, or `undefined` when there is none. @throws ProgramRecordInvalidError when the item is malformed. */
  get(name: string, signal?: AbortSignal): Promise<ProgramRecord | undefined>;
  /**
   * Writes `record` if the stored revision is `ifRevision` (`absent`: no record of that name),
   * and returns it as stored, with the next revision.
   *
   * @throws ProgramRevisionConflictError when the stored record is not at `ifRevision`.
   */
  put(record: ProgramRecordInput, ifRevision: ExpectedRevision, signal?: AbortSignal): Promise<ProgramRecord>;
  /**
   * Removes the record if it is at `ifRevision`. Its checkpoint row and secret stay: removing a
   * program forgets how to poll it, not where it was.
   *
   * @throws ProgramRevisionConflictError when it is absent or at another revision.
   */
  remove(name: string, ifRevision: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Reads a registry's stored items into a listing: each item checked on its own
 * (`parseProgramRecord`), a malformed one or a second record of a name refused alone, the records
 * in name order. What every adapter's `list` returns.
 *
 * @param where names an item's source in errors, from its index: `programs.json[3]`.
 * @throws ProgramRecordInvalidError when there are more than `MAX_REGISTRY_PROGRAMS` items.
 */
export function programListing(items: readonly unknown[], where: (index: number) => string): ProgramListing {
  if (items.length > MAX_REGISTRY_PROGRAMS) {
    throw new ProgramRecordInvalidError(
      `The registry holds ${items.length} items, more than the ${MAX_REGISTRY_PROGRAMS} a deployment may have`,
      { where: where(MAX_REGISTRY_PROGRAMS) },
    );
  }
  const records = new Map<string, ProgramRecord>();
  const refused: RefusedRecord[] = [];
  items.forEach((item, index) => {
    const name = isJsonObject(item) && isProgramName(item.name) ? item.name : undefined;
    const key = name ?? `<item ${index}>`;
    try {
      const record = parseProgramRecord(item, where(index));
      if (records.has(record.name)) {
        throw new ProgramRecordInvalidError(`${where(index)}: a second record of program ${record.name}`, {
          where: where(index),
          program: record.name,
          field: 'name',
        });
      }
      records.set(record.name, record);
    } catch (error) {
      refused.push({ key, error: error as Error });
    }
  });
  const sorted = [...records.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { records: sorted, refused };
}
