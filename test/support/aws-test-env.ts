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
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';

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
  /** A secret holding `secretString`; resolves to its name (usable as `SecretId`). */
  createSecret(secretString: string): Promise<string>;
  /** A custom bus with one rule per `detail-type`, each routed to its own queue. */
  createRoutedBus(detailTypes: readonly string[]): Promise<RoutedBus>;
  /** A custom bus with one rule matching `source` (default `banking.events`), routed to one queue. */
  createRecordedBus(source?: string): Promise<RecordedBus>;
  /** Receives until the queue is empty; messages stay invisible for ten minutes afterwards. */
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

  return {
    dynamodb,
    secretsManager,
    eventBridge,
    sqs,
    uniqueName,

    async createCheckpointTable() {
      const tableName = uniqueName('checkpoints');
      await dynamodb.send(
        new CreateTableCommand({
          TableName: tableName,
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          BillingMode: 'PAY_PER_REQUEST',
        }),
      );
      return tableName;
    },

    async createSecret(secretString) {
      const name = uniqueName('banking-credentials');
      await secretsManager.send(new CreateSecretCommand({ Name: name, SecretString: secretString }));
      return name;
    },

    async createRoutedBus(detailTypes) {
      const busName = uniqueName('bus');
      await eventBridge.send(new CreateEventBusCommand({ Name: busName }));
      const queueUrls = new Map<string, string>();
      for (const [index, detailType] of detailTypes.entries()) {
        const queue = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName(`q${index}`) }));
        const queueUrl = queue.QueueUrl!;
        const attributes = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
        );
        const ruleName = uniqueName(`rule${index}`);
        await eventBridge.send(
          new PutRuleCommand({
            Name: ruleName,
            EventBusName: busName,
            EventPattern: JSON.stringify({ 'detail-type': [detailType] }),
          }),
        );
        await eventBridge.send(
          new PutTargetsCommand({
            Rule: ruleName,
            EventBusName: busName,
            Targets: [{ Id: 'queue', Arn: attributes.Attributes?.QueueArn }],
          }),
        );
        queueUrls.set(detailType, queueUrl);
      }
      return { busName, queueUrls };
    },

    async createRecordedBus(source = 'banking.events') {
      const busName = uniqueName('bus');
      await eventBridge.send(new CreateEventBusCommand({ Name: busName }));
      const queue = await sqs.send(new CreateQueueCommand({ QueueName: uniqueName('recorded') }));
      const queueUrl = queue.QueueUrl!;
      const attributes = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }),
      );
      const ruleName = uniqueName('all');
      await eventBridge.send(
        new PutRuleCommand({
          Name: ruleName,
          EventBusName: busName,
          EventPattern: JSON.stringify({ source: [source] }),
        }),
      );
      await eventBridge.send(
        new PutTargetsCommand({
          Rule: ruleName,
          EventBusName: busName,
          Targets: [{ Id: 'queue', Arn: attributes.Attributes?.QueueArn }],
        }),
      );
      return { busName, queueUrl };
    },

    async drainQueueBodies(queueUrl) {
      const bodies: string[] = [];
      for (;;) {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 0,
            VisibilityTimeout: 600,
          }),
        );
        const messages = received.Messages ?? [];
        if (messages.length === 0) return bodies;
        for (const message of messages) bodies.push(message.Body ?? 'null');
      }
    },

    async drainQueue(queueUrl) {
      return (await this.drainQueueBodies(queueUrl)).map((body) => JSON.parse(body) as DeliveredEvent);
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
