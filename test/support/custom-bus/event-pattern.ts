/**
 * A small EventBridge event-pattern matcher for the stand-in's subscriber filters: the features this
 * repository's routes use (exact values, `prefix`, `anything-but` of values or of a prefix, `exists`,
 * nested objects, arrays in the event matching any element). Anything else (`numeric`, `suffix`,
 * `wildcard`, `equals-ignore-case`, `cidr`, `$or`) is refused when the subscriber is created, loudly,
 * rather than matched wrongly.
 */

export type CompiledPattern = (event: unknown) => boolean;

export class UnsupportedPatternError extends Error {}

/** Parses and checks `patternText`; throws `UnsupportedPatternError` or `SyntaxError` naming what is wrong. */
export function compilePattern(patternText: string): CompiledPattern {
  const pattern: unknown = JSON.parse(patternText);
  if (!isObject(pattern) || Object.keys(pattern).length === 0) {
    throw new UnsupportedPatternError('A pattern must be a non-empty JSON object');
  }
  const matcher = compileObject(pattern, '');
  return (event) => matcher(event);
}

type Matcher = (value: unknown) => boolean;
/** Matches one field's value; `present` is false when the field is absent. */
type FieldMatcher = (value: unknown, present: boolean) => boolean;

function compileObject(pattern: Record<string, unknown>, path: string): Matcher {
  const fields = Object.entries(pattern).map(([key, spec]) => {
    if (key.startsWith('$'))
      throw new UnsupportedPatternError(`The stand-in does not support ${key} (at ${path}${key})`);
    const fieldPath = `${path}${key}`;
    const matcher: FieldMatcher = isObject(spec)
      ? objectField(compileObject(spec, `${fieldPath}.`))
      : compileValueList(spec, fieldPath);
    return [key, matcher] as const;
  });
  return (value) => {
    if (!isObject(value)) return false;
    return fields.every(([key, matcher]) => matcher(value[key], Object.hasOwn(value, key)));
  };
}

function objectField(matcher: Matcher): FieldMatcher {
  return (value, present) => present && (Array.isArray(value) ? value.some(matcher) : matcher(value));
}

function compileValueList(spec: unknown, path: string): FieldMatcher {
  if (!Array.isArray(spec) || spec.length === 0) {
    throw new UnsupportedPatternError(`The value at ${path} must be a non-empty array of match conditions`);
  }
  const alternatives = spec.map((item) => compileCondition(item, path));
  return (value, present) => alternatives.some((matches) => matches(value, present));
}

function compileCondition(condition: unknown, path: string): FieldMatcher {
  if (!isObject(condition)) {
    return (value, present) => present && anyElement(value, (element) => element === condition);
  }
  const entries = Object.entries(condition);
  const [operator, operand] = entries[0] ?? [];
  if (entries.length !== 1 || operator === undefined) {
    throw new UnsupportedPatternError(`A match condition at ${path} must have exactly one operator`);
  }
  switch (operator) {
    case 'prefix': {
      if (typeof operand !== 'string')
        throw new UnsupportedPatternError(`prefix at ${path} must be a string`);
      return (value, present) =>
        present && anyElement(value, (e) => typeof e === 'string' && e.startsWith(operand));
    }
    case 'exists': {
      if (typeof operand !== 'boolean')
        throw new UnsupportedPatternError(`exists at ${path} must be a boolean`);
      return (_value, present) => present === operand;
    }
    case 'anything-but':
      return compileAnythingBut(operand, path);
    default:
      throw new UnsupportedPatternError(
        `The stand-in does not support the "${operator}" operator (at ${path})`,
      );
  }
}

function compileAnythingBut(operand: unknown, path: string): FieldMatcher {
  if (isObject(operand)) {
    const prefix = operand.prefix;
    if (Object.keys(operand).length !== 1 || typeof prefix !== 'string') {
      throw new UnsupportedPatternError(
        `The stand-in supports anything-but of values or of a prefix only (at ${path})`,
      );
    }
    return (value, present) =>
      present && anyElement(value, (e) => typeof e === 'string' && !e.startsWith(prefix));
  }
  const excluded = Array.isArray(operand) ? operand : [operand];
  if (excluded.some((item) => item !== null && typeof item === 'object')) {
    throw new UnsupportedPatternError(`anything-but at ${path} must list plain values`);
  }
  // EventBridge: anything-but matches a present field whose value is none of the listed ones.
  return (value, present) => present && anyElement(value, (e) => !excluded.includes(e));
}

function anyElement(value: unknown, test: (element: unknown) => boolean): boolean {
  return Array.isArray(value) ? value.some(test) : test(value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
