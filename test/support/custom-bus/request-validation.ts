/**
 * Every request the stand-in takes is checked against the service model's input shapes, so a
 * hand-written client (ours) that drifts from the wire format is refused loudly, as the service
 * would refuse it, instead of being half-understood. The shapes are botocore's (`eventbridgev2`,
 * 2025-05-15), cut down to the implemented operations and kept in `eventbridgev2-request-model.json`;
 * the conformance test re-extracts them from the installed botocore and fails when they differ.
 * Smithy's length, range, pattern (ECMAScript regular expressions) and enum constraints are checked,
 * plus required and unknown members.
 */
import { readFileSync } from 'node:fs';

export interface ShapeModel {
  readonly type:
    | 'structure'
    | 'list'
    | 'map'
    | 'string'
    | 'integer'
    | 'long'
    | 'boolean'
    | 'timestamp'
    | 'blob'
    | 'double';
  readonly required?: readonly string[];
  readonly members?: Readonly<Record<string, string>>;
  readonly member?: string;
  readonly key?: string;
  readonly value?: string;
  readonly min?: number;
  readonly max?: number;
  readonly pattern?: string;
  readonly enum?: readonly string[];
}

export interface RequestModel {
  /** Operation → its input shape's name. */
  readonly operations: Readonly<Record<string, string>>;
  readonly shapes: Readonly<Record<string, ShapeModel>>;
}

const MODEL_FILE = new URL('./eventbridgev2-request-model.json', import.meta.url);

export function loadRequestModel(): RequestModel {
  return JSON.parse(readFileSync(MODEL_FILE, 'utf8')) as RequestModel;
}

/** The input shapes of `operations` out of a botocore `service-2.json`, documentation dropped. */
export function extractRequestModel(
  service: {
    operations: Record<string, { input?: { shape: string } }>;
    shapes: Record<string, Record<string, unknown>>;
  },
  operations: readonly string[],
): RequestModel {
  const shapes: Record<string, ShapeModel> = {};
  const visit = (name: string): void => {
    if (shapes[name] !== undefined) return;
    const source = service.shapes[name];
    if (source === undefined) throw new Error(`The model has no shape ${name}`);
    const shape: Record<string, unknown> = { type: source.type };
    for (const field of ['required', 'min', 'max', 'pattern', 'enum'] as const) {
      if (source[field] !== undefined) shape[field] = source[field];
    }
    shapes[name] = shape as unknown as ShapeModel;
    for (const field of ['member', 'key', 'value'] as const) {
      const reference = source[field] as { shape: string } | undefined;
      if (reference !== undefined) {
        shape[field] = reference.shape;
        visit(reference.shape);
      }
    }
    const members = source.members as Record<string, { shape: string }> | undefined;
    if (members !== undefined) {
      shape.members = Object.fromEntries(
        Object.entries(members).map(([member, reference]) => [member, reference.shape]),
      );
      for (const reference of Object.values(members)) visit(reference.shape);
    }
  };
  const inputs: Record<string, string> = {};
  for (const operation of operations) {
    const input = service.operations[operation]?.input?.shape;
    if (input === undefined) throw new Error(`The model has no operation ${operation}`);
    inputs[operation] = input;
    visit(input);
  }
  return {
    operations: inputs,
    shapes: Object.fromEntries(Object.entries(shapes).sort(([a], [b]) => (a < b ? -1 : 1))),
  };
}

/** What is wrong with `input` for `operation`, one line per problem (empty when it fits). */
export function requestProblems(model: RequestModel, operation: string, input: unknown): string[] {
  const shapeName = model.operations[operation];
  if (shapeName === undefined) return [`${operation} is not an operation the stand-in knows`];
  const problems: string[] = [];
  check(model, shapeName, input, operation, problems);
  return problems;
}

function check(
  model: RequestModel,
  shapeName: string,
  value: unknown,
  path: string,
  problems: string[],
): void {
  const shape = model.shapes[shapeName];
  if (shape === undefined) throw new Error(`The request model has no shape ${shapeName}`);
  switch (shape.type) {
    case 'structure': {
      if (!isRecord(value)) return void problems.push(`${path}: expected a structure`);
      for (const name of shape.required ?? []) {
        if (value[name] === undefined || value[name] === null) problems.push(`${path}.${name}: required`);
      }
      for (const [name, member] of Object.entries(value)) {
        const memberShape = shape.members?.[name];
        if (memberShape === undefined) problems.push(`${path}.${name}: not a member of ${shapeName}`);
        else if (member !== undefined && member !== null)
          check(model, memberShape, member, `${path}.${name}`, problems);
      }
      return;
    }
    case 'list':
      if (!Array.isArray(value)) return void problems.push(`${path}: expected a list`);
      bounds(shape, value.length, `${path}: ${value.length} items`, problems);
      value.forEach((item, index) => {
        check(model, shape.member as string, item, `${path}[${index}]`, problems);
      });
      return;
    case 'map':
      if (!isRecord(value)) return void problems.push(`${path}: expected a map`);
      bounds(shape, Object.keys(value).length, `${path}: ${Object.keys(value).length} entries`, problems);
      for (const [key, item] of Object.entries(value)) {
        check(model, shape.key as string, key, `${path} key ${key}`, problems);
        check(model, shape.value as string, item, `${path}.${key}`, problems);
      }
      return;
    case 'string': {
      if (typeof value !== 'string') return void problems.push(`${path}: expected a string`);
      bounds(shape, [...value].length, `${path}: length ${[...value].length}`, problems);
      if (shape.enum !== undefined && !shape.enum.includes(value)) {
        problems.push(`${path}: ${JSON.stringify(value)} is not one of ${shape.enum.join(', ')}`);
      }
      if (shape.pattern !== undefined && !new RegExp(shape.pattern).test(value)) {
        problems.push(`${path}: does not match ${shape.pattern}`);
      }
      return;
    }
    case 'integer':
    case 'long':
    case 'double': {
      const number = typeof value === 'bigint' ? Number(value) : value;
      if (typeof number !== 'number') return void problems.push(`${path}: expected a number`);
      if (shape.type !== 'double' && !Number.isInteger(number)) problems.push(`${path}: expected an integer`);
      bounds(shape, number, `${path}: ${number}`, problems);
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') problems.push(`${path}: expected a boolean`);
      return;
    case 'timestamp':
      // RPC v2 CBOR: tag 1 around epoch seconds.
      if (!isRecord(value) || value.tag !== 1 || typeof value.value !== 'number') {
        problems.push(`${path}: expected a timestamp (CBOR tag 1, epoch seconds)`);
      }
      return;
    case 'blob':
      if (!(value instanceof Uint8Array)) problems.push(`${path}: expected a byte string`);
      return;
  }
}

function bounds(shape: ShapeModel, size: number, what: string, problems: string[]): void {
  if (shape.min !== undefined && size < shape.min) problems.push(`${what}, below the minimum ${shape.min}`);
  if (shape.max !== undefined && size > shape.max) problems.push(`${what}, above the maximum ${shape.max}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return (
    value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Uint8Array)
  );
}
