/**
 * Parsers for flag values, used by commander as each flag is read: a bad value stops the command
 * before anything runs, with a message naming the flag and the expected form (exit code 2). Flags
 * of settings the handler shares take their parser from the settings table (`setting-options.ts`).
 */
import { InvalidArgumentError } from 'commander';

export function positiveInteger(value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(parsed) || parsed < 1) {
    throw new InvalidArgumentError('expected a whole number, 1 or more.');
  }
  return parsed;
}

/** A whole number from 1 to `max`: a flag that sizes work (how many at once) is bounded. */
export function integerUpTo(max: number): (value: string) => number {
  return (value) => {
    const parsed = positiveInteger(value);
    if (parsed > max) throw new InvalidArgumentError(`expected a whole number from 1 to ${max}.`);
    return parsed;
  };
}

export function nonNegativeInteger(value: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(parsed)) {
    throw new InvalidArgumentError('expected a whole number, 0 or more.');
  }
  return parsed;
}

export function positiveNumber(value: string): number {
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed <= 0) {
    throw new InvalidArgumentError('expected a number above 0.');
  }
  return parsed;
}

/** Collects a repeatable flag (`--type a --type b`) into a list. */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}
