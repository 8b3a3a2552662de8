/**
 * One program's cycle as the handler composes it, for a single program's invocation
 * (`{"program": …}`) and for each program of a worker's run (`{"worker": i}`): its options from
 * the deployment's settings and, in a worker, the program's own (`program-settings.ts`); in a
 * worker, also its own ports: the upstream of its secret (checked to be the deployment's), its
 * part of the function's memory (`core/fleet/memory-share.ts`), its checkpoint row, its view of the bus behind the claim check, its metrics (with its `Program`)
 * and its logger (with its `program`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbCheckpointStore } from '../adapters/aws/dynamodb-checkpoint-store.ts';
import type { ProgramSecretScope } from '../adapters/aws/program-secret-scope.ts';
import { daysLeft } from '../adapters/banking-http/client-certificate.ts';
import { systemClock } from '../adapters/system-clock.ts';
import { uniqueLeaseOwner } from '../core/checkpoint/index.ts';
import { ClaimCheckPublisher } from '../core/claim-check-publisher.ts';
import { programMemoryBudget } from '../core/fleet/memory-share.ts';
import type { ProgramRecord } from '../core/fleet/program-record.ts';
import type { ProgramSlot } from '../core/fleet/worker-run.ts';
import { type CycleSummary, type PollCycleOptions, runPollCycle } from '../core/poll-cycle.ts';
import type { ClaimCheckStore, EventPublisher, MetricsSink } from '../core/ports.ts';
import { type ProgramSettingValues, resolveProgramSettings } from '../settings/program-settings.ts';
import { toStartPosition } from '../settings/value-kinds.ts';
import type { PollerConfig } from './poller-config.ts';
import type { Upstream, Upstreams } from './upstreams.ts';

/** What one run of a program's cycle is: which program, whose lease, how long, when to stop. */
export interface CycleRun {
  readonly program: string;
  /** The invocation's request id: the lease owner is made unique from it. */
  readonly invocationId: string;
  readonly remainingMs: number;
  readonly stopSignal?: AbortSignal;
  /** What the cycle may hold of the events it reads (`MemoryBudget.heldBytes`). */
  readonly heldBytes: number;
}

/**
 * The options of a program's cycle: the deployment's settings (`config`), with the program's own
 * where it has them (`values`; for a single program's invocation, the deployment's alone).
 */
export function cycleOptions(
  config: PollerConfig,
  values: ProgramSettingValues,
  run: CycleRun,
): PollCycleOptions {
  return {
    program: run.program,
    owner: uniqueLeaseOwner(run.invocationId),
    remainingMs: run.remainingMs,
    ...(run.stopSignal === undefined ? {} : { stopSignal: run.stopSignal }),
    safetyMarginMs: config.safetyMarginMs,
    minPollWindowMs: config.minPollWindowMs,
    leaseWaitMs: config.leaseWaitMs,
    leaseCheckIntervalMs: config.leaseCheckIntervalMs,
    publish: {
      maxAttempts: config.publishMaxAttempts,
      concurrency: values.publishConcurrency,
      maxRequestsPerSecond: values.maxPutEventsPerSecond,
    },
    startPosition: {
      position: toStartPosition(values.startPosition),
      pageLimit: values.pollLimit,
      clockSkewAllowanceMs: values.startClockSkewAllowanceSeconds * 1000,
    },
    feedMode: values.feedMode,
    stream: { recovery: values.streamRecovery, lingerMs: values.streamLingerMs },
    gapRepair: { maxLookups: values.gapRepairMaxLookups, graceMs: values.gapRepairGraceSeconds * 1000 },
    maxSequenceJump: values.maxSequenceJump,
    heldBytes: run.heldBytes,
  };
}

/** What a worker's programs are built from: the container's shared parts. */
export interface ProgramWiring {
  readonly config: PollerConfig;
  readonly dynamodb: DynamoDBClient;
  readonly upstreams: Upstreams;
  readonly secretScope: ProgramSecretScope;
  /** The bus alone, for a program's events. */
  readonly bus: (program: string) => EventPublisher;
  /** The claim-check bucket, when configured. */
  readonly claimCheckStore: ClaimCheckStore | undefined;
  /** The function's memory, divided among the programs in flight. */
  readonly memoryLimitBytes: number;
  readonly invocationId: string;
}

/**
 * Runs one program of a worker: its settings and secret checked (a `ProgramSettingError` or
 * `ProgramSecretRefusedError` fails this program alone), then its cycle over its own ports.
 */
export function programRunner(
  wiring: ProgramWiring,
): (record: ProgramRecord, slot: ProgramSlot) => Promise<CycleSummary> {
  return async (record, slot) => {
    const { config } = wiring;
    const values = resolveProgramSettings(record.name, record.settings, config);
    const secretId = wiring.secretScope.check(record.name, record.secretId);
    const memory = programMemoryBudget(wiring.memoryLimitBytes, slot.programsInFlight);
    const upstream = wiring.upstreams.get(
      secretId,
      { ...values, maxPageBytes: memory.pageBytes },
      slot.metrics,
    );
    try {
      return await runPollCycle(
        {
          feed: upstream.feed,
          lookup: upstream.feed,
          stream: upstream.stream,
          publisher: claimChecked(wiring, wiring.bus(record.name), slot),
          checkpoints: new DynamoDbCheckpointStore({
            client: wiring.dynamodb,
            tableName: config.checkpointTable,
            program: record.name,
          }),
          clock: systemClock,
          metrics: slot.metrics,
          logger: slot.logger,
          cpuTurns: slot.cpuTurns,
        },
        cycleOptions(config, values, {
          program: record.name,
          invocationId: wiring.invocationId,
          remainingMs: slot.remainingMs,
          stopSignal: slot.stopSignal,
          heldBytes: memory.heldBytes,
        }),
      );
    } finally {
      reportCertificate(upstream, slot.metrics);
    }
  };
}

/** The bus behind the claim check when a bucket is configured, reporting to the program's own metrics. */
function claimChecked(wiring: ProgramWiring, bus: EventPublisher, slot: ProgramSlot): EventPublisher {
  const store = wiring.claimCheckStore;
  if (store === undefined) return bus;
  return new ClaimCheckPublisher(
    { inner: bus, store, metrics: slot.metrics, logger: slot.logger },
    { maxEntryBytes: wiring.config.maxEventEntryBytes },
  );
}

/** Every run, refused ones included: an alarm on it warns before the certificate expires. */
export function reportCertificate(upstream: Upstream | undefined, metrics: MetricsSink): void {
  const certificate = upstream?.connections.certificate;
  if (certificate !== undefined)
    metrics.add('ClientCertificateDaysLeft', 'Count', daysLeft(certificate, Date.now()));
}
