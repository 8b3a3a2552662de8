/**
 * One fault scenario run, end to end through the shipped artifact: the banking simulator behind a
 * `BankingFaultProxy`, moto behind an `AwsFaultProxy` (EventBridge and DynamoDB), a recording bus
 * (every event of the source lands in one queue), a claim-check bucket, and one execution
 * environment of the deployed function. A run invokes the function until it has caught up, as the
 * schedule would, and then checks the no-loss invariant and scans everything the function wrote
 * and every URL the bank saw for credentials.
 *
 * With `bus: 'custom'` the function publishes to the Custom Event Bus instead (`EVENT_BUS_KIND`
 * custom): the stand-in (`custom-bus/`, one per run, so its faults and clock are the run's own)
 * behind the same `AwsFaultProxy`, and a FIFO subscriber onto a FIFO queue as the sink
 * (`custom-bus-sink.ts`). Its clock stands still during the run, so every re-send falls within the
 * de-duplication window. The report then also holds the order check of each group at the queue
 * (`group-order.ts`) and the entries the bus answered `DEDUPLICATED`.
 *
 * @example
 * const run = await FaultRun.start(environment, { seed: 7, events: 40 });
 * run.banking.resetMidBody(2);
 * await run.untilCaughtUp();
 * const report = await run.verify(); // lost: [], violations: []
 */
import { createHash } from 'node:crypto';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, inject } from 'vitest';
import type { PollerResult } from '../../functions/poller/handler.ts';
import {
  type RawEvent,
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from '../../functions/simulator/banking-simulator.ts';
import { AwsFaultProxy } from './aws-fault-proxy.ts';
import { type MotoEnvironment, useMotoEnvironment } from './aws-test-env.ts';
import { BankingFaultProxy, corrupted } from './banking-fault-proxy.ts';
import { type CustomBusSink, startCustomBusSink } from './custom-bus-sink.ts';
import {
  type BankEvent,
  checkDeliveryInvariant,
  deliveryKey,
  type InvariantReport,
} from './delivery-invariant.ts';
import { checkGroupOrder, type GroupOrderReport, type OrderBrokenRecord } from './group-order.ts';
import type { Invocation, LambdaContainer } from './lambda-runtime/lambda-container.ts';
import type { PollerArtifact } from './poller-artifact.ts';
import { emfDocuments, pollerLambda } from './poller-lambda.ts';

/** Which EventBridge bus a run publishes to (`EVENT_BUS_KIND`). */
export type BusKind = 'classic' | 'custom';

/** What every run of a test file shares: moto, one checkpoint table, the artifact. */
export interface FaultEnvironment {
  readonly aws: MotoEnvironment;
  readonly motoEndpoint: string;
  readonly artifact: PollerArtifact;
  readonly checkpointTable: string;
  readonly s3: S3Client;
}

/** Registers the hooks of a file of fault runs and returns its environment (ready in `beforeAll`). */
export function useFaultEnvironment(): FaultEnvironment {
  let environment: FaultEnvironment | undefined;
  beforeAll(async () => {
    const aws = useMotoEnvironment(inject('motoEndpoint'));
    environment = {
      aws,
      motoEndpoint: inject('motoEndpoint'),
      artifact: inject('pollerArtifact'),
      checkpointTable: await aws.createCheckpointTable(),
      s3: new S3Client({}),
    };
  });
  afterAll(() => {
    environment?.s3.destroy();
    environment?.aws.restore();
  });
  return new Proxy({} as FaultEnvironment, {
    get: (_target, key) => environment?.[key as keyof FaultEnvironment],
  });
}

export interface FaultRunOptions {
  /** Seeds the simulator's data; distinct per run. */
  readonly seed: number;
  /** Events in the feed before the first invocation. */
  readonly events: number;
  /**
   * Each invocation's budget (the harness kills at it). The handler keeps back a quarter of it;
   * on 2 shared cores with several function processes at once, less than a few seconds would let
   * CPU starvation, not the poller, decide whether it answers in time. @default 6_000
   */
  readonly timeoutMs?: number;
  /** Function variables on top of the run's own. */
  readonly environment?: Readonly<Record<string, string>>;
  readonly simulator?: SimulatorOptions;
  /** The secret's client_secret; a wrong one tests refused credentials. @default the simulator's */
  readonly clientSecret?: string;
  /** The bus the function publishes to. @default 'classic' */
  readonly bus?: BusKind;
}

/** The outcome of one invocation, as the invariant report lists them. */
export type OutcomeKind = Invocation['outcome']['kind'];

export class FaultRun {
  readonly simulator: RunningSimulator;
  readonly banking: BankingFaultProxy;
  readonly aws: AwsFaultProxy;
  readonly lambda: LambdaContainer;
  readonly program: string;
  readonly bucket: string;
  readonly bus: BusKind;
  /** The custom bus's stand-in and sink (`bus: 'custom'`). */
  readonly customBus: CustomBusSink | undefined;
  readonly invocations: Invocation[] = [];
  readonly #environment: FaultEnvironment;
  readonly #queueUrl: string;
  readonly #spawn: () => LambdaContainer;
  readonly #containers: LambdaContainer[] = [];

  private constructor(fields: {
    environment: FaultEnvironment;
    simulator: RunningSimulator;
    banking: BankingFaultProxy;
    aws: AwsFaultProxy;
    lambda: LambdaContainer;
    spawn: () => LambdaContainer;
    program: string;
    bucket: string;
    queueUrl: string;
    customBus: CustomBusSink | undefined;
  }) {
    this.#environment = fields.environment;
    this.simulator = fields.simulator;
    this.banking = fields.banking;
    this.aws = fields.aws;
    this.lambda = fields.lambda;
    this.program = fields.program;
    this.bucket = fields.bucket;
    this.#queueUrl = fields.queueUrl;
    this.customBus = fields.customBus;
    this.bus = fields.customBus === undefined ? 'classic' : 'custom';
    this.#spawn = fields.spawn;
  }

  /** Another execution environment of the same function (Lambda runs overlapping invocations in several). */
  spawnContainer(): LambdaContainer {
    const container = this.#spawn();
    this.#containers.push(container);
    return container;
  }

  static async start(environment: FaultEnvironment, options: FaultRunOptions): Promise<FaultRun> {
    const { aws } = environment;
    const simulator = await startSimulator({
      maxPollHoldMs: 300,
      unknownTypeRatio: 0,
      ...options.simulator,
      seed: options.seed,
    });
    simulator.generate(options.events);
    const banking = await BankingFaultProxy.start(simulator.url);
    const customBus =
      options.bus === 'custom'
        ? await startCustomBusSink({
            motoEndpoint: environment.motoEndpoint,
            sqs: aws.sqs,
            name: aws.uniqueName('ordered'),
            seed: options.seed,
          })
        : undefined;
    const proxy = await AwsFaultProxy.start(environment.motoEndpoint, {
      ...(customBus === undefined
        ? {}
        : { eventBridgeV2: { endpoint: customBus.bus.endpoint, faults: customBus.bus.faults } }),
    });
    const program = simulator.programs[0]!;
    const secretId = await aws.createSecret(
      JSON.stringify({
        base_url: banking.url,
        client_id: program.clientId,
        client_secret: options.clientSecret ?? program.clientSecret,
      }),
    );
    const bus =
      customBus === undefined
        ? await aws.createRecordedBus()
        : { busName: customBus.busArn, queueUrl: customBus.queueUrl };
    const bucket = aws.uniqueName('claims');
    await environment.s3.send(new CreateBucketCommand({ Bucket: bucket }));
    const name = aws.uniqueName('program');
    const spawn = () =>
      pollerLambda({
        artifact: environment.artifact,
        motoEndpoint: environment.motoEndpoint,
        secretId,
        checkpointTable: environment.checkpointTable,
        eventBusName: bus.busName,
        timeoutMs: options.timeoutMs ?? 6_000,
        environment: {
          DEFAULT_PROGRAM: name,
          AWS_ENDPOINT_URL_EVENTBRIDGE: proxy.endpoint,
          AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
          CLAIM_CHECK_BUCKET: bucket,
          // The run waits for a crashed holder's lease itself; an invocation never waits for one.
          LEASE_WAIT_MS: '0',
          POLL_LIMIT: '25',
          ...(customBus === undefined
            ? {}
            : { EVENT_BUS_KIND: 'custom', AWS_ENDPOINT_URL_EVENTBRIDGEV2: proxy.endpoint }),
          ...options.environment,
        },
      });
    const lambda = spawn();
    return new FaultRun({
      environment,
      simulator,
      banking,
      aws: proxy,
      lambda,
      spawn,
      program: name,
      bucket,
      queueUrl: bus.queueUrl,
      customBus,
    });
  }

  /** Invokes the function once; an invocation that did not answer normally is marked as a fault. */
  async invoke(container: LambdaContainer = this.lambda): Promise<Invocation> {
    const invocation = await container.invoke({});
    this.invocations.push(invocation);
    if (invocation.outcome.kind !== 'response') {
      // Whatever the dead or failed invocation had on the wire settles before the mark.
      await this.aws.idle();
      this.aws.mark(`invocation ended: ${invocation.outcome.kind}`);
    }
    return invocation;
  }

  /** The newest sequence number the bank holds. */
  get lastSequenceNumber(): number {
    return this.simulator.events().at(-1)?.sequence_number ?? 0;
  }

  /** The checkpoint item as stored. */
  async item(): Promise<{ checkpoint: number | null; leaseOwner?: string; leaseExpiresAt?: number }> {
    const { GetItemCommand } = await import('@aws-sdk/client-dynamodb');
    const output = await this.#environment.aws.dynamodb.send(
      new GetItemCommand({
        TableName: this.#environment.checkpointTable,
        Key: { pk: { S: `program#${this.program}` } },
        ConsistentRead: true,
      }),
    );
    const item = output.Item;
    return {
      checkpoint: item?.checkpoint?.N === undefined ? null : Number(item.checkpoint.N),
      leaseOwner: item?.lease_owner?.S,
      leaseExpiresAt: item?.lease_expires_at?.N === undefined ? undefined : Number(item.lease_expires_at.N),
    };
  }

  /**
   * Waits until no live lease is left on the row: a crashed or killed invocation's lease frees
   * itself at its expiry (its deadline plus the skew allowance). Polls DynamoDB, the observable
   * condition, rather than sleeping a guessed time.
   */
  async leaseFree(): Promise<void> {
    for (;;) {
      const { leaseOwner, leaseExpiresAt } = await this.item();
      if (leaseOwner === undefined || (leaseExpiresAt ?? 0) < Date.now()) return;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(250, Math.max(20, leaseExpiresAt! - Date.now()))),
      );
    }
  }

  /**
   * Invokes until the checkpoint reaches the newest event, as the schedule would, waiting for a
   * dead invocation's lease to expire before the next one. Throws after `maxInvocations`.
   */
  async untilCaughtUp(options: { maxInvocations?: number } = {}): Promise<void> {
    const max = options.maxInvocations ?? 6;
    for (let attempt = 1; attempt <= max; attempt += 1) {
      await this.leaseFree();
      await this.invoke();
      if (((await this.item()).checkpoint ?? 0) >= this.lastSequenceNumber) return;
    }
    throw new Error(
      `Not caught up after ${max} invocations: checkpoint ${(await this.item()).checkpoint}, newest ${this.lastSequenceNumber}; outcomes ${JSON.stringify(this.invocations.map(outcomeSummary))}`,
    );
  }

  /** The summary of a response, or `undefined`. */
  static summary(invocation: Invocation): PollerResult | undefined {
    return invocation.outcome.kind === 'response' ? (invocation.outcome.result as PollerResult) : undefined;
  }

  /** The bank's events, each broken one expected as its `invalid_event`. */
  bankEvents(): BankEvent[] {
    return this.simulator.events().map((event: RawEvent) => {
      const corruption = this.banking.corruptions.get(event.sequence_number);
      if (corruption === undefined) return { id: event.id, sequenceNumber: event.sequence_number };
      const text = corrupted(JSON.parse(JSON.stringify(event)) as Record<string, unknown>, corruption);
      return {
        id: event.id,
        sequenceNumber: event.sequence_number,
        quarantineFingerprint: createHash('sha256').update(text).digest('hex'),
      };
    });
  }

  /**
   * Checks the invariant over everything delivered so far, and that no credential reached the
   * function's output or a URL the bank saw. Call once, after the last invocation. `passedOver`
   * are the events the start position skips by design (never expected).
   */
  async verify(options: { passedOver?: readonly BankEvent[] } = {}): Promise<RunReport> {
    await this.aws.idle();
    const arrivals =
      this.customBus === undefined
        ? (await this.#environment.aws.drainQueueBodies(this.#queueUrl)).map((body) => ({
            body,
            group: undefined,
          }))
        : await this.customBus.drain();
    const delivered = arrivals.map(({ body }) => {
      const message = JSON.parse(body) as { 'detail-type': string; detail: Record<string, unknown> };
      return { detailType: message['detail-type'], detail: message.detail };
    });
    const { checkpoint } = await this.item();
    const feed = this.bankEvents();
    const report = checkDeliveryInvariant({
      feed,
      passedOver: options.passedOver,
      delivered,
      timeline: this.aws.timeline,
      finalCheckpoint: checkpoint,
    });
    const custom =
      this.customBus === undefined
        ? {}
        : {
            order: this.#groupOrder(feed, delivered, arrivals),
            deduplicated: this.aws.putEvents.deduplicatedEntries,
          };
    return {
      ...report,
      ...custom,
      delivered,
      finalCheckpoint: checkpoint,
      caughtUp: (checkpoint ?? 0) >= this.lastSequenceNumber,
      leaks: this.leaks(),
      outcomes: this.invocations.map((invocation) => invocation.outcome.kind),
    };
  }

  /** The order check of a custom-bus run: each group at the FIFO queue against the wire and OrderBroken. */
  #groupOrder(
    feed: readonly BankEvent[],
    delivered: readonly { detailType: string; detail: Record<string, unknown> }[],
    arrivals: readonly { group: string | undefined }[],
  ): GroupOrderReport {
    const bankSequence = new Map(
      feed.map((event) => [
        event.quarantineFingerprint === undefined
          ? `e:${event.id}@${event.sequenceNumber}`
          : `q:${event.quarantineFingerprint}`,
        event.sequenceNumber,
      ]),
    );
    // A quarantined event is ordered at its `position`: the number the poller gave it (an event
    // without a usable number of its own is placed just after the cursor, `invalid-event.ts`).
    const sequenceOf = (detailType: string, detail: Record<string, unknown>) =>
      (detailType === 'invalid_event' && typeof detail.position === 'number' ? detail.position : undefined) ??
      bankSequence.get(deliveryKey(detailType, detail)) ??
      Number(detail.sequence_number);
    const output = this.#allContainers()
      .map((container) => container.output)
      .join('\n');
    return checkGroupOrder({
      arrivals: delivered.map(({ detailType, detail }, index) => ({
        group: arrivals[index]?.group,
        sequence: sequenceOf(detailType, detail),
      })),
      requests: this.aws.customBusRequests
        .filter((request) => !request.refused)
        .map((request) => ({
          answerDelivered: request.answerDelivered,
          entries: request.entries.map((entry) => ({
            group: entry.eventGroupId,
            sequence: sequenceOf(entry.detailType, parseDetail(entry.detail)),
            accepted: entry.outcome === 'PUBLISHED' || entry.outcome === 'DEDUPLICATED',
          })),
        })),
      orderBrokenLogs: orderBrokenLines(output),
      orderBrokenMetric: emfDocuments(output).reduce(
        (total, document) => total + (typeof document.OrderBroken === 'number' ? document.OrderBroken : 0),
        0,
      ),
      everyAnswerRead: this.invocations.every(
        (invocation) => invocation.outcome.kind === 'response' || invocation.outcome.kind === 'error',
      ),
    });
  }

  #allContainers(): LambdaContainer[] {
    return [this.lambda, ...this.#containers];
  }

  /** Client secrets, tokens and bearer values found in the function's output or in a URL the bank saw. */
  leaks(): string[] {
    const secrets = [
      ...this.simulator.programs.map((program) => program.clientSecret),
      ...this.simulator.issuedTokens(),
    ];
    const output = this.#allContainers()
      .map((container) => container.output)
      .join('\n');
    const urls = this.simulator.requests.map(
      (request) => `${request.path}?${new URLSearchParams(request.query).toString()}`,
    );
    const found = secrets.filter(
      (secret) => output.includes(secret) || urls.some((url) => url.includes(secret)),
    );
    if (/Bearer\s+\S/i.test(output)) found.push('a Bearer authorization value in the output');
    return found.map((secret) => (secret.length > 8 ? `${secret.slice(0, 4)}…` : secret));
  }

  async close(): Promise<void> {
    for (const container of this.#containers) await container.close();
    await this.lambda.close();
    await this.banking.close();
    await this.aws.close();
    await this.customBus?.close();
    await this.simulator.close();
  }
}

export interface RunReport extends InvariantReport {
  readonly delivered: readonly { detailType: string; detail: Record<string, unknown> }[];
  readonly finalCheckpoint: number | null;
  readonly caughtUp: boolean;
  readonly leaks: readonly string[];
  readonly outcomes: readonly OutcomeKind[];
  /** Custom bus: each group's order at the FIFO queue. */
  readonly order?: GroupOrderReport;
  /** Custom bus: entries the bus answered `DEDUPLICATED` (re-sends it already had, delivered once). */
  readonly deduplicated?: number;
}

/** The events each `OrderBroken` log line of the function names, by sequence number. */
function orderBrokenLines(output: string): OrderBrokenRecord[] {
  const records: OrderBrokenRecord[] = [];
  for (const line of output.split('\n')) {
    if (!line.includes('"later"')) continue;
    let parsed: { earlier?: { sequence_number?: unknown }; later?: { sequence_number?: unknown } };
    try {
      parsed = JSON.parse(line) as typeof parsed;
    } catch {
      continue;
    }
    const earlier = parsed.earlier?.sequence_number;
    const later = parsed.later?.sequence_number;
    if (typeof earlier === 'number' && typeof later === 'number') records.push({ earlier, later });
  }
  return records;
}

function parseDetail(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function outcomeSummary(invocation: Invocation): string {
  const { outcome } = invocation;
  return outcome.kind === 'error' ? `error ${outcome.errorType}: ${outcome.errorMessage}` : outcome.kind;
}
