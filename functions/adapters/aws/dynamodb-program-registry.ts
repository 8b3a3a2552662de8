/**
 * The deployment's program records, one small DynamoDB item each in the programs table
 * (`PROGRAMS_TABLE`; not the checkpoint table, whose items are large and would all be read by a
 * scan):
 *
 * | attribute    | type | meaning                                              |
 * |--------------|------|------------------------------------------------------|
 * | `pk`         | S    | the program's name                                   |
 * | `secret_id`  | S    | id or ARN of its credentials secret                  |
 * | `state`      | S    | `active` or `paused`                                 |
 * | `owner`      | S    | `stack` or `operator`                                |
 * | `settings`   | M    | its own settings, by setting name (absent: none)     |
 * | `revision`   | N    | 1 when created, one more at each write               |
 *
 * A worker reads them all with one paginated `Scan` per run (eventually consistent: an edit counts
 * from the next run or the one after). Writes are conditional on the revision the writer read,
 * so two edits never overwrite each other unseen. Every item read is checked as any stored record
 * (`parseProgramRecord`): a hand-edited item that is not a record is refused alone.
 */
import {
  type AttributeValue,
  DeleteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { ProgramRevisionConflictError } from '../../core/errors.ts';
import {
  type ProgramRecord,
  type ProgramRecordInput,
  parseProgramRecord,
  parseProgramRecordInput,
} from '../../core/fleet/program-record.ts';
import {
  type ExpectedRevision,
  MAX_REGISTRY_PROGRAMS,
  type ProgramListing,
  type ProgramRegistry,
  programListing,
} from '../../core/fleet/program-registry.ts';

export interface DynamoDbProgramRegistryOptions {
  /** Table with a string partition key `pk`: one item per program. */
  readonly tableName: string;
  /** Built once per container at module scope. @default a new `DynamoDBClient` with the SDK's defaults */
  readonly client?: DynamoDBClient;
}

type Item = Record<string, AttributeValue>;

export class DynamoDbProgramRegistry implements ProgramRegistry {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: DynamoDbProgramRegistryOptions) {
    this.#client = options.client ?? new DynamoDBClient({});
    this.#tableName = options.tableName;
  }

  async list(signal?: AbortSignal): Promise<ProgramListing> {
    const items: unknown[] = [];
    let start: Item | undefined;
    do {
      const page = await this.#client.send(
        new ScanCommand({ TableName: this.#tableName, ExclusiveStartKey: start }),
        { abortSignal: signal },
      );
      for (const item of page.Items ?? []) items.push(recordOf(item));
      // One over the bound is enough for `programListing` to refuse the listing by name.
      if (items.length > MAX_REGISTRY_PROGRAMS) break;
      start = page.LastEvaluatedKey;
    } while (start !== undefined);
    return programListing(items, (index) => `${this.#tableName} item ${index}`);
  }

  async get(name: string, signal?: AbortSignal): Promise<ProgramRecord | undefined> {
    const { Item: item } = await this.#client.send(
      new GetItemCommand({ TableName: this.#tableName, Key: { pk: { S: name } }, ConsistentRead: true }),
      { abortSignal: signal },
    );
    return item === undefined
      ? undefined
      : parseProgramRecord(recordOf(item), `${this.#tableName} item ${name}`);
  }

  async put(
    record: ProgramRecordInput,
    ifRevision: ExpectedRevision,
    signal?: AbortSignal,
  ): Promise<ProgramRecord> {
    const input = parseProgramRecordInput(record, 'the record written');
    const stored = Object.freeze({ ...input, revision: ifRevision === 'absent' ? 1 : ifRevision + 1 });
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: itemOf(stored),
          ...expectation(ifRevision),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw conflictOr(error, input.name, ifRevision);
    }
    return stored;
  }

  async remove(name: string, ifRevision: number, signal?: AbortSignal): Promise<void> {
    try {
      await this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: { pk: { S: name } },
          ...expectation(ifRevision),
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw conflictOr(error, name, ifRevision);
    }
  }
}

/** The write's condition: no item yet, or the item at the revision the writer read. */
function expectation(ifRevision: ExpectedRevision) {
  return ifRevision === 'absent'
    ? { ConditionExpression: 'attribute_not_exists(pk)' }
    : {
        ConditionExpression: 'attribute_exists(pk) AND revision = :expected',
        ExpressionAttributeValues: { ':expected': { N: String(ifRevision) } },
      };
}

/** A refused condition as the revision it found; any other error as it is. */
function conflictOr(error: unknown, program: string, expected: ExpectedRevision): unknown {
  if (!(error instanceof Error) || error.name !== 'ConditionalCheckFailedException') return error;
  const old = (error as { Item?: Item }).Item;
  const revision = old?.revision?.N === undefined ? Number.NaN : Number(old.revision.N);
  const found = old === undefined ? 'absent' : Number.isSafeInteger(revision) ? revision : 0;
  return new ProgramRevisionConflictError(program, expected, found);
}

function itemOf(record: ProgramRecord): Item {
  return {
    pk: { S: record.name },
    secret_id: { S: record.secretId },
    state: { S: record.state },
    owner: { S: record.owner },
    ...(Object.keys(record.settings).length === 0 ? {} : { settings: { M: marshall(record.settings) } }),
    revision: { N: String(record.revision) },
  };
}

/**
 * An item as a record's fields, unchecked (`parseProgramRecord` checks them); attributes a record
 * does not have (a later version's) are left out. Never throws: what cannot be read is left in a
 * form the check refuses, so one item never fails a listing.
 */
function recordOf(item: Item): unknown {
  return {
    name: item.pk?.S,
    secretId: item.secret_id?.S,
    state: item.state?.S,
    owner: item.owner?.S,
    ...(item.settings === undefined ? {} : { settings: settingsOf(item.settings) }),
    revision: item.revision?.N === undefined ? undefined : Number(item.revision.N),
  };
}

function settingsOf(value: AttributeValue): unknown {
  if (value.M === undefined) return null;
  try {
    return unmarshall(value.M);
  } catch {
    // A number beyond what JavaScript holds exactly, a set, bytes: not a setting's value.
    return null;
  }
}
