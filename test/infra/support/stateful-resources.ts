/**
 * What an upgrade must never replace: the stateful resources of a synthesized template, each with
 * the properties whose change makes CloudFormation replace it, and a comparison against a
 * recorded state that names every replacement an upgrade would cause.
 */
import { CfnResource, type Stack } from 'aws-cdk-lib';

/** A resource type that holds data or state, and the properties CloudFormation replaces it for. */
interface StatefulType {
  /** What is lost when it is replaced, for the failure message. */
  readonly loses: string;
  /**
   * Properties whose change forces a replacement: the type's `createOnlyProperties` in its
   * CloudFormation registry schema (the template reference's "Update requires: Replacement"),
   * plus, for the table, its key schema and local indexes (replacement in the template reference).
   * A nested property is a dotted path (`InvokeConfiguration.TargetArn`).
   */
  readonly replacementProperties: readonly string[];
}

export const STATEFUL_TYPES: Readonly<Record<string, StatefulType>> = Object.freeze({
  'AWS::DynamoDB::Table': {
    loses: "every program's checkpoint and lease: the poller would publish each feed again from its start",
    replacementProperties: ['TableName', 'KeySchema', 'LocalSecondaryIndexes', 'ImportSourceSpecification'],
  },
  'AWS::SecretsManager::Secret': {
    loses: 'the banking credentials stored in it',
    replacementProperties: ['Name'],
  },
  'AWS::Events::EventBus': {
    loses: "the bus every subscriber's rules are attached to",
    replacementProperties: ['Name', 'EventSourceName'],
  },
  'AWS::Events::Archive': {
    loses: 'every archived event, and with them replays',
    replacementProperties: ['ArchiveName', 'SourceArn'],
  },
  'AWS::EventSchemas::Registry': {
    loses: 'the schema registry and the schema versions in it',
    replacementProperties: ['RegistryName'],
  },
  'AWS::S3::Bucket': {
    loses: 'the claim-checked event bodies that pointer events name',
    replacementProperties: ['BucketName', 'BucketNamePrefix', 'BucketNamespace'],
  },
  'AWS::SQS::Queue': {
    loses: 'the messages waiting in the queue (dead letters included)',
    replacementProperties: ['QueueName', 'FifoQueue'],
  },
  'AWS::Logs::LogGroup': {
    loses: "the function's logs",
    replacementProperties: ['LogGroupName'],
  },
  'AWS::SNS::Topic': {
    loses: 'the subscriptions confirmed on the alarm topic (every recipient must confirm again)',
    replacementProperties: ['TopicName', 'FifoTopic'],
  },
  'AWS::EventsV2::EventBus': {
    loses: 'every event the custom bus retains (where replays come from), and its subscribers',
    replacementProperties: ['Name'],
  },
  'AWS::EventsV2::Subscriber': {
    loses:
      'its place on the bus: a new subscriber starts from the newest event, and what the old one had not ' +
      'delivered yet is never delivered',
    replacementProperties: [
      'Name',
      'EventBusArn',
      'Type',
      'StartingPosition',
      'PointInTimeConfiguration',
      'InvokeConfiguration.TargetArn',
    ],
  },
  'AWS::Lambda::Function': {
    loses: 'nothing stored, but references to the function outside the stack (pinned all the same)',
    replacementProperties: ['FunctionName', 'PackageType', 'TenancyConfig'],
  },
});

/** One stateful resource as recorded: where it comes from and what would replace it. */
export interface StatefulResourceState {
  readonly type: string;
  /** The construct path under the stack, for people reading a failure. */
  readonly path: string;
  /** Each replacement property's value in the template; `null` when the template leaves it out. */
  readonly properties: Readonly<Record<string, unknown>>;
  /** `Retain` must stay `Retain`: `Delete` would lose the data when the stack or resource goes. */
  readonly deletionPolicy: string | null;
}

export type StatefulResources = Readonly<Record<string, StatefulResourceState>>;

interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
  readonly DeletionPolicy?: string;
}

/** Logical id → construct path below the stack, for every CloudFormation resource of `stack`. */
export function constructPaths(stack: Stack): Record<string, string> {
  const paths: Record<string, string> = {};
  for (const construct of stack.node.findAll()) {
    if (!CfnResource.isCfnResource(construct)) continue;
    const path = construct.node.path.slice(stack.node.path.length + 1).replace(/\/Resource$/, '');
    paths[stack.getLogicalId(construct)] = path;
  }
  return paths;
}

/** The stateful resources of a template, keyed by logical id. */
export function statefulResourcesOf(
  template: { readonly Resources?: Readonly<Record<string, TemplateResource>> },
  paths: Readonly<Record<string, string>>,
): StatefulResources {
  const resources: Record<string, StatefulResourceState> = {};
  for (const [logicalId, resource] of Object.entries(template.Resources ?? {})) {
    const stateful = STATEFUL_TYPES[resource.Type];
    if (stateful === undefined) continue;
    resources[logicalId] = {
      type: resource.Type,
      path: paths[logicalId] ?? logicalId,
      properties: Object.fromEntries(
        stateful.replacementProperties.map((name) => [name, valueAt(resource.Properties, name) ?? null]),
      ),
      deletionPolicy: resource.DeletionPolicy ?? null,
    };
  }
  return resources;
}

function valueAt(properties: Readonly<Record<string, unknown>> | undefined, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (node, key) =>
        node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined,
      properties,
    );
}

/**
 * What deploying `current` over a stack deployed from `recorded` would do to its stateful
 * resources: one line per resource that would be replaced, deleted or left unprotected, and one
 * per stateful resource the record does not know yet. Empty when the upgrade is safe.
 */
export function upgradeProblems(recorded: StatefulResources, current: StatefulResources): string[] {
  const problems: string[] = [];
  for (const [logicalId, before] of Object.entries(recorded)) {
    const after = current[logicalId];
    const what = `${logicalId} (${before.type} at ${before.path})`;
    const loses = STATEFUL_TYPES[before.type]?.loses ?? 'its state';
    if (after === undefined) {
      // A changed construct id or parent changes the logical id: a new resource of the same type appears.
      const successors = Object.entries(current)
        .filter(([id, candidate]) => candidate.type === before.type && recorded[id] === undefined)
        .map(([id, candidate]) => `${id} at ${candidate.path}`);
      problems.push(
        `${what} is gone: CloudFormation would delete it and lose ${loses}` +
          (successors.length > 0 ? ` (new in its place? ${successors.join(', ')})` : ''),
      );
      continue;
    }
    if (after.type !== before.type) {
      problems.push(`${what} became a ${after.type}: CloudFormation would replace it, losing ${loses}`);
      continue;
    }
    for (const [name, value] of Object.entries(before.properties)) {
      const now = after.properties[name] ?? null;
      if (JSON.stringify(now) !== JSON.stringify(value)) {
        problems.push(
          `${what}: ${name} changed from ${JSON.stringify(value)} to ${JSON.stringify(now)}; ` +
            `CloudFormation would replace it, losing ${loses}`,
        );
      }
    }
    if (before.deletionPolicy === 'Retain' && after.deletionPolicy !== 'Retain') {
      problems.push(
        `${what}: DeletionPolicy changed from Retain to ${after.deletionPolicy ?? 'Delete (the default)'}; ` +
          `removing it from the stack would then lose ${loses}`,
      );
    }
  }
  for (const [logicalId, after] of Object.entries(current)) {
    if (recorded[logicalId] === undefined) {
      problems.push(
        `${logicalId} (${after.type} at ${after.path}) is a stateful resource the record does not list: ` +
          'record it so that later releases keep it',
      );
    }
  }
  return problems;
}
