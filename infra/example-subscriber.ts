/**
 * The example subscriber of the repo's app (`-c exampleSubscriber=true`): what a team consuming
 * transactions deploys, built the way the docs advise. A rule of its own on the bus (the
 * transaction detail-type of the poller's source) into a queue of its own, with a DLQ for
 * deliveries and for messages that keep failing; a Lambda on the queue with partial batch
 * responses, running `functions/subscriber-example/handler.ts`; and the construct's grants for
 * subscribers (claim-check read, idempotency table). The route queues stay the teams': this
 * subscriber takes nothing from them.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { BankingEventsPoller } from 'banking-events-poller';
import { Construct } from 'constructs';
import { ConfigurationError } from '../functions/core/errors.ts';
import {
  POLLER_ARCHITECTURE,
  POLLER_BUNDLING,
  POLLER_NODE_OPTIONS,
  POLLER_RUNTIME,
} from './constructs/poller-bundling.ts';

/** The example's handler in this repository. */
export const EXAMPLE_SUBSCRIBER_ENTRY = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '../functions/subscriber-example/handler.ts',
);

/** Queues as the construct's routes make them: encrypted, TLS only, 14 days, 1 MiB messages. */
const QUEUE_SECURITY: sqs.QueueProps = {
  encryption: sqs.QueueEncryption.SQS_MANAGED,
  enforceSSL: true,
  retentionPeriod: Duration.days(14),
  maxMessageSizeBytes: 1_048_576,
};

/** The detail-type it subscribes to. */
export const EXAMPLE_SUBSCRIBER_DETAIL_TYPE = 'transaction';

/** Its Powertools service name (logs). */
export const EXAMPLE_SUBSCRIBER_SERVICE = 'example-subscriber';

const FUNCTION_TIMEOUT = Duration.seconds(30);
/** Receives before a message moves to the DLQ: a handler failing this often needs a person. */
const MAX_RECEIVE_COUNT = 5;

export interface ExampleSubscriberProps {
  readonly poller: BankingEventsPoller;
  /** The `source` of the poller's events. */
  readonly eventSource: string;
  /** @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
}

export class ExampleSubscriber extends Construct {
  public readonly rule: events.Rule;
  public readonly queue: sqs.Queue;
  public readonly deadLetterQueue: sqs.Queue;
  public readonly subscriberFunction: nodejs.NodejsFunction;
  public readonly idempotencyTable: dynamodb.ITable;

  constructor(scope: Construct, id: string, props: ExampleSubscriberProps) {
    super(scope, id);
    const { poller, eventSource } = props;
    // Its rule needs the classic bus; the Custom Event Bus has no rules.
    const { eventBus } = poller;
    if (eventBus === undefined) {
      throw new ConfigurationError(
        'Invalid CDK context: "exampleSubscriber" subscribes with a rule of the classic bus, and the custom bus has none: ' +
          'set it to false with eventBusKind "custom"',
        { key: 'exampleSubscriber' },
      );
    }

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', QUEUE_SECURITY);
    this.queue = new sqs.Queue(this, 'Queue', {
      ...QUEUE_SECURITY,
      // AWS's advice for a queue a Lambda reads: six times the function's timeout.
      visibilityTimeout: Duration.seconds(FUNCTION_TIMEOUT.toSeconds() * 6),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });
    this.rule = new events.Rule(this, 'Rule', {
      eventBus,
      description: `The example subscriber's ${EXAMPLE_SUBSCRIBER_DETAIL_TYPE} events from ${eventSource}`,
      eventPattern: { source: [eventSource], detailType: [EXAMPLE_SUBSCRIBER_DETAIL_TYPE] },
      targets: [
        new targets.SqsQueue(this.queue, {
          deadLetterQueue: this.deadLetterQueue,
          maxEventAge: Duration.hours(24),
          retryAttempts: 185,
        }),
      ],
    });

    const logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? logs.RetentionDays.ONE_MONTH,
    });
    const role = new iam.Role(this, 'FunctionRole', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description:
        'Example subscriber: its queue, the claim-check objects, its idempotency records, its logs',
    });
    logGroup.grantWrite(role);
    const { idempotencyTable } = poller.grantSubscriber(role);
    this.idempotencyTable = idempotencyTable;

    this.subscriberFunction = new nodejs.NodejsFunction(this, 'Function', {
      entry: EXAMPLE_SUBSCRIBER_ENTRY,
      handler: 'handler',
      description: `Example subscriber of ${EXAMPLE_SUBSCRIBER_DETAIL_TYPE} events, built with the subscriber kit`,
      runtime: POLLER_RUNTIME,
      architecture: POLLER_ARCHITECTURE,
      memorySize: 256,
      timeout: FUNCTION_TIMEOUT,
      role,
      logGroup,
      environment: {
        IDEMPOTENCY_TABLE: idempotencyTable.tableName,
        CLAIM_CHECK_BUCKET: poller.claimCheckBucket.bucketName,
        EVENT_SOURCE: eventSource,
        POWERTOOLS_SERVICE_NAME: EXAMPLE_SUBSCRIBER_SERVICE,
        POWERTOOLS_LOG_LEVEL: 'INFO',
        NODE_OPTIONS: POLLER_NODE_OPTIONS,
      },
      // The poller's esbuild settings: local esbuild, ESM, the SDK bundled.
      bundling: POLLER_BUNDLING,
      tracing: lambda.Tracing.DISABLED,
    });
    this.subscriberFunction.addEventSource(
      new SqsEventSource(this.queue, { batchSize: 10, reportBatchItemFailures: true }),
    );
  }
}
