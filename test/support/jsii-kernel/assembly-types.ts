/**
 * The type information of jsii assemblies, as the kernel's clients read it: which members a struct
 * has (and which are required), the members of an enum, the parameters of a constructor or a
 * method, through base classes and interfaces. A foreign language's generated code carries this
 * information; the kernel itself does not check struct members against it, so the client does.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

/** The parts of the jsii spec (`@jsii/spec`) this client reads. */
export type TypeReference =
  | { readonly primitive: 'string' | 'number' | 'boolean' | 'date' | 'json' | 'any' }
  | { readonly fqn: string }
  | { readonly collection: { readonly kind: 'array' | 'map'; readonly elementtype: TypeReference } }
  | { readonly union: { readonly types: readonly TypeReference[] } }
  | { readonly intersection: { readonly types: readonly TypeReference[] } };

export interface Parameter {
  readonly name: string;
  readonly type: TypeReference;
  readonly optional?: boolean;
  readonly variadic?: boolean;
}

export interface Callable {
  readonly name?: string;
  readonly parameters?: readonly Parameter[];
  readonly static?: boolean;
  readonly variadic?: boolean;
  readonly returns?: { readonly type: TypeReference; readonly optional?: boolean };
}

export interface Property {
  readonly name: string;
  readonly type: TypeReference;
  readonly optional?: boolean;
  readonly static?: boolean;
  readonly immutable?: boolean;
}

export interface ClassType {
  readonly kind: 'class';
  readonly fqn: string;
  readonly base?: string;
  readonly interfaces?: readonly string[];
  readonly initializer?: Callable;
  readonly methods?: readonly Callable[];
  readonly properties?: readonly Property[];
  readonly abstract?: boolean;
}

export interface InterfaceType {
  readonly kind: 'interface';
  readonly fqn: string;
  readonly datatype?: boolean;
  readonly interfaces?: readonly string[];
  readonly methods?: readonly Callable[];
  readonly properties?: readonly Property[];
}

export interface EnumType {
  readonly kind: 'enum';
  readonly fqn: string;
  readonly members: readonly { readonly name: string }[];
}

export type JsiiType = ClassType | InterfaceType | EnumType;

/** An assembly as this client keeps it: its name, version and types, without docs. */
export interface AssemblyTypes {
  readonly name: string;
  readonly version: string;
  /** The jsii packages it depends on (name → version range): the kernel must load them first. */
  readonly dependencies: Readonly<Record<string, string>>;
  readonly types: Readonly<Record<string, JsiiType>>;
}

/** A type the assemblies do not hold, or of another kind than the caller needs. */
export class UnknownJsiiTypeError extends Error {
  constructor(
    readonly fqn: string,
    expected: string,
  ) {
    super(`${fqn} is not ${expected} in the loaded assemblies`);
    this.name = 'UnknownJsiiTypeError';
  }
}

/**
 * Reads a package's `.jsii` (following a `jsii/file-redirect` to its gzip file, as aws-cdk-lib
 * ships it) and keeps what a client needs: the name, the version and the types without their docs.
 */
export function readAssemblyTypes(packageDir: string): AssemblyTypes {
  let assembly = JSON.parse(readFileSync(path.join(packageDir, '.jsii'), 'utf8')) as Record<string, unknown>;
  if (assembly.schema === 'jsii/file-redirect') {
    const target = readFileSync(path.join(packageDir, String(assembly.filename)));
    const text =
      assembly.compression === 'gzip' ? gunzipSync(target).toString('utf8') : target.toString('utf8');
    assembly = JSON.parse(text) as Record<string, unknown>;
  }
  if (assembly.schema !== 'jsii/0.10.0' || typeof assembly.name !== 'string') {
    throw new Error(`${packageDir}/.jsii is not a jsii assembly (schema ${String(assembly.schema)})`);
  }
  return {
    name: assembly.name,
    version: String(assembly.version),
    dependencies: (assembly.dependencies ?? {}) as Record<string, string>,
    types: withoutDocs(assembly.types) as Record<string, JsiiType>,
  };
}

/** Docs and source locations are most of an assembly's size and none of its type information. */
function withoutDocs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDocs);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'docs' && key !== 'locationInModule' && key !== 'symbolId')
      .map(([key, member]) => [key, withoutDocs(member)]),
  );
}

/** The types of every assembly a kernel has loaded, looked up by fully qualified name. */
export class TypeSystem {
  readonly #types = new Map<string, JsiiType>();

  add(assembly: AssemblyTypes): void {
    for (const [fqn, type] of Object.entries(assembly.types)) this.#types.set(fqn, type);
  }

  find(fqn: string): JsiiType | undefined {
    return this.#types.get(fqn);
  }

  enumType(fqn: string): EnumType {
    const type = this.#types.get(fqn);
    if (type?.kind !== 'enum') throw new UnknownJsiiTypeError(fqn, 'an enum');
    return type;
  }

  isStruct(fqn: string): boolean {
    const type = this.#types.get(fqn);
    return type?.kind === 'interface' && type.datatype === true;
  }

  /** A struct's members, its own and its bases' (a struct extends structs only). */
  structMembers(fqn: string): ReadonlyMap<string, Property> {
    const type = this.#types.get(fqn);
    if (type?.kind !== 'interface' || type.datatype !== true) throw new UnknownJsiiTypeError(fqn, 'a struct');
    const members = new Map<string, Property>();
    for (const base of type.interfaces ?? []) {
      for (const [name, property] of this.structMembers(base)) members.set(name, property);
    }
    for (const property of type.properties ?? []) members.set(property.name, property);
    return members;
  }

  /** `fqn` and every type it extends or implements, nearest first. */
  ancestry(fqn: string): string[] {
    const seen: string[] = [];
    const visit = (name: string): void => {
      if (seen.includes(name)) return;
      seen.push(name);
      const type = this.#types.get(name);
      if (type === undefined || type.kind === 'enum') return;
      if (type.kind === 'class' && type.base !== undefined) visit(type.base);
      for (const parent of type.interfaces ?? []) visit(parent);
    };
    visit(fqn);
    return seen;
  }

  /** Whether a value of type `fqn` (or implementing `interfaces`) may stand where `expected` is declared. */
  isAssignable(fqn: string, interfaces: readonly string[], expected: string): boolean {
    return [fqn, ...interfaces].some((name) => this.ancestry(name).includes(expected));
  }

  initializer(fqn: string): Callable {
    const type = this.#types.get(fqn);
    if (type?.kind !== 'class') throw new UnknownJsiiTypeError(fqn, 'a class');
    if (type.abstract === true) throw new UnknownJsiiTypeError(fqn, 'a concrete class');
    return type.initializer ?? { parameters: [] };
  }

  /** A method of `fqn` or of a type it extends; `undefined` when none has that name. */
  method(fqn: string, name: string, isStatic: boolean): Callable | undefined {
    for (const owner of isStatic ? [fqn] : this.ancestry(fqn)) {
      const type = this.#types.get(owner);
      if (type === undefined || type.kind === 'enum') continue;
      const found = type.methods?.find(
        (method) => method.name === name && (method.static ?? false) === isStatic,
      );
      if (found !== undefined) return found;
    }
    return undefined;
  }

  /** A property of `fqn` or of a type it extends; `undefined` when none has that name. */
  property(fqn: string, name: string, isStatic: boolean): Property | undefined {
    for (const owner of isStatic ? [fqn] : this.ancestry(fqn)) {
      const type = this.#types.get(owner);
      if (type === undefined || type.kind === 'enum') continue;
      const found = type.properties?.find(
        (property) => property.name === name && (property.static ?? false) === isStatic,
      );
      if (found !== undefined) return found;
    }
    return undefined;
  }
}
