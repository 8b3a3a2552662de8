/**
 * A check of synthesized resources against their types' CloudFormation registry schemas, for the
 * types cfn-lint does not know yet (`AWS::EventsV2::*`, E3006). The schemas come from
 * `@aws-cdk/aws-service-spec` (its db.json.gz is built from the registry schemas): property names,
 * required properties, value types and allowed values, at every level of nesting. Intrinsic
 * functions (`Ref`, `Fn::*`) are taken for any value: CloudFormation resolves them at deploy.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { gunzipSync } from 'node:zlib';

interface SpecType {
  readonly type: string;
  readonly element?: SpecType;
  readonly reference?: { readonly $ref: string };
  readonly types?: readonly SpecType[];
  readonly allowedValues?: readonly string[];
}

interface SpecProperty {
  readonly type: SpecType;
  readonly required?: boolean;
  readonly causesReplacement?: string;
}

interface SpecEntity {
  readonly $id: string;
  readonly name: string;
  readonly properties: Readonly<Record<string, SpecProperty>>;
}

interface SpecResource extends SpecEntity {
  readonly cloudFormationType: string;
  readonly attributes?: Readonly<Record<string, unknown>>;
  /** Nested properties whose change replaces the resource, each as a path. */
  readonly additionalReplacementProperties?: readonly (readonly string[])[];
}

interface SpecDb {
  readonly schema: {
    readonly resource: { readonly entities: readonly SpecResource[] };
    readonly typeDefinition: { readonly entities: readonly SpecEntity[] };
  };
}

/** The resource types and property types of the registry schemas, by CloudFormation type and id. */
export interface RegistrySchemas {
  readonly resources: ReadonlyMap<string, SpecResource>;
  readonly types: ReadonlyMap<string, SpecEntity>;
}

/**
 * What `@aws-cdk/aws-service-spec` 0.1.216 (the newest on npm) drops from the registry schemas:
 * `AWS::EventsV2::Subscriber`'s required `InvokeConfiguration` is not among its properties, though
 * the same entry names `InvokeConfiguration/TargetArn` among its replacement properties. Written
 * here from the CloudFormation template reference (`AWS::EventsV2::Subscriber InvokeConfiguration`,
 * `SqsParameters`); the target types this project does not use are checked as JSON objects only.
 * A test fails once the spec has the property, so this goes when it is no longer needed.
 */
export const SPEC_GAPS: Readonly<Record<string, Readonly<Record<string, SpecProperty>>>> = {
  'AWS::EventsV2::Subscriber': {
    InvokeConfiguration: {
      required: true,
      type: { type: 'ref', reference: { $ref: 'gap:InvokeConfiguration' } },
    },
  },
};
const GAP_TYPES: readonly SpecEntity[] = [
  {
    $id: 'gap:InvokeConfiguration',
    name: 'InvokeConfiguration',
    properties: {
      TargetArn: { required: true, type: { type: 'string' } },
      RoleArn: { required: true, type: { type: 'string' } },
      SqsParameters: { type: { type: 'ref', reference: { $ref: 'gap:SqsParameters' } } },
      LambdaParameters: { type: { type: 'json' } },
      SnsParameters: { type: { type: 'json' } },
      KinesisParameters: { type: { type: 'json' } },
      StepFunctionsParameters: { type: { type: 'json' } },
      HttpParameters: { type: { type: 'json' } },
      UniversalTargetParameters: { type: { type: 'json' } },
      EventBusV2Parameters: { type: { type: 'json' } },
    },
  },
  {
    $id: 'gap:SqsParameters',
    name: 'SqsParameters',
    properties: {
      MessageGroupId: { type: { type: 'string' } },
      MessageDeduplicationId: { type: { type: 'string' } },
      DelaySeconds: { type: { type: 'string' } },
      MessageAttributes: { type: { type: 'json' } },
      MessageSystemAttributes: { type: { type: 'json' } },
    },
  },
];

let loaded: RegistrySchemas | undefined;
let specOnly: ReadonlyMap<string, SpecResource> | undefined;

/** The spec's own resource entries, without `SPEC_GAPS` (to tell when a gap is closed). */
export function specResource(type: string): SpecResource | undefined {
  registrySchemas();
  return specOnly!.get(type);
}

/** The registry schemas of every resource type (loaded once: 15 MB of JSON). */
export function registrySchemas(): RegistrySchemas {
  if (loaded === undefined) {
    const file = createRequire(import.meta.url).resolve('@aws-cdk/aws-service-spec/db.json.gz');
    const db = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8')) as SpecDb;
    specOnly = new Map(db.schema.resource.entities.map((entity) => [entity.cloudFormationType, entity]));
    const resources = new Map(specOnly);
    for (const [type, properties] of Object.entries(SPEC_GAPS)) {
      const entity = resources.get(type);
      if (entity !== undefined) {
        resources.set(type, { ...entity, properties: { ...properties, ...entity.properties } });
      }
    }
    loaded = {
      resources,
      types: new Map(
        [...db.schema.typeDefinition.entities, ...GAP_TYPES].map((entity) => [entity.$id, entity]),
      ),
    };
  }
  return loaded;
}

/**
 * The properties whose change makes CloudFormation replace a resource of `type` (createOnly), a
 * nested one as a dotted path (`InvokeConfiguration.TargetArn`).
 */
export function replacementPropertiesOf(type: string): string[] {
  const resource = registrySchemas().resources.get(type);
  if (resource === undefined) throw new Error(`No registry schema for ${type}`);
  const topLevel = Object.entries(resource.properties)
    .filter(([, property]) => property.causesReplacement === 'yes')
    .map(([name]) => name);
  const nested = (resource.additionalReplacementProperties ?? []).map((path) => path.join('.'));
  return [...new Set([...topLevel, ...nested])];
}

function isIntrinsic(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && (keys[0] === 'Ref' || keys[0]!.startsWith('Fn::'));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkValue(schemas: RegistrySchemas, type: SpecType, value: unknown, path: string): string[] {
  if (isIntrinsic(value)) return [];
  switch (type.type) {
    case 'string': {
      if (typeof value !== 'string') return [`${path}: expected a string, got ${JSON.stringify(value)}`];
      if (type.allowedValues !== undefined && !type.allowedValues.includes(value)) {
        return [`${path}: ${JSON.stringify(value)} is not one of ${type.allowedValues.join(', ')}`];
      }
      return [];
    }
    case 'integer':
      return Number.isInteger(value) || (typeof value === 'string' && /^-?\d+$/.test(value))
        ? []
        : [`${path}: expected an integer, got ${JSON.stringify(value)}`];
    case 'number':
      return typeof value === 'number' || (typeof value === 'string' && Number.isFinite(Number(value)))
        ? []
        : [`${path}: expected a number, got ${JSON.stringify(value)}`];
    case 'boolean':
      return typeof value === 'boolean' || value === 'true' || value === 'false'
        ? []
        : [`${path}: expected a boolean, got ${JSON.stringify(value)}`];
    case 'json':
      return isObject(value) || typeof value === 'string'
        ? []
        : [`${path}: expected a JSON object, got ${JSON.stringify(value)}`];
    case 'array':
      return Array.isArray(value)
        ? value.flatMap((item, index) => checkValue(schemas, type.element!, item, `${path}[${index}]`))
        : [`${path}: expected an array, got ${JSON.stringify(value)}`];
    case 'map':
      return isObject(value)
        ? Object.entries(value).flatMap(([key, item]) =>
            checkValue(schemas, type.element!, item, `${path}.${key}`),
          )
        : [`${path}: expected an object, got ${JSON.stringify(value)}`];
    case 'tag':
      return isObject(value) && typeof value.Key === 'string' && 'Value' in value
        ? []
        : [`${path}: expected a tag {Key, Value}, got ${JSON.stringify(value)}`];
    case 'ref': {
      const definition = schemas.types.get(type.reference!.$ref);
      if (definition === undefined)
        return [`${path}: the schema names an unknown type ${type.reference!.$ref}`];
      return isObject(value)
        ? checkProperties(schemas, definition, value, path)
        : [`${path}: expected a ${definition.name} object, got ${JSON.stringify(value)}`];
    }
    case 'union': {
      const problems = (type.types ?? []).map((member) => checkValue(schemas, member, value, path));
      return problems.some((list) => list.length === 0) ? [] : problems.flat();
    }
    default:
      return [];
  }
}

function checkProperties(
  schemas: RegistrySchemas,
  entity: SpecEntity,
  properties: Readonly<Record<string, unknown>>,
  path: string,
): string[] {
  const problems: string[] = [];
  for (const [name, value] of Object.entries(properties)) {
    const property = entity.properties[name];
    if (property === undefined) {
      problems.push(`${path}.${name}: ${entity.name} has no property ${name}`);
      continue;
    }
    problems.push(...checkValue(schemas, property.type, value, `${path}.${name}`));
  }
  for (const [name, property] of Object.entries(entity.properties)) {
    if (property.required === true && properties[name] === undefined) {
      problems.push(`${path}: ${entity.name} requires ${name}`);
    }
  }
  return problems;
}

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
}

/**
 * Every problem of the template's resources whose type starts with `typePrefix` against their
 * registry schemas, as `<logical id>.<property path>: <problem>`; empty when they conform.
 *
 * @example
 * expect(registrySchemaProblems(template, 'AWS::EventsV2::')).toEqual([]);
 */
export function registrySchemaProblems(
  template: { readonly Resources?: Readonly<Record<string, TemplateResource>> },
  typePrefix: string,
): string[] {
  const schemas = registrySchemas();
  return Object.entries(template.Resources ?? {})
    .filter(([, resource]) => resource.Type.startsWith(typePrefix))
    .flatMap(([logicalId, resource]) => {
      const schema = schemas.resources.get(resource.Type);
      if (schema === undefined) return [`${logicalId}: no registry schema for ${resource.Type}`];
      return checkProperties(schemas, schema, resource.Properties ?? {}, logicalId);
    });
}
