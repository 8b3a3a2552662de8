/**
 * Points the AWS SDK's default configuration at moto and creates uniquely named resources.
 *
 * The product's contract: AWS clients are built with the SDK's default configuration only, so the
 * standard `AWS_ENDPOINT_URL` variable is all it takes to steer them to moto; there are no
 * project-specific endpoint variables. All test files share one moto server, so every resource a
 * test creates carries a unique name.
 */
import { randomUUID } from 'node:crypto';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  CreateEventBusCommand,
  EventBridgeClient,
  PutRuleCommand,
  PutTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import { CreateSecretCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { createQueue, drainMessages, type Queue } from './sqs-queues.ts';

/** What moto's (and AWS's) default EventBridge → SQS delivery puts in a message body. */
export interface DeliveredEvent {
  readonly id: string;
  readonly time: string;
  readonly version: string;
  readonly 'detail-type': string;
  readonly source: string;
  readonly region: string;
  readonly resources: readonly string[];
  readonly detail: unknown;
}

export interface RoutedBus {
  readonly busName: string;
  /** Queue URL per routed `detail-type`. */
  readonly queueUrls: ReadonlyMap<string, string>;
}

/** A bus whose one rule sends every event of `source` to one queue: the cheapest way to see all that was published. */
export interface RecordedBus {
  readonly busName: string;
  readonly queueUrl: string;
}

export interface MotoEnvironment {
  /** Clients built from the default configuration after the variables were set. */
  readonly dynamodb: DynamoDBClient;
  readonly secretsManager: SecretsManagerClient;
  readonly eventBridge: EventBridgeClient;
  readonly sqs: SQSClient;
  /** `prefix-<random>`, short enough for every AWS name limit used here (SQS: 80 chars). */
  uniqueName(prefix: string): string;
  /** A table with partition key `pk` (string), on-demand; resolves to its name. */
  createCheckpointTable(): Promise<string>;
  /** The subscriber kit's idempotency table (partition key `id`, string), on-demand; resolves to its name. */
  createIdempotencyTable(): Promise<string>;
  /** A secret holding `secretString`; resolves to its name (usable as `SecretId`). */
  createSecret(secretString: string): Promise<string>;
  /** A custom bus with one rule per `detail-type`, each routed to its own queue. */
  createRoutedBus(detailTypes: readonly string[]): Promise<RoutedBus>;
  /** A custom bus with one rule matching `source` (default `banking.events`), routed to one queue. */
  createRecordedBus(source?: string): Promise<RecordedBus>;
  /** A rule on `busName` matching `eventPattern`, targeting a new queue named after `prefix`. */
  routeToQueue(busName: string, eventPattern: unknown, prefix: string): Promise<Queue>;
  /** Receives and deletes until the queue is empty (`drainMessages`). */
  drainQueue(queueUrl: string): Promise<DeliveredEvent[]>;
  /** The same, as the message bodies' text. */
  drainQueueBodies(queueUrl: string): Promise<string[]>;
  /** Puts back the variables as they were before `useMotoEnvironment`. */
  restore(): void;
}

const MOTO_VARIABLES = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'testing',
  AWS_SECRET_ACCESS_KEY: 'testing',
} as const;

/**
 * Variables that would take precedence over ours or leak a developer's real session into tests:
 * service-specific endpoints win over `AWS_ENDPOINT_URL`, a profile or session token would be
 * combined with the fake keys.
 */
function conflictingVariables(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env).filter(
    (name) =>
      name.startsWith('AWS_ENDPOINT_URL_') ||
      name === 'AWS_SESSION_TOKEN' ||
      name === 'AWS_PROFILE' ||
      name === 'AWS_DEFAULT_PROFILE' ||
      name === 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
  );
}

/**
 * Sets `AWS_REGION`, fake credentials and `AWS_ENDPOINT_URL` so that any client built with the
 * SDK's default configuration talks to moto, then builds test clients the same way.
 *
 * @example
 * const aws = useMotoEnvironment(inject('motoEndpoint'));
 * const tableName = await aws.createCheckpointTable();
 */
export function useMotoEnvironment(endpoint: string): MotoEnvironment {
  const touched = [...Object.keys(MOTO_VARIABLES), 'AWS_ENDPOINT_URL', ...conflictingVariables(process.env)];
  const previous = new Map(touched.map((name) => [name, process.env[name]]));
  for (const name of conflictingVariables(process.env)) delete process.env[name];
  Object.assign(process.env, MOTO_VARIABLES, { AWS_ENDPOINT_URL: endpoint });

  const dynamodb = new DynamoDBClient({});
  const secretsManager = new SecretsManagerClient({});
  const eventBridge = new EventBridgeClient({});
  const sqs = new SQSClient({});

  const uniqueName = (prefix: string): string => `${prefix}-${randomUUID().slice(0, 13)}`;
  const createTable = async (prefix: string, key: string): Promise<string> => {
    const tableName = uniqueName(prefix);
    await dynamodb.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: key, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: key, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    return tableName;
  };
  const routeToQueue = async (busName: string, eventPattern: unknown, prefix: string): Promise<Queue> => {
    const queue = await createQueue(sqs, uniqueName(prefix));
    const ruleName = uniqueName(prefix);
    await eventBridge.send(
      new PutRuleCommand({
        Name: ruleName,
        EventBusName: busName,
        EventPattern: JSON.stringify(eventPattern),
      }),
    );
    await eventBridge.send(
      new PutTargetsCommand({
        Rule: ruleName,
        EventBusName: busName,
        Targets: [{ Id: 'queue', Arn: queue.arn }],
      }),
    );
    return queue;
  };

  return {
    dynamodb,
    secretsManager,
    eventBridge,
    sqs,
    uniqueName,

    createCheckpointTable: () => createTable('checkpoints', 'pk'),
    createIdempotencyTable: () => createTable('idempotency', 'id'),

    async createSecret(secretString) {
      const name = uniqueName('banking-credentials');
      await secretsManager.send(new CreateSecretCommand({ Name: name, SecretString: secretString }));
      return name;
    },

    routeToQueue,

    async createRoutedBus(detailTypes) {
      const busName = uniqueName('bus');
      await eventBridge.send(new CreateEventBusCommand({ Name: busName }));
      const queueUrls = new Map<string, string>();
      for (const [index, detailType] of detailTypes.entries()) {
        const queue = await routeToQueue(busName, { 'detail-type': [detailType] }, `q${index}`);
        queueUrls.set(detailType, queue.url);
      }
      return { busName, queueUrls };
    },

    async createRecordedBus(source = 'banking.events') {
      const busName = uniqueName('bus');
      await eventBridge.send(new CreateEventBusCommand({ Name: busName }));
      const queue = await routeToQueue(busName, { source: [source] }, 'recorded');
      return { busName, queueUrl: queue.url };
    },

    async drainQueueBodies(queueUrl) {
      return (await drainMessages(sqs, queueUrl)).map((message) => message.body);
    },

    async drainQueue(queueUrl) {
      return (await drainMessages(sqs, queueUrl)).map(
        (message) => JSON.parse(message.body) as DeliveredEvent,
      );
    },

    restore() {
      for (const [name, value] of previous) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      for (const client of [dynamodb, secretsManager, eventBridge, sqs]) client.destroy();
    },
  };
}
