/**
 * The kinds of value a setting holds. A kind reads a value from wherever settings come from (text
 * from an environment variable, `-c key=value` or a CLI flag; JSON from cdk.json or a construct
 * prop) and says what it expects, so the handler, the app, the construct and the CLI refuse the
 * same values with the same words. Pure: no AWS, no CDK, nothing read from the environment.
 */
import { parseStartPosition, START_POSITION_EXPECTED, type StartPosition } from '../core/start-position.ts';

export interface ValueKind<T> {
  /** What a valid value looks like; completes "must be …" in every error and fills the docs. */
  readonly expected: string;
  /** `raw` as a value of this kind, or `undefined` when it is not one. */
  read(raw: unknown): T | undefined;
  /** The value as an environment variable, a docs table or a `rate()` expression spells it. */
  format(value: T): string;
}

/** Units of time a setting may be counted in: they map onto CDK `Duration` props. */
export type TimeUnit = 'milliseconds' | 'seconds' | 'minutes' | 'days';

export interface IntegerKind extends ValueKind<number> {
  readonly min: number;
  /** `undefined`: no upper bound. */
  readonly max: number | undefined;
  /** The unit a time is counted in, when the integer is one. */
  readonly unit: TimeUnit | undefined;
}

/** Digits only (and a sign), as `-c key=value` and environment variables carry numbers: "1e3" or "0x10" is no integer here. */
const INTEGER_TEXT = /^-?\d+$/;

/**
 * A whole number within bounds, from a number or its digits.
 *
 * @example
 * integer({ min: 1, max: 1000 }).read('100'); // 100
 */
export function integer(options: { min: number; max?: number; unit?: TimeUnit }): IntegerKind {
  const { min, max, unit } = options;
  return {
    min,
    max,
    unit,
    expected: max === undefined ? `an integer, ${min} or more` : `an integer from ${min} to ${max}`,
    read(raw) {
      const text = typeof raw === 'string' ? raw.trim() : undefined;
      const value = text !== undefined && INTEGER_TEXT.test(text) ? Number(text) : raw;
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return undefined;
      return value >= min && (max === undefined || value <= max) ? value : undefined;
    },
    format: (value) => String(value),
  };
}

export interface ChoiceKind<V extends string | number> extends ValueKind<V> {
  readonly values: readonly V[];
}

/**
 * One of a few values: words (`poll`, `stream`) or numbers (CloudWatch Logs retention periods).
 * `note` follows the list in messages, to say where the list comes from.
 */
export function oneOf<const V extends string | number>(values: readonly V[], note?: string): ChoiceKind<V> {
  const shown = values.map((value) => (typeof value === 'string' ? JSON.stringify(value) : String(value)));
  const list = shown.length === 2 ? `${shown[0]} or ${shown[1]}` : `one of ${shown.join(', ')}`;
  return {
    values,
    expected: note === undefined ? list : `${list} (${note})`,
    read(raw) {
      const text = typeof raw === 'string' ? raw.trim() : raw;
      return values.find((value) => value === text || (typeof value === 'number' && String(value) === text));
    },
    format: (value) => String(value),
  };
}

/** Text matching `pattern`; `expected` describes the pattern to a person. */
export function text(pattern: RegExp, expected: string): ValueKind<string> {
  return {
    expected,
    read: (raw) => (typeof raw === 'string' && pattern.test(raw) ? raw : undefined),
    format: (value) => value,
  };
}

/**
 * Text whose structure is checked by hand where it is read (`PROGRAM_SECRETS`, `programs`,
 * `routes`): the table documents it, the reader of each place parses it.
 */
export interface StructuredKind extends ValueKind<unknown> {
  readonly structured: true;
}

export function structured(expected: string): StructuredKind {
  return {
    structured: true,
    expected,
    read: (raw) => raw,
    format: (value) => (typeof value === 'string' ? value : JSON.stringify(value)),
  };
}

export function isStructured(kind: ValueKind<unknown>): kind is StructuredKind {
  return (kind as Partial<StructuredKind>).structured === true;
}

/** `true` or `false`, as JSON or as text. */
export function flag(): ValueKind<boolean> {
  return {
    expected: 'true or false',
    read: (raw) =>
      raw === true || raw === 'true' ? true : raw === false || raw === 'false' ? false : undefined,
    format: (value) => String(value),
  };
}

/** A start position as props and context spell it; `toStartPosition` gives the cycle's form. */
export type StartPositionValue = 'beginning' | 'latest' | number;

/** `beginning`, `latest` or a sequence number (a number, or its digits). */
export function startPosition(): ValueKind<StartPositionValue> {
  return {
    expected: START_POSITION_EXPECTED,
    read(raw) {
      try {
        const position = parseStartPosition(raw, 'start position');
        return position.kind === 'sequence' ? position.sequenceNumber : position.kind;
      } catch {
        return undefined;
      }
    },
    format: (value) => String(value),
  };
}

export function toStartPosition(value: StartPositionValue): StartPosition {
  return typeof value === 'number' ? { kind: 'sequence', sequenceNumber: value } : { kind: value };
}

/**
 * Whole minutes written as an EventBridge rate, `rate(1 minute)` or `rate(N minutes)` (the unit
 * must agree with N), within the bounds of `minutes`.
 */
export function rateExpression(minutes: IntegerKind): ValueKind<number> {
  const range = `${Math.max(2, minutes.min)} to ${minutes.max}`;
  return {
    expected: `"rate(1 minute)" or "rate(N minutes)" with N from ${range}`,
    read(raw) {
      const match = typeof raw === 'string' ? /^rate\((\d+) (minute|minutes)\)$/.exec(raw.trim()) : null;
      if (match === null) return undefined;
      const value = minutes.read(match[1]);
      return value !== undefined && (value === 1) === (match[2] === 'minute') ? value : undefined;
    },
    format: (value) => `rate(${value} ${value === 1 ? 'minute' : 'minutes'})`,
  };
}
