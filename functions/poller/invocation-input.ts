/**
 * What an invocation's event may be, checked first: before anything is built, read or called (no
 * lease write, no secret read, no request to the bank). The function takes two shapes:
 *
 * - the schedule's `{"program": "<name>"}`: EventBridge Scheduler's templated Lambda target sends
 *   the input the construct wrote (`ScheduleTargetInput.fromObject({ program })`) as it is and adds
 *   no key of its own (it only fills in `<aws.scheduler.…>` placeholders, which we do not use).
 *   `{}` (a test invocation) polls the default program; `secretId`, which older payloads named,
 *   is still accepted and must be the program's own (`poller-config.ts`);
 * - the CLI's `{"operatorRequest": {…}}`, parsed by `operator-request.ts`.
 *
 * Anything else is refused with `InvocationInputError` (`INVOCATION_INVALID`): a key it does not
 * know (a misspelling such as `operatorrequest` runs nothing rather than a poll cycle), a key
 * JSON.parse made an own property that names a prototype (`__proto__`, `constructor`,
 * `prototype`), a value too long, too many keys, or nesting too deep. Bounds are checked first,
 * by an iterative walk that stops at the first value out of bounds, so a value nested 100,000
 * deep costs a few steps and no stack.
 *
 * The error names the field and quotes none of the input: a key the function knows is named, any
 * other key shows as at most its first 6 characters (letters, digits and `_`; anything else as
 * `?`) and its length, and a value only as its type and size. A key shaped like a credential, or
 * a megabyte of program name, never reaches an error or a log.
 */
import { InvocationInputError } from '../core/errors.ts';
import { isJsonObject } from '../core/json-object.ts';
import { isProgramName, PROGRAM_NAME_EXPECTED } from '../core/name-rules.ts';

/** The key that marks an invocation as an operator request (`operator-request.ts`). */
export const OPERATOR_REQUEST_KEY = 'operatorRequest';

/** The keys of a scheduled invocation. */
export const SCHEDULE_KEYS = ['program', 'secretId'] as const;

/** How large an invocation's event may be; ours are a few short fields, two levels deep at most. */
export const INVOCATION_BOUNDS = Object.freeze({
  /** Objects and arrays nested in the event, the event itself at 0 (an operator request's fields are at 2). */
  maxDepth: 3,
  /** Keys of one object. */
  maxKeys: 16,
  /** Items of one array. */
  maxItems: 100,
  /** Characters of one string: a secret's ARN or an event id fits many times over. */
  maxStringChars: 2048,
  /** Values in the whole event, containers included. */
  maxValues: 512,
});

/** Own keys JSON.parse creates that name an object's prototype machinery: never a field of ours. */
const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Characters of a key the function does not know that an error may show. */
const SHOWN_KEY_PREFIX = 6;

/** What a scheduled invocation asks for: the program (`undefined`: the default one). */
export interface ScheduledInvocation {
  readonly program?: string;
  /** Accepted from older schedules' payloads; must be the program's own secret. */
  readonly secretId?: string;
}

/**
 * A key as an error may show it: whole when the function knows it, else its first characters
 * (letters, digits and `_` only) and its length.
 *
 * @example
 * keyLabel('program', new Set(['program'])); // 'program'
 * keyLabel('AKIAIOSFODNN7EXAMPLE'); // '<key "AKIAIO…" of 20 characters>'
 */
export function keyLabel(key: string, known: ReadonlySet<string> = new Set()): string {
  if (known.has(key)) return key;
  const prefix = [...key.slice(0, SHOWN_KEY_PREFIX)]
    .map((c) => (/^[A-Za-z0-9_]$/.test(c) ? c : '?'))
    .join('');
  const cut = key.length > SHOWN_KEY_PREFIX ? '…' : '';
  return `<key "${prefix}${cut}" of ${key.length} character(s)>`;
}

/** A value as an error may show it: its type and size, never its text. */
export function valueLabel(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return `a string of ${value.length} character(s)`;
  return Array.isArray(value) ? `an array of ${value.length} item(s)` : `a ${typeof value}`;
}

/** `; did you mean <name>?` when `key` is a near miss of one of `names` (case, or two edits), else ''. */
export function nearMiss(key: string, names: readonly string[]): string {
  const lower = key.toLowerCase();
  const near = names.find(
    (name) => Math.abs(name.length - key.length) <= 2 && editDistance(lower, name.toLowerCase(), 2) <= 2,
  );
  return near === undefined ? '' : `; did you mean ${near}?`;
}

/**
 * Refuses an event out of bounds, walking it without recursion: a string too long, an object with
 * too many keys, an array with too many items, nesting too deep, too many values, or a prototype key.
 *
 * @param known keys an error may name whole (the fields of both shapes).
 * @throws InvocationInputError naming the first value out of bounds.
 */
export function checkInvocationBounds(event: unknown, known: ReadonlySet<string>): void {
  const bounds = INVOCATION_BOUNDS;
  const pending: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [
    { value: event, path: 'event', depth: 0 },
  ];
  let values = 0;
  while (pending.length > 0) {
    const { value, path, depth } = pending.pop()!;
    values += 1;
    if (values > bounds.maxValues) refuse(`the event holds more than ${bounds.maxValues} values`, 'event');
    if (typeof value === 'string') {
      if (value.length > bounds.maxStringChars)
        refuse(`${path} is ${valueLabel(value)}, more than ${bounds.maxStringChars}`, path);
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= bounds.maxDepth) refuse(`${path} nests deeper than ${bounds.maxDepth} levels`, path);
    if (Array.isArray(value)) {
      if (value.length > bounds.maxItems)
        refuse(`${path} is ${valueLabel(value)}, more than ${bounds.maxItems}`, path);
      for (const [index, item] of value.entries()) {
        pending.push({ value: item, path: `${path}[${index}]`, depth: depth + 1 });
      }
      continue;
    }
    const keys = Object.keys(value);
    if (keys.length > bounds.maxKeys)
      refuse(`${path} has ${keys.length} keys, more than ${bounds.maxKeys}`, path);
    for (const key of keys) {
      const field = `${path}.${PROTOTYPE_KEYS.has(key) ? key : keyLabel(key, known)}`;
      if (PROTOTYPE_KEYS.has(key)) refuse(`${field} names a prototype, never a field`, field);
      pending.push({ value: (value as Record<string, unknown>)[key], path: field, depth: depth + 1 });
    }
  }
}

/**
 * Reads a scheduled invocation: `{}`, `{"program": "<name>"}`, and `secretId` (see above). Any
 * other key is refused, as is a program that is not a program name.
 *
 * @throws InvocationInputError naming the field.
 * @example
 * parseScheduledInvocation({ program: 'cards' }); // { program: 'cards' }
 */
export function parseScheduledInvocation(event: unknown): ScheduledInvocation {
  if (!isJsonObject(event)) refuse(`the event must be a JSON object, got ${valueLabel(event)}`, 'event');
  const known = new Set<string>(SCHEDULE_KEYS);
  for (const key of Object.keys(event)) {
    if (known.has(key)) continue;
    const field = `event.${keyLabel(key)}`;
    refuse(
      `${field} is not a key of a scheduled invocation${nearMiss(key, [...SCHEDULE_KEYS, OPERATOR_REQUEST_KEY])}: ` +
        `the schedule sends {"program": …} and the CLI {"${OPERATOR_REQUEST_KEY}": …}`,
      field,
    );
  }
  const { program, secretId } = event;
  if (program !== undefined && !isProgramName(program))
    refuse(`event.program must be ${PROGRAM_NAME_EXPECTED}, got ${valueLabel(program)}`, 'event.program');
  if (secretId !== undefined && (typeof secretId !== 'string' || secretId.trim() === ''))
    refuse(`event.secretId must be a secret's ARN or name, got ${valueLabel(secretId)}`, 'event.secretId');
  return {
    ...(program === undefined ? {} : { program }),
    ...(secretId === undefined ? {} : { secretId: secretId as string }),
  };
}

function refuse(problem: string, field: string): never {
  throw new InvocationInputError(`Refused invocation: ${problem}; nothing was done`, field);
}

/** Levenshtein distance of two short strings, or `cap + 1` once it is past `cap`. */
function editDistance(a: string, b: string, cap: number): number {
  if (a.length > 64 || b.length > 64) return cap + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    if (Math.min(...current) > cap) return cap + 1;
    previous = current;
  }
  return previous[b.length]!;
}
