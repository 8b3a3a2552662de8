/**
 * The two naming rules the handler, the local runner, the CDK app and the construct all enforce.
 * Kept here once so a name the construct accepts is one the handler accepts too.
 */
import { ConfigurationError } from './errors.ts';

/**
 * A program name becomes a DynamoDB key (`program#<name>`), a metric dimension and part of
 * CloudFormation logical ids.
 */
export const PROGRAM_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const PROGRAM_NAME_EXPECTED =
  'letters, digits, ".", "_" or "-", at most 64, starting with a letter or digit';

/** A query parameter name of `GET /events` (the interface does not name them, so they are settings). */
export const QUERY_PARAMETER_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
export const QUERY_PARAMETER_EXPECTED =
  'a query parameter name: a letter or "_", then letters, digits, "_", "." or "-", at most 64';

export function isProgramName(value: unknown): value is string {
  return typeof value === 'string' && PROGRAM_NAME_PATTERN.test(value);
}

export function isQueryParameterName(value: unknown): value is string {
  return typeof value === 'string' && QUERY_PARAMETER_PATTERN.test(value);
}

/** Returns `value` when it is a valid program name; `where` names its source in the error. */
export function parseProgramName(value: unknown, where: string): string {
  if (!isProgramName(value)) {
    throw new ConfigurationError(`${where} must be ${PROGRAM_NAME_EXPECTED}, got ${JSON.stringify(value)}`, {
      where,
    });
  }
  return value;
}

/** Returns `value` when it is a valid query parameter name; `where` names its source in the error. */
export function parseQueryParameterName(value: unknown, where: string): string {
  if (!isQueryParameterName(value)) {
    throw new ConfigurationError(
      `${where} must be ${QUERY_PARAMETER_EXPECTED}, got ${JSON.stringify(value)}`,
      { where },
    );
  }
  return value;
}

/**
 * `account_status` → `AccountStatus`: readable construct ids and stack output names derived from
 * event types and program names (`SecretArn<Program>`); the CLI finds those outputs by the same rule.
 * Anything but letters and digits separates words.
 */
export function pascalCase(value: string): string {
  return value
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join('');
}
