/**
 * Validates a parsed JSON value against the event JSON Schema definitions, the same documents the
 * schema registry holds, so what the kit accepts is what the schema says. Interprets the subset
 * `event-json-schema.ts` uses; the first violation throws an `EventValidationError` naming the
 * field's path (`detail.data.amount`) and what it must be. Why ours and not Ajv, measured:
 * docs/decisions/hand-written-schema-validator.md.
 */
import {
  EVENT_SCHEMA_DEFINITIONS,
  type JsonSchema,
  type JsonSchemaType,
} from '../event-schema/event-json-schema.ts';
import { EventValidationError } from './errors.ts';

const TYPE_NAMES: Readonly<Record<JsonSchemaType, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

const patterns = new Map<string, RegExp>();

/** A short rendering of the offending value: enough to recognise it, never a whole payload. */
function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length <= 60 ? text : `${text.slice(0, 57)}...`;
}

function fail(field: string, expected: string, got: unknown): never {
  throw new EventValidationError(`${field} must be ${expected}, got ${preview(got)}`, field);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hasType(value: unknown, type: JsonSchemaType): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'null':
      return value === null;
    case 'object':
      return isObject(value);
    case 'array':
      return Array.isArray(value);
  }
}

function definition(ref: string): JsonSchema {
  const name = ref.replace('#/definitions/', '');
  const found = EVENT_SCHEMA_DEFINITIONS[name];
  if (found === undefined) throw new Error(`Internal error: no schema definition ${name}`);
  return found;
}

/**
 * Validates `value`, found at `field`, against `schema`; throws on the first violation. `field`
 * `''` is the root object, whose members are named alone (`detail-type`, `detail.id`).
 */
export function validateAgainstSchema(value: unknown, schema: JsonSchema, field: string): void {
  // Draft 4: beside a `$ref` every other keyword is ignored (here: only descriptions).
  if (schema.$ref !== undefined) {
    validateAgainstSchema(value, definition(schema.$ref), field);
    return;
  }
  if (schema.type !== undefined) {
    const types = typeof schema.type === 'string' ? [schema.type] : schema.type;
    if (!types.some((type) => hasType(value, type))) {
      fail(field, types.map((type) => TYPE_NAMES[type]).join(' or '), value);
    }
  }
  if (schema.enum !== undefined && !schema.enum.includes(value as string)) {
    fail(field, `one of ${schema.enum.join(', ')}`, value);
  }
  if (typeof value === 'string') validateString(value, schema, field);
  if (typeof value === 'number' && schema.minimum !== undefined && value < schema.minimum) {
    fail(field, `at least ${schema.minimum}`, value);
  }
  if (isObject(value)) validateObject(value, schema, field);
  if (Array.isArray(value) && schema.items !== undefined) {
    for (const [index, item] of value.entries())
      validateAgainstSchema(item, schema.items, `${field}[${index}]`);
  }
  if (schema.oneOf !== undefined) validateOneOf(value, schema.oneOf, field);
}

function validateString(value: string, schema: JsonSchema, field: string): void {
  if (schema.minLength !== undefined && value.length < schema.minLength) {
    fail(
      field,
      schema.minLength === 1 ? 'a non-empty string' : `at least ${schema.minLength} characters`,
      value,
    );
  }
  if (schema.pattern !== undefined) {
    let pattern = patterns.get(schema.pattern);
    if (pattern === undefined) {
      pattern = new RegExp(schema.pattern);
      patterns.set(schema.pattern, pattern);
    }
    if (!pattern.test(value)) fail(field, `a string matching ${schema.pattern}`, value);
  }
  // The poller's own rule for timestamps (what Date.parse reads), so the kit refuses none it published.
  if (schema.format === 'date-time' && Number.isNaN(Date.parse(value))) {
    fail(field, 'an ISO 8601 timestamp', value);
  }
}

/** `detail` + `id` → `detail.id`; at the root (the envelope, named by its members alone) just `id`. */
function member(field: string, name: string): string {
  return field === '' ? name : `${field}.${name}`;
}

function validateObject(value: Record<string, unknown>, schema: JsonSchema, field: string): void {
  for (const name of schema.required ?? []) {
    if (!Object.hasOwn(value, name)) {
      throw new EventValidationError(`${member(field, name)} is required`, member(field, name));
    }
  }
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    if (Object.hasOwn(value, name)) validateAgainstSchema(value[name], property, member(field, name));
  }
}

function validateOneOf(value: unknown, branches: readonly JsonSchema[], field: string): void {
  const matching = branches.filter((branch) => {
    try {
      validateAgainstSchema(value, branch, field);
      return true;
    } catch (error) {
      if (error instanceof EventValidationError) return false;
      throw error;
    }
  });
  if (matching.length !== 1) fail(field, `exactly one of ${branches.length} shapes`, value);
}

/** Validates `value` against the named definition (`TransactionDetail`, `EventEnvelope`, …); see `validateAgainstSchema`. */
export function validateDefinition(value: unknown, name: string, field: string): void {
  validateAgainstSchema(value, definition(`#/definitions/${name}`), field);
}
