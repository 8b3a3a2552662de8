/**
 * A stand-in of EventBridge's new Custom Event Bus (API `EventBridgeV2`, 2025-05-15) for the tests:
 * moto has none. A loopback server speaking Smithy RPC v2 CBOR with SigV4 checked on every request
 * (`rpc-v2-cbor-server.ts`, `sigv4-check.ts`), buses, subscribers and retained events
 * (`bus-state.ts`), publish-time de-duplication (`dedup-window.ts`), delivery to SQS queues on the
 * moto server the tests already run (`sqs-delivery.ts`), all on a test-controlled clock. Every
 * request is first checked against botocore's model of its input (`request-validation.ts`).
 * `test/integration/custom-bus/standin-conformance.test.ts` drives it through boto3's real
 * `eventbridgev2` client and checks every request and answer against botocore's service model.
 *
 * Use: `startCustomBus({ motoEndpoint })`, point a client at `endpoint`, create queues on moto, then
 * `await bus.settled()` before reading them; `advanceClock(ms)` for the de-duplication window,
 * retries and retention; `faults` to throttle, slow down or reject PutEvents entries or fail deliveries;
 * `admin` to set up buses and subscribers in-process.
 *
 * Known gaps (each refused loudly where a caller could ask for it, never silently wrong):
 * - Operations: only Create/Describe/Delete/ListEventBuses, Create/Update/Describe/Delete/
 *   ListSubscribers and PutEvents. No PutRawEvents, UpdateEventBus, event sources, resource
 *   policies, tags (accepted on create, not stored), RevokeResource. No pagination (lists answer in one page).
 * - Targets: SQS queues only; no MessageAttributes/MessageSystemAttributes; no BatchConfiguration;
 *   Transformer RAW or WITH_METADATA only (no JSONATA). Target parameter expressions: field paths from
 *   `$events` only (`{% $events.SystemMetadata.EventGroupId %}`). Note: the documented system
 *   metadata names the group `EventGroupId` (no `aws:` prefix), so `` `aws:EventGroupId` `` resolves
 *   to nothing, and a delivery with it fails (`INPUT_TRANSFORMATION_FAILURE`), as documented.
 * - Filters: exact values, prefix, anything-but (values or prefix), exists, nesting; nothing else.
 * - One account: every accepted key acts as `accountId`, so cross-account sharing, and the
 *   per-account scope of groups and de-duplication beyond one account, are absent.
 * - A DEDUPLICATED entry answers with the EventId and SequenceNumber of the entry it repeats (the
 *   guide does not say which it returns).
 * - The delivery role is not assumed or checked; KMS keys are stored, not used; no IAM.
 * - SigV4: the signature is recomputed and compared (as moto does); the request time is not
 *   checked against the clock, session tokens are not checked.
 * - Limits: 1-100 entries, the classic 256 KiB per request (none documented for the new bus),
 *   no throughput quotas (throttling only by `faults.throttlePutEvents`). Per-entry error codes
 *   (`InvalidArgument`, `MalformedDetail`) are the classic bus's; the new bus documents none.
 * - Asynchrony: a bus is CREATING for `describesUntilActive` DescribeEventBus calls, then ACTIVE;
 *   deletion is immediate. Retries back off 1 s, 2 s, 4 s ... (≤ 60 s) on the test clock, and
 *   `MaxEventAgeInSeconds` counts from when the subscriber took the event up. The dead-letter
 *   record's `targetRequestId` is null; its error codes for SQS failures are the stand-in's guess.
 * - A FIFO subscriber sends one message per call down each group; events without a group form one
 *   group of their own.
 */
import { BusState, type StoredEvent } from './bus-state.ts';
import { StandInFaults } from './faults.ts';
import { loadRequestModel, requestProblems } from './request-validation.ts';
import { type RecordedExchange, serviceError, startRpcV2CborServer } from './rpc-v2-cbor-server.ts';
import { SeededIds } from './seeded-ids.ts';
import type { StandInCredentials } from './sigv4-check.ts';
import { SqsDelivery } from './sqs-delivery.ts';

export type { StoredEvent } from './bus-state.ts';
export { DEDUPLICATION_WINDOW_MS } from './dedup-window.ts';
export type { DeliveryFailure, DeliveryView, EntryRejection, EntryView, StandInFaults } from './faults.ts';
export type { RecordedExchange } from './rpc-v2-cbor-server.ts';

export interface CustomBusOptions {
  /** moto's endpoint, where subscribers' SQS queues live (`inject('motoEndpoint')`). */
  readonly motoEndpoint: string;
  /** @default '123456789012' (moto's default account, so queue ARNs line up) */
  readonly accountId?: string;
  /** @default 'us-east-1' */
  readonly region?: string;
  /** Keys whose signatures are accepted. @default [{ accessKeyId: 'testing', secretAccessKey: 'testing' }] */
  readonly credentials?: readonly StandInCredentials[];
  /** The clock's start, epoch ms. @default Date.now() */
  readonly startTime?: number;
  /** Seed of resource and event ids. @default random */
  readonly seed?: number;
  /** DescribeEventBus calls answered CREATING after CreateEventBus. @default 1 */
  readonly describesUntilActive?: number;
  /**
   * How long an idle connection is kept open. The default makes clients open a connection per
   * request; a benchmark gives the AWS endpoints' minutes. @default 1 000 ms
   */
  readonly keepAliveTimeoutMs?: number;
}

export interface CustomBus {
  /** `http://127.0.0.1:<port>`: give it to a client as its endpoint (`AWS_ENDPOINT_URL_EVENTBRIDGEV2`). */
  readonly endpoint: string;
  readonly accountId: string;
  readonly region: string;
  readonly faults: StandInFaults;
  /** Every request and answer, in order, bytes included. */
  readonly exchanges: readonly RecordedExchange[];
  /** The stand-in's current time, epoch ms. */
  now(): number;
  /** Moves the clock on by `ms` and runs what falls due (retries, expiries); resolves once settled. */
  advanceClock(ms: number): Promise<void>;
  /** Resolves once every delivery that is due has been made (or has failed and is waiting to retry). */
  settled(): Promise<void>;
  /** Events a subscriber has yet to deliver (or dead-letter). */
  backlog(subscriberArn: string): number;
  /**
   * Set-up without a client: the operations called in-process (model-checked, not signed), for tests
   * whose subject is not the API itself. Timestamps in inputs are CBOR tags (`tag({ tag: 1, value: s })`).
   */
  readonly admin: CustomBusAdmin;
  close(): Promise<void>;
}

export interface CustomBusAdmin {
  /** A bus, ACTIVE at once; resolves to its ARN. */
  createEventBus(name: string, options?: { retentionDays?: number }): string;
  /** `CreateSubscriber` with this input; resolves to the subscriber's ARN. */
  createSubscriber(input: Record<string, unknown>): string;
  /** `UpdateSubscriber` with this input. */
  updateSubscriber(input: Record<string, unknown>): void;
  /** `PutEvents` with this input; its output (`FailedEntryCount`, `Entries`). */
  putEvents(input: Record<string, unknown>): { FailedEntryCount: number; Entries: Record<string, unknown>[] };
  /** The bus's retained events, in sequence order. */
  retainedEvents(busArn: string): readonly StoredEvent[];
}

/**
 * Starts a stand-in bus on loopback.
 *
 * @example
 * const bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint') });
 * process.env.AWS_ENDPOINT_URL_EVENTBRIDGEV2 = bus.endpoint;
 * // ... publish, then: await bus.settled(); drain the subscriber's queue ...
 * await bus.close();
 */
export async function startCustomBus(options: CustomBusOptions): Promise<CustomBus> {
  const accountId = options.accountId ?? '123456789012';
  const region = options.region ?? 'us-east-1';
  let now = options.startTime ?? Date.now();
  const clock = () => now;
  const faults = new StandInFaults();
  const requestModel = loadRequestModel();
  const delivery = new SqsDelivery({ sqsEndpoint: options.motoEndpoint, region, now: clock, faults });
  const state = new BusState({
    accountId,
    region,
    now: clock,
    ids: new SeededIds(options.seed ?? Math.floor(Math.random() * 2 ** 32)),
    faults,
    listener: delivery,
    ...(options.describesUntilActive === undefined
      ? {}
      : { describesUntilActive: options.describesUntilActive }),
  });
  delivery.attach(state);
  const operations = state.operations();
  const checkRequest = (operation: string, input: Record<string, unknown>): void => {
    const problems = requestProblems(requestModel, operation, input);
    if (problems.length > 0) {
      throw serviceError(
        'InvalidInputException',
        `${problems.length} validation error(s) detected: ${problems.slice(0, 5).join('; ')}`,
      );
    }
  };
  const invoke = (operation: string, input: Record<string, unknown>): Record<string, unknown> => {
    checkRequest(operation, input);
    return (operations[operation] as (input: Record<string, unknown>) => Record<string, unknown>)(input);
  };
  const server = await startRpcV2CborServer({
    service: 'events',
    region,
    credentials: options.credentials ?? [{ accessKeyId: 'testing', secretAccessKey: 'testing' }],
    operations,
    beforeOperation: checkRequest,
    answerDelayMs: (operation) => (operation === 'PutEvents' ? faults.putEventsDelayMs : 0),
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeoutMs: options.keepAliveTimeoutMs }),
  });
  return {
    endpoint: server.endpoint,
    accountId,
    region,
    faults,
    exchanges: server.exchanges,
    now: clock,
    async advanceClock(ms) {
      now += ms;
      delivery.kick();
      await delivery.settled();
    },
    settled: () => delivery.settled(),
    backlog: (subscriberArn) => delivery.backlog(subscriberArn),
    admin: {
      createEventBus(name, busOptions = {}) {
        const { EventBusArn } = invoke('CreateEventBus', {
          Name: name,
          ...(busOptions.retentionDays === undefined
            ? {}
            : { StorageConfiguration: { RetentionPeriodInDays: busOptions.retentionDays } }),
        });
        const bus = state.buses.get(EventBusArn as string)!;
        bus.state = 'ACTIVE';
        return bus.arn;
      },
      createSubscriber: (input) => invoke('CreateSubscriber', input).SubscriberArn as string,
      updateSubscriber(input) {
        invoke('UpdateSubscriber', input);
      },
      putEvents: (input) => invoke('PutEvents', input) as ReturnType<CustomBusAdmin['putEvents']>,
      retainedEvents(busArn) {
        const bus = state.buses.get(busArn);
        if (bus === undefined) throw new Error(`No bus ${busArn} on the stand-in`);
        return [...bus.events];
      },
    },
    async close() {
      await server.close();
      await delivery.close();
    },
  };
}
