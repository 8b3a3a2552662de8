/**
 * Lambda entry point: the composition root. It parses the configuration, builds the adapters
 * once per container (clients, credential and token caches stay warm across invocations) and
 * runs, per invocation, one program's poll cycle (`{"program": …}`), a worker's programs
 * (`{"worker": i}`: `core/fleet/worker-run.ts`, each program wired by `program-wiring.ts`), or,
 * for an invocation carrying `operatorRequest`, the CLI's request (`operator-request.ts`,
 * `operator-dispatch.ts`). All behaviour lives in `functions/core/`.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { Context } from 'aws-lambda';
import { boundedClientConfig } from '../adapters/aws/bounded-client-config.ts';
import { DynamoDbCheckpointStore } from '../adapters/aws/dynamodb-checkpoint-store.ts';
import { DynamoDbProgramRegistry } from '../adapters/aws/dynamodb-program-registry.ts';
import { lookUpProgramSecret } from '../adapters/aws/program-secret-lookup.ts';
import { ProgramSecretScope } from '../adapters/aws/program-secret-scope.ts';
import { S3ClaimCheckStore } from '../adapters/aws/s3-claim-check-store.ts';
import { SecretsManagerCredentialsProvider } from '../adapters/aws/secrets-manager-credentials.ts';
import { withScrubbedErrors } from '../adapters/aws/service-error-redaction.ts';
import { MemoryProgramRegistry } from '../adapters/local/memory-program-registry.ts';
import { memoryLimitBytes } from '../adapters/memory-limit.ts';
import type { ProgramMetricsPlan } from '../adapters/observability/metric-plan.ts';
import { cycleLoggerFrom } from '../adapters/observability/powertools-cycle-logger.ts';
import {
  type MetricsScope,
  PowertoolsMetricsSink,
} from '../adapters/observability/powertools-metrics-sink.ts';
import { TurnLog } from '../adapters/observability/turn-log.ts';
import { processCpuMeter } from '../adapters/process-cpu-meter.ts';
import { systemClock } from '../adapters/system-clock.ts';
import { ClaimCheckPublisher } from '../core/claim-check-publisher.ts';
import { computeDeadline } from '../core/cycle-budget.ts';
import { programsThatFit } from '../core/fleet/memory-share.ts';
import type { ProgramRecord } from '../core/fleet/program-record.ts';
import type { ProgramRegistry } from '../core/fleet/program-registry.ts';
import { type ProgramObservation, runWorker } from '../core/fleet/worker-run.ts';
import type { WorkerSummary } from '../core/fleet/worker-summary.ts';
import { type MemoryBudget, memoryBudget } from '../core/memory-budget.ts';
import { type CycleSummary, runPollCycle } from '../core/poll-cycle.ts';
import type { EventPublisher } from '../core/ports.ts';
import { SETTINGS } from '../settings/settings.ts';
import { HANDLER_BUS_KINDS } from './bus-kinds.ts';
import {
  checkInvocationBounds,
  OPERATOR_REQUEST_KEY,
  parseScheduledInvocation,
  SCHEDULE_KEYS,
  type ScheduledInvocation,
} from './invocation-input.ts';
import type { OperatorAnswer } from './operator-answer.ts';
import { runOperatorRequest } from './operator-dispatch.ts';
import {
  isOperatorInvocation,
  OPERATOR_REQUEST_FIELD_NAMES,
  parseOperatorRequest,
} from './operator-request.ts';
import {
  loadPollerConfig,
  type PollerConfig,
  resolveInvocationTarget,
  resolveWorkerInvocation,
} from './poller-config.ts';
import { cycleOptions, programRunner, reportCertificate } from './program-wiring.ts';
import { type Upstream, Upstreams } from './upstreams.ts';

// Read here, before any invocation, as Powertools reads them: the settings table holds the defaults.
const SERVICE_NAME = process.env.POWERTOOLS_SERVICE_NAME ?? SETTINGS.serviceName.default;
const METRICS_NAMESPACE = process.env.POWERTOOLS_METRICS_NAMESPACE ?? SETTINGS.metricsNamespace.default;
const logger = new Logger({ serviceName: SERVICE_NAME });
const metrics = new Metrics({ serviceName: SERVICE_NAME, namespace: METRICS_NAMESPACE });
const metricsSink = new PowertoolsMetricsSink(metrics);
const cycleLogger = cycleLoggerFrom(logger);
/** A worker's own metrics, flushed with its `Worker` (each program's go through its own, `observeProgram`). */
const workerMetricsSink = new PowertoolsMetricsSink(metrics);

/** Upstreams a container keeps between runs, per lane of a worker: enough for a few workers' turns. */
const UPSTREAMS_KEPT_PER_LANE = 4;

interface Runtime {
  readonly config: PollerConfig;
  /** What a run may hold of the events it reads, and read of a page at once: from the function's memory. */
  readonly memory: MemoryBudget;
  /** The function's memory, which a worker divides among the programs it runs at once. */
  readonly memoryLimitBytes: number;
  readonly secretsManager: SecretsManagerClient;
  readonly dynamodb: DynamoDBClient;
  /** The bus alone, for a program's events (replays publish through it). */
  readonly bus: (program: string) => EventPublisher;
  /** The bus behind the claim check when a bucket is configured, for a program's events. */
  readonly publisher: (program: string) => EventPublisher;
  /** Per secret, so each keeps its credentials and token cached while the container is warm. */
  readonly upstreams: Upstreams;
  /** The claim-check bucket, when configured: events too large for the bus, operator answers too large to return. */
  readonly claimCheckStore: S3ClaimCheckStore | undefined;
  /** The programs a worker serves: the programs table, or without one the programs of the environment. */
  readonly registry: ProgramRegistry;
  /** The secrets a program record may name: the deployment's. */
  readonly secretScope: ProgramSecretScope;
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
    // Errors scrubbed of the function's credentials where the SDK throws them (AWS may quote them).
    const secretsManager = withScrubbedErrors(new SecretsManagerClient(boundedClientConfig));
    const dynamodb = withScrubbedErrors(new DynamoDBClient(boundedClientConfig));
    const memoryLimit = memoryLimitBytes(config.functionMemoryMb);
    runtime = {
      config,
      memory: memoryBudget(memoryLimit),
      memoryLimitBytes: memoryLimit,
      secretsManager,
      dynamodb,
      bus,
      publisher: (program) => {
        let publisher = publishers.get(program);
        if (publisher === undefined) {
          publisher = claimCheck(bus(program));
          publishers.set(program, publisher);
        }
        return publisher;
      },
      upstreams: new Upstreams({
        secretsManager,
        credentialsTtlSeconds: config.credentialsTtlSeconds,
        entryRules: HANDLER_BUS_KINDS[config.eventBusKind].entryRules,
      }),
      claimCheckStore,
      registry: programRegistry(config, dynamodb),
      secretScope: new ProgramSecretScope({
        prefix: config.secretsPrefix,
        stackSecrets: config.programSecrets.values(),
        region: process.env.AWS_REGION,
      }),
    };
  }
  return runtime;
}

/**
 * The programs table when the deployment has one; else the programs of the environment
 * (`SECRET_ID`, `PROGRAM_SECRETS`) as records of the stack, all active.
 */
function programRegistry(config: PollerConfig, dynamodb: DynamoDBClient): ProgramRegistry {
  if (config.programsTable !== undefined) {
    return new DynamoDbProgramRegistry({ client: dynamodb, tableName: config.programsTable });
  }
  return new MemoryProgramRegistry(
    [...config.programSecrets].map(
      ([name, secretId]): ProgramRecord => ({
        name,
        secretId,
        state: 'active',
        owner: 'stack',
        settings: {},
        revision: 1,
      }),
    ),
  );
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

/** The handler's answer: the cycle summary, which includes `published` and `checkpoint`. */
export type PollerResult = CycleSummary;

export async function handler(
  event: unknown,
  context: Context,
): Promise<PollerResult | WorkerSummary | OperatorAnswer> {
  logger.addContext(context);
  try {
    // First of all: an event out of bounds is refused before anything is built, read or called.
    checkInvocationBounds(event, INVOCATION_KEYS);
  } catch (error) {
    logger.error('Invocation refused; nothing was read, published or written', { error });
    throw error;
  }
  if (isOperatorInvocation(event)) return operatorRequest(event, context);
  let input: ScheduledInvocation;
  try {
    input = parseScheduledInvocation(event);
  } catch (error) {
    logger.error('Poll cycle failed; the checkpoint stays at the last published event', { error });
    throw error;
  }
  return input.worker === undefined ? programRun(input, context) : workerRun(input.worker, context);
}

/** One program's run (`{"program": …}`, `{}`): its cycle, as before there were workers. */
async function programRun(input: ScheduledInvocation, context: Context): Promise<PollerResult> {
  let upstream: Upstream | undefined;
  // Whose metrics the run's are: known once the invocation names its program.
  let metricsScope: MetricsScope = { plan: SETTINGS.programMetrics.default };
  try {
    const current = getRuntime();
    const target = resolveInvocationTarget(input, current.config);
    logger.appendKeys({ program: target.program });
    metricsScope = { program: target.program, plan: current.config.programMetrics };
    const { config } = current;
    upstream = current.upstreams.get(
      target.secretId,
      { ...config, maxPageBytes: current.memory.pageBytes },
      metricsSink,
    );
    return await runPollCycle(
      {
        feed: upstream.feed,
        lookup: upstream.feed,
        stream: upstream.stream,
        publisher: current.publisher(target.program),
        checkpoints: new DynamoDbCheckpointStore({
          client: current.dynamodb,
          tableName: config.checkpointTable,
          program: target.program,
        }),
        clock: systemClock,
        metrics: metricsSink,
        logger: cycleLogger,
      },
      cycleOptions(config, config, {
        program: target.program,
        invocationId: context.awsRequestId,
        remainingMs: context.getRemainingTimeInMillis(),
        heldBytes: current.memory.heldBytes,
      }),
    );
  } catch (error) {
    logger.error('Poll cycle failed; the checkpoint stays at the last published event', { error });
    throw error;
  } finally {
    reportCertificate(upstream, metricsSink);
    // Flushed on failure too: the errors and lag alarms need the metrics of failed runs most.
    metricsSink.flush(metricsScope);
    logger.removeKeys(['program']);
    await endOfWork();
  }
}

/**
 * A worker's run (`{"worker": i}`): the programs assigned to it, each over its own ports
 * (`program-wiring.ts`). A program's failure is its own (logged, counted, in the answer); the run
 * fails only when no program can be assigned (configuration, registry).
 */
async function workerRun(worker: number, context: Context): Promise<WorkerSummary> {
  const remainingMs = context.getRemainingTimeInMillis();
  logger.appendKeys({ worker });
  let current: Runtime | undefined;
  try {
    current = getRuntime();
    const { config } = current;
    resolveWorkerInvocation(worker, config);
    return await runWorker(
      {
        registry: current.registry,
        clock: systemClock,
        logger: cycleLogger,
        metrics: workerMetricsSink,
        observe: (program) => observeProgram(program, worker, config.programMetrics),
        // The programs' turns on the one thread: one turn a pass of the event loop, after its I/O.
        defer: (serve) => setImmediate(serve),
        // ...each program within its share of the CPU: a draining one never gets the process paused.
        cpuMeter: processCpuMeter(config.functionMemoryMb),
        runProgram: programRunner({
          config,
          dynamodb: current.dynamodb,
          upstreams: current.upstreams,
          secretScope: current.secretScope,
          bus: current.bus,
          claimCheckStore: current.claimCheckStore,
          memoryLimitBytes: current.memoryLimitBytes,
          invocationId: context.awsRequestId,
        }),
      },
      {
        worker,
        workerCount: config.workerCount,
        remainingMs,
        // No more at once than the memory holds, each with a useful part of it (`memory-share.ts`).
        maxConcurrentPrograms: Math.min(
          config.maxConcurrentPrograms,
          programsThatFit(current.memoryLimitBytes),
        ),
      },
    );
  } catch (error) {
    logger.error('Worker run failed: no program was polled', { error });
    throw error;
  } finally {
    workerMetricsSink.flush({
      worker,
      plan: current?.config.programMetrics ?? SETTINGS.programMetrics.default,
    });
    logger.removeKeys(['worker']);
    await endOfWork();
    if (current !== undefined) {
      await current.upstreams.trim(UPSTREAMS_KEPT_PER_LANE * current.config.maxConcurrentPrograms);
    }
  }
}

/**
 * A program's metrics, sent at the end of its turn with its `Program` as the plan says
 * (`metric-plan.ts`: every metric, or only what the per-condition alarms read), and its logger,
 * with its `program` and the worker's number; made for each turn, so that its log lines carry
 * this invocation's request id. Its values are its own until that flush, which is synchronous:
 * programs in flight share the one `Metrics` without mixing their dimensions.
 */
function observeProgram(program: string, worker: number, plan: ProgramMetricsPlan): ProgramObservation {
  const sink = new PowertoolsMetricsSink(metrics);
  const child = logger.createChild({ persistentKeys: { program, worker } });
  // A healthy, quiet turn writes no line of its own: the worker's summary counts it (`turn-log.ts`).
  const level = child.getLevelName();
  const log = new TurnLog(cycleLoggerFrom(child), Date.now, level !== 'DEBUG' && level !== 'TRACE');
  return {
    metrics: sink,
    logger: log,
    flush: (report) => {
      sink.flush({ program, plan });
      log.endTurn(report);
    },
  };
}

/** The invocation's work is over: connections a request is still stuck on are not handed to the next one. */
async function endOfWork(): Promise<void> {
  const upstreams = runtime?.upstreams.all() ?? [];
  await Promise.all(upstreams.map((upstream) => upstream.connections.endOfWork()));
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
      // A program an operator added is known by its record alone; its secret must be the deployment's.
      programSecret: (program, signal) =>
        lookUpProgramSecret(
          program,
          {
            stackSecrets: current.config.programSecrets,
            registry: current.registry,
            scope: current.secretScope,
          },
          signal,
        ),
      upstream: (secretId) =>
        current.upstreams.get(
          secretId,
          { ...current.config, maxPageBytes: current.memory.pageBytes },
          metricsSink,
        ),
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
