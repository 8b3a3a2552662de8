/**
 * Lambda entry point: the composition root. It parses the configuration, builds the adapters
 * once per container (clients, credential and token caches stay warm across invocations) and
 * runs one poll cycle per invocation, or, for an invocation carrying `operatorRequest`, the CLI's
 * request (`operator-request.ts`, `operator-dispatch.ts`). All behaviour lives in `functions/core/`.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { boundedClientConfig } from '../adapters/aws/bounded-client-config.ts';
import { DynamoDbCheckpointStore } from '../adapters/aws/dynamodb-checkpoint-store.ts';
import { S3ClaimCheckStore } from '../adapters/aws/s3-claim-check-store.ts';
import { SecretsManagerCredentialsProvider } from '../adapters/aws/secrets-manager-credentials.ts';
import { withScrubbedErrors } from '../adapters/aws/service-error-redaction.ts';
import { BankConnections } from '../adapters/banking-http/bank-connections.ts';
import { BankingEventFeed } from '../adapters/banking-http/banking-event-feed.ts';
import { BankingEventStream } from '../adapters/banking-http/banking-event-stream.ts';
import { daysLeft } from '../adapters/banking-http/client-certificate.ts';
import { ClientCredentialsTokenProvider } from '../adapters/banking-http/token-cache.ts';
import { memoryLimitBytes } from '../adapters/memory-limit.ts';
import { cycleLoggerFrom } from '../adapters/observability/powertools-cycle-logger.ts';
import { PowertoolsMetricsSink } from '../adapters/observability/powertools-metrics-sink.ts';
import { systemClock } from '../adapters/system-clock.ts';
import { uniqueLeaseOwner } from '../core/checkpoint/index.ts';
import { ClaimCheckPublisher } from '../core/claim-check-publisher.ts';
import { computeDeadline } from '../core/cycle-budget.ts';
import { type MemoryBudget, memoryBudget } from '../core/memory-budget.ts';
import { type CycleSummary, runPollCycle } from '../core/poll-cycle.ts';
import type { EventPublisher } from '../core/ports.ts';
import { SETTINGS } from '../settings/settings.ts';
import { toStartPosition } from '../settings/value-kinds.ts';
import { HANDLER_BUS_KINDS } from './bus-kinds.ts';
import {
  checkInvocationBounds,
  OPERATOR_REQUEST_KEY,
  parseScheduledInvocation,
  SCHEDULE_KEYS,
} from './invocation-input.ts';
import type { OperatorAnswer } from './operator-answer.ts';
import { runOperatorRequest } from './operator-dispatch.ts';
import {
  isOperatorInvocation,
  OPERATOR_REQUEST_FIELD_NAMES,
  parseOperatorRequest,
} from './operator-request.ts';
import { loadPollerConfig, type PollerConfig, resolveInvocationTarget } from './poller-config.ts';

// Read here, before any invocation, as Powertools reads them: the settings table holds the defaults.
const SERVICE_NAME = process.env.POWERTOOLS_SERVICE_NAME ?? SETTINGS.serviceName.default;
const logger = new Logger({ serviceName: SERVICE_NAME });
const metrics = new Metrics({
  serviceName: SERVICE_NAME,
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? SETTINGS.metricsNamespace.default,
});
const metricsSink = new PowertoolsMetricsSink(metrics);
const cycleLogger = cycleLoggerFrom(logger);

interface Runtime {
  readonly config: PollerConfig;
  /** What a run may hold of the events it reads, and read of a page at once: from the function's memory. */
  readonly memory: MemoryBudget;
  readonly secretsManager: SecretsManagerClient;
  readonly dynamodb: DynamoDBClient;
  /** The bus alone, for a program's events (replays publish through it). */
  readonly bus: (program: string) => EventPublisher;
  /** The bus behind the claim check when a bucket is configured, for a program's events. */
  readonly publisher: (program: string) => EventPublisher;
  /** One upstream per secret, so each keeps its credentials and token cached while the container is warm. */
  readonly upstreams: Map<string, Upstream>;
  /** The claim-check bucket, when configured: events too large for the bus, operator answers too large to return. */
  readonly claimCheckStore: S3ClaimCheckStore | undefined;
}

/**
 * The banking service as one secret's client sees it: polls and lookups, and the stream; one
 * token for both, and one set of connections (its client certificate, the egress proxy).
 */
interface Upstream {
  readonly credentials: SecretsManagerCredentialsProvider;
  readonly feed: BankingEventFeed;
  readonly stream: BankingEventStream;
  readonly connections: BankConnections;
}

let runtime: Runtime | undefined;

/** The keys an error about an invocation's event may name whole: the fields of both shapes. */
const INVOCATION_KEYS: ReadonlySet<string> = new Set([
  ...SCHEDULE_KEYS,
  OPERATOR_REQUEST_KEY,
  ...OPERATOR_REQUEST_FIELD_NAMES,
]);

/** Built on the first invocation rather than at import, so a bad variable is reported per invocation. */
function getRuntime(): Runtime {
  if (runtime === undefined) {
    const config = loadPollerConfig(process.env);
    const bus = busFactory(config);
    const claimCheckStore =
      config.claimCheckBucket === undefined
        ? undefined
        : new S3ClaimCheckStore({ bucket: config.claimCheckBucket, clientConfig: boundedClientConfig });
    const claimCheck = claimCheckFactory(config, claimCheckStore);
    const publishers = new Map<string, EventPublisher>();
    runtime = {
      config,
      memory: memoryBudget(memoryLimitBytes(config.functionMemoryMb)),
      // Errors scrubbed of the function's credentials where the SDK throws them (AWS may quote them).
      secretsManager: withScrubbedErrors(new SecretsManagerClient(boundedClientConfig)),
      dynamodb: withScrubbedErrors(new DynamoDBClient(boundedClientConfig)),
      bus,
      publisher: (program) => {
        let publisher = publishers.get(program);
        if (publisher === undefined) {
          publisher = claimCheck(bus(program));
          publishers.set(program, publisher);
        }
        return publisher;
      },
      upstreams: new Map(),
      claimCheckStore,
    };
  }
  return runtime;
}

/** The bus for a program's events, as the bus's kind publishes them (`bus-kinds.ts`). */
function busFactory(config: PollerConfig): (program: string) => EventPublisher {
  // The SDK client only supplies credentials, region and endpoint to the hand-signed requests.
  const client = withScrubbedErrors(new EventBridgeClient(boundedClientConfig));
  return HANDLER_BUS_KINDS[config.eventBusKind].publishers(config, client);
}

/** Wraps a bus in the claim check when a bucket is configured; one store for every program. */
function claimCheckFactory(
  config: PollerConfig,
  store: S3ClaimCheckStore | undefined,
): (bus: EventPublisher) => EventPublisher {
  if (store === undefined) return (bus) => bus;
  return (bus) =>
    new ClaimCheckPublisher(
      { inner: bus, store, metrics: metricsSink, logger: cycleLogger },
      { maxEntryBytes: config.maxEventEntryBytes },
    );
}

function upstreamFor(current: Runtime, secretId: string): Upstream {
  let upstream = current.upstreams.get(secretId);
  if (upstream === undefined) {
    const credentials = new SecretsManagerCredentialsProvider({
      client: current.secretsManager,
      secretId,
      ttlMs: current.config.credentialsTtlSeconds * 1000,
    });
    const connections = new BankConnections();
    const tokens = new ClientCredentialsTokenProvider({
      credentials,
      connections,
      onRefresh: () => metricsSink.add('AuthRefreshes', 'Count', 1),
    });
    upstream = {
      credentials,
      feed: new BankingEventFeed({
        credentials,
        tokens,
        cursorParam: current.config.pollCursorParam,
        limitParam: current.config.pollLimitParam,
        limit: current.config.pollLimit,
        maxPageBytes: current.memory.pageBytes,
      }),
      stream: new BankingEventStream({
        credentials,
        tokens,
        cursorParam: current.config.streamCursorParam,
        maxMessageChars: current.memory.pageBytes,
      }),
      connections,
    };
    current.upstreams.set(secretId, upstream);
  }
  return upstream;
}

/** The handler's answer: the cycle summary, which includes `published` and `checkpoint`. */
export type PollerResult = CycleSummary;

export async function handler(event: unknown, context: Context): Promise<PollerResult | OperatorAnswer> {
  logger.addContext(context);
  try {
    // First of all: an event out of bounds is refused before anything is built, read or called.
    checkInvocationBounds(event, INVOCATION_KEYS);
  } catch (error) {
    logger.error('Invocation refused; nothing was read, published or written', { error });
    throw error;
  }
  if (isOperatorInvocation(event)) return operatorRequest(event, context);
  let upstream: Upstream | undefined;
  try {
    const input = parseScheduledInvocation(event);
    const current = getRuntime();
    const target = resolveInvocationTarget(input, current.config);
    logger.appendKeys({ program: target.program });
    // A default dimension, not a per-flush one: it must survive any flush Powertools makes itself.
    metrics.setDefaultDimensions({ Program: target.program });
    const { config } = current;
    upstream = upstreamFor(current, target.secretId);
    return await runPollCycle(
      {
        feed: upstream.feed,
        lookup: upstream.feed,
        stream: upstream.stream,
        publisher: current.publisher(target.program),
        checkpoints: new DynamoDbCheckpointStore({
          client: current.dynamodb,
          tableName: current.config.checkpointTable,
          program: target.program,
        }),
        clock: systemClock,
        metrics: metricsSink,
        logger: cycleLogger,
      },
      {
        program: target.program,
        owner: uniqueLeaseOwner(context.awsRequestId),
        remainingMs: context.getRemainingTimeInMillis(),
        safetyMarginMs: current.config.safetyMarginMs,
        minPollWindowMs: current.config.minPollWindowMs,
        leaseWaitMs: current.config.leaseWaitMs,
        leaseCheckIntervalMs: current.config.leaseCheckIntervalMs,
        publish: {
          maxAttempts: current.config.publishMaxAttempts,
          concurrency: current.config.publishConcurrency,
          maxRequestsPerSecond: current.config.maxPutEventsPerSecond,
        },
        startPosition: {
          position: toStartPosition(current.config.startPosition),
          pageLimit: current.config.pollLimit,
          clockSkewAllowanceMs: current.config.startClockSkewAllowanceSeconds * 1000,
        },
        feedMode: config.feedMode,
        stream: { recovery: config.streamRecovery, lingerMs: config.streamLingerMs },
        gapRepair: { maxLookups: config.gapRepairMaxLookups, graceMs: config.gapRepairGraceSeconds * 1000 },
        maxSequenceJump: config.maxSequenceJump,
        heldBytes: current.memory.heldBytes,
      },
    );
  } catch (error) {
    logger.error('Poll cycle failed; the checkpoint stays at the last published event', { error });
    throw error;
  } finally {
    // Every run, refused ones included: an alarm on it warns before the certificate expires.
    const certificate = upstream?.connections.certificate;
    if (certificate !== undefined) {
      metricsSink.add('ClientCertificateDaysLeft', 'Count', daysLeft(certificate, Date.now()));
    }
    // Flushed on failure too: the errors and lag alarms need the metrics of failed runs most.
    metricsSink.flush();
    logger.removeKeys(['program']);
    await endOfWork();
  }
}

/** The invocation's work is over: connections a request is still stuck on are not handed to the next one. */
async function endOfWork(): Promise<void> {
  const upstreams = runtime?.upstreams.values() ?? [];
  await Promise.all([...upstreams].map((upstream) => upstream.connections.endOfWork()));
}

/** An operator request of the CLI: never a poll cycle, never the lease or the checkpoint. */
async function operatorRequest(event: unknown, context: Context): Promise<OperatorAnswer> {
  try {
    // Refused before anything is built or read: a malformed request touches nothing.
    const request = parseOperatorRequest(event);
    logger.info('Operator request', { kind: request.kind, program: request.program });
    const current = getRuntime();
    return await runOperatorRequest(request, {
      config: current.config,
      upstream: (secretId) => upstreamFor(current, secretId),
      freshCredentials: (secretId) =>
        new SecretsManagerCredentialsProvider({ client: current.secretsManager, secretId, cache: new Map() }),
      bus: current.bus(request.program),
      clock: systemClock,
      logger: cycleLogger,
      deadline: computeDeadline(
        Date.now(),
        context.getRemainingTimeInMillis(),
        current.config.safetyMarginMs,
      ),
      answers: current.claimCheckStore,
    });
  } catch (error) {
    logger.error('Operator request failed; the checkpoint and the lease were not touched', { error });
    throw error;
  } finally {
    await endOfWork();
  }
}
