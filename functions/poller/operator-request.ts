/**
 * The operator requests the deployed function runs for the CLI, so that commands which need the
 * banking service (`event`, `replay`, the bank checks of `doctor`, `rewind`'s reads of the feed)
 * use the secret the function already holds and never pull it onto an operator's machine.
 *
 * An operator request arrives as `{ "operatorRequest": { "version": 1, "kind": …, … } }`. The
 * schedules send `{ "program": … }`, which has no `operatorRequest` key, so a scheduled invocation
 * can never be taken for one. Parsing is strict: an unknown kind, version or field is refused
 * with an `OperatorRequestError` naming the field, before anything is read or written; the
 * event's bounds (sizes, depth, prototype keys) are checked before that (`invocation-input.ts`).
 * A key the function does not know is shown only as a short prefix and its length, a value only
 * as its type and size.
 *
 * An answer is at most Lambda's response limit: `operator-answer.ts` pages a replay by size and
 * leaves a larger answer in the claim-check bucket.
 */
import type { CheckResult } from '../adapters/banking-http/bank-checks.ts';
import type { BankingEvent } from '../core/banking-event.ts';
import { OperatorRequestError } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import { isProgramName } from '../core/name-rules.ts';
import type { ReplayFailure } from '../core/range-replay.ts';
import { keyLabel, nearMiss, OPERATOR_REQUEST_KEY, SCHEDULE_KEYS, valueLabel } from './invocation-input.ts';

export { OPERATOR_REQUEST_KEY };
export const OPERATOR_REQUEST_VERSION = 1;

/** Every kind of operator request (the IAM grant to invoke the function covers them all). */
export const OPERATOR_REQUEST_KINDS = [
  'event',
  'replay',
  'doctor-bank',
  'feed-latest',
  'feed-oldest',
] as const;
export type OperatorRequestKind = (typeof OPERATOR_REQUEST_KINDS)[number];

interface RequestBase {
  readonly version: typeof OPERATOR_REQUEST_VERSION;
  /** One of the function's programs: whose secret and feed. */
  readonly program: string;
}

/** `event`: one event looked up by sequence number or by id (exactly one of them). */
export interface EventRequest extends RequestBase {
  readonly kind: 'event';
  readonly sequence?: number;
  readonly id?: string;
}

/** `replay`: publish `from..to` to the function's bus as the CLI's replay does; stops between chunks near the deadline. */
export interface ReplayRequest extends RequestBase {
  readonly kind: 'replay';
  readonly from: number;
  readonly to: number;
  /** A poll held this long with nothing new ends the feed. */
  readonly holdMs: number;
  /** Return the events instead of publishing them. */
  readonly dryRun: boolean;
}

/** `doctor-bank`: the secret, a token, `GET /events`; results only. */
export interface DoctorBankRequest extends RequestBase {
  readonly kind: 'doctor-bank';
  readonly timeoutMs: number;
}

/** `feed-latest`: fast-forward through the feed without publishing (`rewind --to latest`). */
export interface FeedLatestRequest extends RequestBase {
  readonly kind: 'feed-latest';
  /** Start after this number (`null`: the beginning). */
  readonly from: number | null;
  /** Epoch ms the walk began, kept across invocations so it lands where one long walk would. */
  readonly startedAt: number;
}

/** `feed-oldest`: the oldest event the feed still has (`rewind`'s retention check). */
export interface FeedOldestRequest extends RequestBase {
  readonly kind: 'feed-oldest';
}

export type OperatorRequest =
  | EventRequest
  | ReplayRequest
  | DoctorBankRequest
  | FeedLatestRequest
  | FeedOldestRequest;

/** What `event` answers: the event as received (its `detail` is the text the function publishes). */
export type EventResult =
  | { readonly kind: 'event'; readonly found: true; readonly event: BankingEvent }
  | { readonly kind: 'event'; readonly found: false }
  /** The bank answered with an event the poller cannot read; the message says why. */
  | { readonly kind: 'event'; readonly found: 'unreadable'; readonly message: string };

export interface ReplayResult {
  readonly kind: 'replay';
  readonly published: number;
  /** Published (or absent from the feed) up to here; the next request starts after it. */
  readonly through: number;
  readonly missing: readonly number[];
  readonly endOfFeed: boolean;
  /** A dry run: the events read. */
  readonly events?: readonly BankingEvent[];
  readonly eventBus: string;
  readonly failure?: ReplayFailure;
}

export interface DoctorBankResult {
  readonly kind: 'doctor-bank';
  readonly checks: readonly CheckResult[];
}

export interface FeedLatestResult {
  readonly kind: 'feed-latest';
  /** `interrupted`: the invocation's budget ran out first; ask again from `reached`. */
  readonly outcome: 'landed' | 'interrupted';
  readonly reached: number | null;
  readonly feedProgramId: string | null;
  readonly pages: number;
  readonly skipped: number;
  /** Why the last poll failed, when the walk was cut short by failures. */
  readonly lastError?: string;
}

export interface FeedOldestResult {
  readonly kind: 'feed-oldest';
  readonly oldest: number | null;
}

export type OperatorResult =
  | EventResult
  | ReplayResult
  | DoctorBankResult
  | FeedLatestResult
  | FeedOldestResult;

/** Whether an invocation's event is an operator request (well formed or not). */
export function isOperatorInvocation(event: unknown): boolean {
  return isJsonObject(event) && Object.hasOwn(event, OPERATOR_REQUEST_KEY);
}

/** The invocation payload the CLI sends. */
export function operatorInvocation(request: OperatorRequest): { readonly operatorRequest: OperatorRequest } {
  return { operatorRequest: request };
}

const FIELDS: Readonly<Record<OperatorRequestKind, readonly string[]>> = {
  event: ['sequence', 'id'],
  replay: ['from', 'to', 'holdMs', 'dryRun'],
  'doctor-bank': ['timeoutMs'],
  'feed-latest': ['from', 'startedAt'],
  'feed-oldest': [],
};

const BASE_FIELDS = ['version', 'kind', 'program'] as const;

/** Every field name of every kind: an error names these whole, any other key only by a prefix. */
export const OPERATOR_REQUEST_FIELD_NAMES: ReadonlySet<string> = new Set([
  ...BASE_FIELDS,
  ...Object.values(FIELDS).flat(),
]);

/** Longest hold or timeout a request may ask for: longer than any function timeout allows anyway. */
const MAX_WAIT_MS = 15 * 60 * 1000;

/**
 * Validates an operator invocation's event into a typed request.
 *
 * @throws OperatorRequestError naming the first field that is missing, unknown or malformed.
 * @example
 * parseOperatorRequest({ operatorRequest: { version: 1, kind: 'event', program: 'default', sequence: 42 } });
 */
export function parseOperatorRequest(event: unknown): OperatorRequest {
  if (!isJsonObject(event)) refuse('the event must be an object', 'event');
  for (const key of Object.keys(event)) {
    if (key !== OPERATOR_REQUEST_KEY) {
      const field = `event.${keyLabel(key, new Set(SCHEDULE_KEYS))}`;
      refuse(`${field} is not allowed: an operator request carries ${OPERATOR_REQUEST_KEY} alone`, field);
    }
  }
  const body = event[OPERATOR_REQUEST_KEY];
  const where = OPERATOR_REQUEST_KEY;
  if (!isJsonObject(body)) refuse(`${where} must be an object, got ${valueLabel(body)}`, where);
  if (body.version !== OPERATOR_REQUEST_VERSION) {
    refuse(
      `${where}.version must be ${OPERATOR_REQUEST_VERSION}, got ${valueLabel(body.version)}: update the CLI or the function`,
      `${where}.version`,
    );
  }
  const kind = body.kind;
  if (typeof kind !== 'string' || !(OPERATOR_REQUEST_KINDS as readonly string[]).includes(kind)) {
    refuse(
      `${where}.kind must be one of ${OPERATOR_REQUEST_KINDS.join(', ')}, got ${valueLabel(kind)}`,
      `${where}.kind`,
    );
  }
  const fields = [...BASE_FIELDS, ...FIELDS[kind as OperatorRequestKind]];
  const known = new Set(fields);
  for (const key of Object.keys(body)) {
    if (!known.has(key)) {
      const field = `${where}.${keyLabel(key, OPERATOR_REQUEST_FIELD_NAMES)}`;
      refuse(`${field} is not a field of a ${kind} request${nearMiss(key, fields)}`, field);
    }
  }
  if (!isProgramName(body.program)) {
    refuse(`${where}.program must be a program name, got ${valueLabel(body.program)}`, `${where}.program`);
  }
  const base = { version: OPERATOR_REQUEST_VERSION, program: body.program } as const;
  const field = (name: string) => ({ value: body[name], where: `${where}.${name}` });
  switch (kind as OperatorRequestKind) {
    case 'event': {
      const hasSequence = body.sequence !== undefined;
      const hasId = body.id !== undefined;
      if (hasSequence === hasId)
        refuse(
          `a request of kind event needs exactly one of ${where}.sequence and ${where}.id`,
          `${where}.sequence`,
        );
      if (hasSequence) return { ...base, kind: 'event', sequence: sequenceNumber(field('sequence')) };
      if (typeof body.id !== 'string' || body.id === '' || body.id.length > 200)
        refuse(`${where}.id must be a non-empty string`, `${where}.id`);
      return { ...base, kind: 'event', id: body.id };
    }
    case 'replay': {
      const from = sequenceNumber(field('from'));
      const to = sequenceNumber(field('to'));
      if (from < 1) refuse(`${where}.from must be 1 or more, got ${from}`, `${where}.from`);
      if (to < from) refuse(`${where}.to (${to}) is below from (${from})`, `${where}.to`);
      if (typeof body.dryRun !== 'boolean')
        refuse(`${where}.dryRun must be true or false`, `${where}.dryRun`);
      return { ...base, kind: 'replay', from, to, holdMs: waitMs(field('holdMs')), dryRun: body.dryRun };
    }
    case 'doctor-bank':
      return { ...base, kind: 'doctor-bank', timeoutMs: waitMs(field('timeoutMs')) };
    case 'feed-latest': {
      const from = body.from === null ? null : sequenceNumber(field('from'));
      return { ...base, kind: 'feed-latest', from, startedAt: sequenceNumber(field('startedAt')) };
    }
    case 'feed-oldest':
      return { ...base, kind: 'feed-oldest' };
  }
}

function sequenceNumber({ value, where }: { value: unknown; where: string }): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    refuse(`${where} must be a whole number of 0 or more, got ${valueLabel(value)}`, where);
  return value;
}

function waitMs({ value, where }: { value: unknown; where: string }): number {
  const ms = sequenceNumber({ value, where });
  if (ms < 1 || ms > MAX_WAIT_MS)
    refuse(`${where} must be between 1 and ${MAX_WAIT_MS} ms, got ${ms}`, where);
  return ms;
}

function refuse(problem: string, field: string): never {
  throw new OperatorRequestError(`Refused operator request: ${problem}; nothing was done`, field);
}
