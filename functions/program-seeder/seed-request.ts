/**
 * What the stack's program seeding is made of, shared by the construct that writes it
 * (`infra/constructs/program-seeding.ts`) and the provider that reads it (`handler.ts`): the seed
 * file beside the provider's code, the custom resource's properties, and CloudFormation's request.
 * Nothing here trusts what it reads: every field is checked and bounded, and an error names the
 * field without quoting a value (the request's `ResponseURL` is a presigned URL: never shown).
 */
import { ConfigurationError } from '../core/errors.ts';
import { MAX_REGISTRY_PROGRAMS } from '../core/fleet/program-registry.ts';
import type { StackProgram } from '../core/fleet/seed-plan.ts';
import { isJsonObject } from '../core/json-object.ts';
import { isProgramName } from '../core/name-rules.ts';

/** The seed list's file name in the provider's code directory. */
export const SEED_FILE = 'seed.json';
/** The seed file's format: a later version of the file is refused by name, never half read. */
export const SEED_FORMAT = 1;
/** The custom resource's type in the template. */
export const SEED_RESOURCE_TYPE = 'Custom::ProgramSeeding';

/** One program of the seed file: a literal secret id, or none when the stack creates its secret (`StackSecrets`). */
export interface SeedFileProgram {
  readonly name: string;
  readonly secretId?: string;
}

export interface SeedFile {
  readonly format: number;
  readonly programs: readonly SeedFileProgram[];
}

/** The custom resource's properties (CloudFormation sends them as strings, objects and arrays). */
export interface SeedProperties {
  readonly ProgramsTable: string;
  /** SHA-256 of the seed file: a new list, a new value, so CloudFormation sends an update. */
  readonly SeedDigest: string;
  /** Program → the ARN of the secret the stack creates for it. */
  readonly StackSecrets: Readonly<Record<string, string>>;
}

export type SeedRequestType = 'Create' | 'Update' | 'Delete';

/** CloudFormation's request, checked: what the provider reads and what its answer must echo. */
export interface SeedRequest {
  readonly requestType: SeedRequestType;
  /** Where the answer goes: a presigned URL, a credential of sorts. Never logged, never in an error. */
  readonly responseUrl: URL;
  readonly stackId: string;
  readonly requestId: string;
  readonly logicalResourceId: string;
  readonly physicalResourceId: string | undefined;
  /** Absent only on a Delete whose properties cannot be read (nothing to do then). */
  readonly properties: SeedProperties | undefined;
}

/** Characters of a secret id or ARN, of an id CloudFormation sends, of the response URL. */
const MAX_SECRET_ID = 2048;
const MAX_ID = 1024;
const MAX_URL = 8192;
const TABLE_NAME = /^[A-Za-z0-9_.-]{3,255}$/;
const DIGEST = /^[0-9a-f]{64}$/;
const REQUEST_TYPES: readonly string[] = ['Create', 'Update', 'Delete'];

function invalid(field: string, problem: string): never {
  throw new ConfigurationError(`The program seeding request's ${field} ${problem}`, { field });
}

function boundedString(value: unknown, field: string, max: number): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > max) {
    return invalid(field, `must be a string of 1 to ${max} characters`);
  }
  return value;
}

/**
 * Where the answer to `raw` goes, read first and alone: without it no answer can be sent, so a
 * request without a usable one is only logged. HTTPS, or HTTP to a loopback address (tests).
 */
export function responseUrlOf(raw: unknown): URL {
  const text = isJsonObject(raw) ? raw.ResponseURL : undefined;
  if (typeof text !== 'string' || text.length > MAX_URL || !URL.canParse(text)) {
    return invalid('ResponseURL', `must be a URL of at most ${MAX_URL} characters`);
  }
  const url = new URL(text);
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return invalid('ResponseURL', 'must be an https:// URL');
  }
  return url;
}

/**
 * Checks CloudFormation's request.
 *
 * @throws ConfigurationError naming the field
 */
export function parseSeedRequest(raw: unknown): SeedRequest {
  if (!isJsonObject(raw)) return invalid('event', 'is not an object');
  const responseUrl = responseUrlOf(raw);
  const requestType = raw.RequestType;
  if (typeof requestType !== 'string' || !REQUEST_TYPES.includes(requestType)) {
    return invalid('RequestType', 'must be Create, Update or Delete');
  }
  const physical = raw.PhysicalResourceId;
  const request = {
    requestType: requestType as SeedRequestType,
    responseUrl,
    stackId: boundedString(raw.StackId, 'StackId', MAX_ID),
    requestId: boundedString(raw.RequestId, 'RequestId', MAX_ID),
    logicalResourceId: boundedString(raw.LogicalResourceId, 'LogicalResourceId', 255),
    physicalResourceId:
      physical === undefined ? undefined : boundedString(physical, 'PhysicalResourceId', MAX_ID),
  };
  if (requestType === 'Delete') {
    // Nothing is read on a delete: properties an older version wrote must not stop it.
    return { ...request, properties: undefined };
  }
  return { ...request, properties: parseSeedProperties(raw.ResourceProperties) };
}

function parseSeedProperties(raw: unknown): SeedProperties {
  if (!isJsonObject(raw)) return invalid('ResourceProperties', 'is not an object');
  const table = raw.ProgramsTable;
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) {
    invalid('ResourceProperties.ProgramsTable', 'must be a DynamoDB table name');
  }
  const digest = raw.SeedDigest;
  if (typeof digest !== 'string' || !DIGEST.test(digest)) {
    invalid('ResourceProperties.SeedDigest', 'must be a SHA-256 digest in hex');
  }
  const secrets = raw.StackSecrets ?? {};
  if (!isJsonObject(secrets)) return invalid('ResourceProperties.StackSecrets', 'is not an object');
  const entries = Object.entries(secrets);
  if (entries.length > MAX_REGISTRY_PROGRAMS) {
    invalid('ResourceProperties.StackSecrets', `names more than ${MAX_REGISTRY_PROGRAMS} programs`);
  }
  for (const [program, secretId] of entries) {
    if (!isProgramName(program))
      invalid('ResourceProperties.StackSecrets', 'has a key that is not a program name');
    boundedString(secretId, `ResourceProperties.StackSecrets.${program}`, MAX_SECRET_ID);
  }
  return {
    ProgramsTable: table as string,
    SeedDigest: digest as string,
    StackSecrets: Object.freeze(Object.fromEntries(entries)) as Record<string, string>,
  };
}

/**
 * Checks the seed file and binds each program to its secret: its own `secretId`, else the ARN the
 * properties give for a secret the stack creates.
 *
 * @throws ConfigurationError naming the entry and the field
 */
export function stackProgramsOf(raw: unknown, properties: SeedProperties): StackProgram[] {
  if (!isJsonObject(raw)) return invalid(`file ${SEED_FILE}`, 'is not a JSON object');
  if (raw.format !== SEED_FORMAT) {
    return invalid(
      `file ${SEED_FILE}`,
      `is of format ${String(raw.format)}; this provider reads format ${SEED_FORMAT}`,
    );
  }
  const programs = raw.programs;
  if (!Array.isArray(programs) || programs.length > MAX_REGISTRY_PROGRAMS) {
    return invalid(`file ${SEED_FILE}`, `must list at most ${MAX_REGISTRY_PROGRAMS} programs`);
  }
  const seen = new Set<string>();
  return programs.map((entry: unknown, index): StackProgram => {
    const where = `file ${SEED_FILE} programs[${index}]`;
    if (!isJsonObject(entry) || !isProgramName(entry.name))
      return invalid(where, 'has no valid program name');
    const name = entry.name;
    if (seen.has(name)) invalid(where, `repeats program ${name}`);
    seen.add(name);
    const secretId =
      entry.secretId === undefined
        ? properties.StackSecrets[name]
        : boundedString(entry.secretId, `${where}.secretId`, MAX_SECRET_ID);
    if (secretId === undefined)
      invalid(where, `(program ${name}) has no secret, in the file or in StackSecrets`);
    return { name, secretId: secretId as string };
  });
}
