/**
 * The operator's AWS clients, built once per command from the SDK's standard configuration
 * (`AWS_PROFILE`, `AWS_REGION`, `AWS_ENDPOINT_URL`, SSO, …) plus `--profile` and `--region`, as
 * the AWS CLI reads them. Calls are bounded, so an unreachable endpoint fails in seconds, not minutes.
 */
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Agent } from 'undici';
import { awsAgent } from '../adapters/aws/aws-http-exchange.ts';
import {
  type CredentialsAndRegionSource,
  EventBridgeV2Rpc,
} from '../adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { type ScrubbableClient, withScrubbedErrors } from '../adapters/aws/service-error-redaction.ts';

export interface AwsOptions {
  /** A profile of ~/.aws/config; the SDK's default chain when absent. */
  readonly profile?: string;
  /** The SDK's region chain when absent. */
  readonly region?: string;
}

/** Long enough for SQS long polls (20 s), short enough that a dead endpoint is reported promptly. */
const REQUEST_HANDLER = {
  connectionTimeout: 3_000,
  requestTimeout: 25_000,
  throwOnRequestTimeout: true,
} as const;

/**
 * An invocation runs as long as the function's timeout (at most 15 minutes): wait that long, and
 * never resend one (a replay would publish twice).
 */
const LAMBDA_INVOKE = {
  maxAttempts: 1,
  requestHandler: {
    connectionTimeout: 3_000,
    requestTimeout: 15 * 60_000 + 30_000,
    throwOnRequestTimeout: true,
  },
} as const;

interface Destroyable {
  destroy(): void;
}

/** Lazily built clients; `destroy()` closes the ones that were used. */
export class AwsClients {
  readonly #config: Record<string, unknown>;
  readonly #built = new Map<string, Destroyable>();
  #eventBridgeV2: { readonly rpc: EventBridgeV2Rpc; readonly agent: Agent } | undefined;

  constructor(options: AwsOptions) {
    this.#config = {
      maxAttempts: 3,
      requestHandler: REQUEST_HANDLER,
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      ...(options.region === undefined ? {} : { region: options.region }),
    };
  }

  get cloudFormation(): CloudFormationClient {
    return this.#client('cloudformation', () => new CloudFormationClient(this.#config));
  }
  get cloudWatch(): CloudWatchClient {
    return this.#client('cloudwatch', () => new CloudWatchClient(this.#config));
  }
  get dynamodb(): DynamoDBClient {
    return this.#client('dynamodb', () => new DynamoDBClient(this.#config));
  }
  get eventBridge(): EventBridgeClient {
    return this.#client('eventbridge', () => new EventBridgeClient(this.#config));
  }
  get lambda(): LambdaClient {
    return this.#client('lambda', () => new LambdaClient({ ...this.#config, ...LAMBDA_INVOKE }));
  }
  /** Only to read an operator answer the function left in the claim-check bucket. */
  get s3(): S3Client {
    return this.#client('s3', () => new S3Client(this.#config));
  }
  get scheduler(): SchedulerClient {
    return this.#client('scheduler', () => new SchedulerClient(this.#config));
  }
  get secretsManager(): SecretsManagerClient {
    return this.#client('secretsmanager', () => new SecretsManagerClient(this.#config));
  }
  get sqs(): SQSClient {
    return this.#client('sqs', () => new SQSClient(this.#config));
  }
  /**
   * The Custom Event Bus API (no SDK client exists): signed with the EventBridge client's
   * credentials and region (`--profile`, `--region`), its endpoint from `AWS_ENDPOINT_URL_EVENTBRIDGEV2`,
   * `AWS_ENDPOINT_URL` or the regional host.
   */
  get eventBridgeV2(): EventBridgeV2Rpc {
    if (this.#eventBridgeV2 === undefined) {
      const agent = awsAgent({
        connectMs: REQUEST_HANDLER.connectionTimeout,
        answerMs: REQUEST_HANDLER.requestTimeout,
      });
      const client = this.eventBridge as unknown as CredentialsAndRegionSource;
      this.#eventBridgeV2 = { rpc: new EventBridgeV2Rpc({ client, dispatcher: agent }), agent };
    }
    return this.#eventBridgeV2.rpc;
  }

  destroy(): void {
    for (const client of this.#built.values()) client.destroy();
    this.#built.clear();
    // Its kept-alive connections would hold the process open.
    void this.#eventBridgeV2?.agent.close();
    this.#eventBridgeV2 = undefined;
  }

  #client<T extends Destroyable & ScrubbableClient>(key: string, build: () => T): T {
    let client = this.#built.get(key) as T | undefined;
    if (client === undefined) {
      // An AWS error may quote the signed request (the session token): scrubbed before it is printed.
      client = withScrubbedErrors(build());
      this.#built.set(key, client);
    }
    return client;
  }
}
