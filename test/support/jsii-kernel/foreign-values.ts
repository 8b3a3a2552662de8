/**
 * Values as a foreign language's jsii runtime puts them on the wire, and back.
 *
 * A Python or Java app gives props as plain data: a struct is a dict of its members, an enum is a
 * member's name, an object is a reference to one the kernel holds. Their runtimes wrap structs
 * (`$jsii.struct`, with the struct's fqn) and maps (`$jsii.map`) and name enums
 * (`$jsii.enum: "fqn/MEMBER"`). Their generated classes refuse a member the struct does not have and
 * a required one left out; the kernel does neither (it drops an unknown member without a word), so
 * `encodeValue` refuses both itself, from the assembly's types, naming where.
 */
import type { Callable, TypeReference, TypeSystem } from './assembly-types.ts';

/** An object the kernel holds, as the kernel names it: `fqn@id`, with the interfaces it was created with. */
export class JsiiObject {
  readonly fqn: string;

  constructor(
    readonly ref: string,
    readonly interfaces: readonly string[] = [],
  ) {
    this.fqn = ref.slice(0, ref.lastIndexOf('@'));
  }

  toWire(): Record<string, unknown> {
    return this.interfaces.length > 0
      ? { '$jsii.byref': this.ref, '$jsii.interfaces': this.interfaces }
      : { '$jsii.byref': this.ref };
  }

  toString(): string {
    return this.ref;
  }
}

/**
 * An enum member: one the kernel returned, or one given where a union also takes a string (a
 * Python app's `FeedMode.STREAM` where the prop is `string | FeedMode`): a bare name would be the string.
 */
export class JsiiEnumValue {
  constructor(
    readonly fqn: string,
    readonly member: string,
  ) {}

  toString(): string {
    return `${this.fqn}/${this.member}`;
  }
}

/** A value that cannot stand where the assembly declares it: named by its path, e.g. `QueueProps.retentionPeriod`. */
export class ForeignValueError extends Error {
  constructor(
    readonly where: string,
    readonly problem: string,
  ) {
    super(`${where}: ${problem}`);
    this.name = 'ForeignValueError';
  }
}

/**
 * The wire form of `value` where `type` is declared: plain data for a struct (its members checked),
 * a member name for an enum, a `JsiiObject` for a class or an interface, and the primitives as they are.
 *
 * @throws ForeignValueError naming the path, for an unknown or missing struct member, an unknown
 * enum member, an object of the wrong type, or a value of the wrong kind
 */
export function encodeValue(types: TypeSystem, type: TypeReference, value: unknown, where: string): unknown {
  if (value === undefined || value === null) {
    throw new ForeignValueError(where, `required, got ${String(value)}`);
  }
  if ('primitive' in type) return encodePrimitive(types, type.primitive, value, where);
  if ('collection' in type) {
    const { kind, elementtype } = type.collection;
    if (kind === 'array') {
      if (!Array.isArray(value))
        throw new ForeignValueError(where, `expected a list, got ${describe(value)}`);
      return value.map((element, index) => encodeValue(types, elementtype, element, `${where}[${index}]`));
    }
    if (!isPlainObject(value)) throw new ForeignValueError(where, `expected a map, got ${describe(value)}`);
    return {
      '$jsii.map': Object.fromEntries(
        Object.entries(value).map(([key, member]) => [
          key,
          encodeValue(types, elementtype, member, `${where}[${JSON.stringify(key)}]`),
        ]),
      ),
    };
  }
  if ('union' in type) {
    const problems: string[] = [];
    for (const candidate of type.union.types) {
      try {
        return encodeValue(types, candidate, value, where);
      } catch (error) {
        if (!(error instanceof ForeignValueError)) throw error;
        problems.push(error.problem);
      }
    }
    throw new ForeignValueError(where, `matches no type of the union: ${problems.join('; ')}`);
  }
  if ('intersection' in type) {
    throw new ForeignValueError(where, 'intersection types are not supported by this client');
  }
  return encodeNamed(types, type.fqn, value, where);
}

function encodeNamed(types: TypeSystem, fqn: string, value: unknown, where: string): unknown {
  const declared = types.find(fqn);
  if (declared === undefined) {
    throw new ForeignValueError(
      where,
      `${fqn} is in no loaded assembly (load the assembly that declares it)`,
    );
  }
  if (declared.kind === 'enum') {
    const name = value instanceof JsiiEnumValue && value.fqn === fqn ? value.member : value;
    if (typeof name !== 'string') {
      throw new ForeignValueError(where, `expected a member name of ${fqn}, got ${describe(value)}`);
    }
    if (!declared.members.some((member) => member.name === name)) {
      throw new ForeignValueError(
        where,
        `${fqn} has no member ${JSON.stringify(name)} (members: ${declared.members.map((member) => member.name).join(', ')})`,
      );
    }
    return { '$jsii.enum': `${fqn}/${name}` };
  }
  if (value instanceof JsiiObject) {
    if (!types.isAssignable(value.fqn, value.interfaces, fqn)) {
      throw new ForeignValueError(where, `expected ${fqn}, got ${value.ref}`);
    }
    return value.toWire();
  }
  if (declared.kind === 'interface' && declared.datatype === true) {
    if (!isPlainObject(value))
      throw new ForeignValueError(where, `expected a ${fqn} struct, got ${describe(value)}`);
    return { '$jsii.struct': { fqn, data: encodeStruct(types, fqn, value, where) } };
  }
  throw new ForeignValueError(where, `expected an object of ${fqn} (a JsiiObject), got ${describe(value)}`);
}

/** A struct's members, each encoded; unknown members and missing required ones refused. */
function encodeStruct(
  types: TypeSystem,
  fqn: string,
  value: Readonly<Record<string, unknown>>,
  where: string,
): Record<string, unknown> {
  const members = types.structMembers(fqn);
  const structName = fqn.slice(fqn.lastIndexOf('.') + 1);
  const unknown = Object.keys(value).filter((name) => !members.has(name));
  if (unknown.length > 0) {
    throw new ForeignValueError(
      where,
      `${structName} has no member ${unknown.map((name) => JSON.stringify(name)).join(', ')} (members: ${[...members.keys()].join(', ')})`,
    );
  }
  const data: Record<string, unknown> = {};
  for (const [name, member] of members) {
    const given = value[name];
    if (given === undefined || given === null) {
      if (member.optional !== true) {
        throw new ForeignValueError(where, `${structName} requires ${JSON.stringify(name)}`);
      }
      continue;
    }
    data[name] = encodeValue(types, member.type, given, `${where}.${name}`);
  }
  return data;
}

function encodePrimitive(types: TypeSystem, primitive: string, value: unknown, where: string): unknown {
  switch (primitive) {
    case 'string':
      if (typeof value !== 'string')
        throw new ForeignValueError(where, `expected a string, got ${describe(value)}`);
      return value;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new ForeignValueError(where, `expected a finite number, got ${describe(value)}`);
      }
      return value;
    case 'boolean':
      if (typeof value !== 'boolean')
        throw new ForeignValueError(where, `expected a boolean, got ${describe(value)}`);
      return value;
    case 'date':
      if (!(value instanceof Date))
        throw new ForeignValueError(where, `expected a Date, got ${describe(value)}`);
      return { '$jsii.date': value.toISOString() };
    default:
      // `json` and `any`: plain data as it is, objects the kernel holds by reference.
      return encodeAny(types, value, where);
  }
}

function encodeAny(types: TypeSystem, value: unknown, where: string): unknown {
  if (value instanceof JsiiObject) return value.toWire();
  if (value instanceof JsiiEnumValue) return { '$jsii.enum': value.toString() };
  if (Array.isArray(value))
    return value.map((element, index) => encodeAny(types, element, `${where}[${index}]`));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, member]) => [key, encodeAny(types, member, `${where}.${key}`)]),
    );
  }
  return value;
}

/**
 * The arguments of a constructor or a method, each encoded against its parameter: trailing optional
 * ones may be left out, a variadic last parameter takes the rest.
 *
 * @throws ForeignValueError for too many arguments, a required one missing, or a value refused
 */
export function encodeArguments(
  types: TypeSystem,
  callable: Callable,
  args: readonly unknown[],
  where: string,
): unknown[] {
  const parameters = callable.parameters ?? [];
  const last = parameters.at(-1);
  if (last?.variadic !== true && args.length > parameters.length) {
    throw new ForeignValueError(where, `takes at most ${parameters.length} argument(s), got ${args.length}`);
  }
  const encoded: unknown[] = [];
  for (const [index, given] of args.entries()) {
    const parameter = parameters[Math.min(index, parameters.length - 1)]!;
    const at = `${where}(${parameter.name}${parameter.variadic === true ? `[${index - parameters.length + 1}]` : ''})`;
    if (
      (given === undefined || given === null) &&
      (parameter.optional === true || parameter.variadic === true)
    ) {
      encoded.push(null);
      continue;
    }
    encoded.push(encodeValue(types, parameter.type, given, at));
  }
  for (const parameter of parameters.slice(args.length)) {
    if (parameter.optional !== true && parameter.variadic !== true) {
      throw new ForeignValueError(`${where}(${parameter.name})`, 'required, not given');
    }
  }
  while (encoded.length > 0 && encoded.at(-1) === null) encoded.pop();
  return encoded;
}

/** A value the kernel sent: references become `JsiiObject`s, enums `JsiiEnumValue`s, maps plain objects. */
export function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (typeof record['$jsii.byref'] === 'string') {
    return new JsiiObject(record['$jsii.byref'], (record['$jsii.interfaces'] as string[] | undefined) ?? []);
  }
  if (typeof record['$jsii.enum'] === 'string') {
    const name = record['$jsii.enum'];
    const slash = name.lastIndexOf('/');
    return new JsiiEnumValue(name.slice(0, slash), name.slice(slash + 1));
  }
  if (typeof record['$jsii.date'] === 'string') return new Date(record['$jsii.date']);
  if (isPlainObject(record['$jsii.map'])) return decodeValue(record['$jsii.map']);
  return Object.fromEntries(Object.entries(record).map(([key, member]) => [key, decodeValue(member)]));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value instanceof JsiiObject) return value.ref;
  if (Array.isArray(value)) return 'a list';
  if (isPlainObject(value)) return 'plain data';
  return `${typeof value} ${JSON.stringify(value)}`;
}
