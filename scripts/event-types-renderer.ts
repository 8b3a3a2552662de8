/**
 * Renders the event JSON Schema definitions (`functions/event-schema/event-json-schema.ts`) as
 * TypeScript types, one per definition: a union of literals for an enum, an interface for an
 * object. Pure: `scripts/generate-event-types.ts` writes the result, and a unit test renders it
 * again and expects exactly the committed file, so the types cannot drift from the schema.
 *
 * It understands the subset the schema module uses; anything else is an error here rather than a
 * type that silently says less than the schema. Ours rather than json-schema-to-typescript, which
 * types an untyped field as an object and drops `readonly` (docs/decisions/hand-written-type-renderer.md).
 */
import type { JsonSchema, JsonSchemaType } from '../functions/event-schema/event-json-schema.ts';

const HEADER = `/**
 * The types of the events the poller publishes, generated from the JSON Schema definitions in
 * \`event-json-schema.ts\` (the ones the schema registry holds). Do not edit: change the schema and
 * run \`npm run generate:types\`; a test fails while this file and the schema disagree.
 */
`;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : `'${name}'`;
}

function literal(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

function refName(ref: string): string {
  const prefix = '#/definitions/';
  if (!ref.startsWith(prefix)) throw new Error(`Unsupported $ref ${ref}: only ${prefix}<name>`);
  return ref.slice(prefix.length);
}

function scalar(type: JsonSchemaType, schema: JsonSchema, indent: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `readonly ${wrap(typeOf(schema.items ?? {}, indent))}[]`;
    case 'object':
      return objectBody(schema, indent);
  }
}

/** Parenthesized when it is a union, so `[]` applies to the whole. */
function wrap(type: string): string {
  return type.includes(' | ') ? `(${type})` : type;
}

/** The TypeScript type of a schema used in place (a property, an array's items). */
function typeOf(schema: JsonSchema, indent: string): string {
  if (schema.$ref !== undefined) return refName(schema.$ref);
  if (schema.enum !== undefined) return schema.enum.map(literal).join(' | ');
  if (schema.oneOf !== undefined) return schema.oneOf.map((branch) => typeOf(branch, indent)).join(' | ');
  if (schema.type === undefined) return 'unknown';
  const types = typeof schema.type === 'string' ? [schema.type] : schema.type;
  return types.map((type) => scalar(type, schema, indent)).join(' | ');
}

function docComment(description: string | undefined, indent: string): string {
  return description === undefined ? '' : `${indent}/** ${description} */\n`;
}

function members(schema: JsonSchema, indent: string): string {
  const required = new Set(schema.required ?? []);
  const lines = Object.entries(schema.properties ?? {}).map(([name, property]) => {
    const optional = required.has(name) ? '' : '?';
    // A `$ref` carries its description on the definition; one beside it describes the member.
    return `${docComment(property.description, indent)}${indent}readonly ${propertyKey(name)}${optional}: ${typeOf(property, indent)};\n`;
  });
  if (schema.additionalProperties === true) {
    lines.push(
      `${indent}/** Fields the interface does not name pass through as sent. */\n${indent}readonly [field: string]: unknown;\n`,
    );
  }
  return lines.join('');
}

function objectBody(schema: JsonSchema, indent: string): string {
  const body = members(schema, `${indent}  `);
  return body === '' ? 'Readonly<Record<string, unknown>>' : `{\n${body}${indent}}`;
}

function definition(name: string, schema: JsonSchema): string {
  const doc = docComment(schema.description, '');
  if (schema.type === 'object') return `${doc}export interface ${name} {\n${members(schema, '  ')}}\n`;
  return `${doc}export type ${name} = ${typeOf(schema, '')};\n`;
}

/** The generated module's text for `definitions`, in their order. */
export function renderEventTypes(definitions: Readonly<Record<string, JsonSchema>>): string {
  const parts = Object.entries(definitions).map(([name, schema]) => definition(name, schema));
  return `${HEADER}\n${parts.join('\n')}`;
}
