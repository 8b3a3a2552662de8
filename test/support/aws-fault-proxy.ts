/**
 * An HTTP proxy in front of moto that injects the faults AWS sends in bad moments, so the real SDK
 * clients see them: EventBridge `PutEvents` entries rejected within a successful answer
 * (`FailedEntryCount` > 0) and whole requests refused (`ThrottlingException`, 5xx); DynamoDB
 * requests refused (`ProvisionedThroughputExceededException`, …). Everything else passes through
 * untouched. Point a function at it with `AWS_ENDPOINT_URL_EVENTBRIDGE` and
 * `AWS_ENDPOINT_URL_DYNAMODB`.
 *
 * Given the custom-bus stand-in (`eventBridgeV2`), it also fronts the Custom Event Bus
 * (`AWS_ENDPOINT_URL_EVENTBRIDGEV2`): its RPC v2 CBOR PutEvents is decoded for the timeline and the
 * same faults apply. The request is SigV4-signed over its body and host and the stand-in checks
 * the signature, so it is forwarded byte for byte with its own `host` header: a rejected entry is
 * rejected by the stand-in itself (its `faults.rejectEntries`, armed for exactly the chosen
 * entries of that request), a refused request is answered here in the protocol's error shape.
 *
 * Rejected entries are not forwarded, so moto (and the queues behind its rules) receives exactly
 * the entries the client was told were accepted. The proxy also keeps a **timeline** of what
 * matters to the no-loss invariant, in the order it happened: entries the bus accepted (when the
 * answer went back, flagged when its client had already given up on it), checkpoint writes asked for (when the request arrived) and applied, and
 * marks the test sets (a crash). `intercept` lets a test act at an exact point (kill the function
 * while its commit is held, say).
 *
 * @example
 * const proxy = await AwsFaultProxy.start(motoEndpoint);
 * proxy.rejectEntries(2, { every: 2 }); // the next two PutEvents: every second entry fails
 * env.AWS_ENDPOINT_URL_EVENTBRIDGE = proxy.endpoint;
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cbor } from '@smithy/core/cbor';
import type { StandInFaults } from './custom-bus/index.ts';
import { type ForwardedAnswer, forwardRequest, readBody } from './proxy-http.ts';

interface EntryFault {
  remaining: number;
  readonly every: number;
  readonly errorCode: string;
  readonly errorMessage: string;
}

interface RequestFault {
  remaining: number;
  readonly status: number;
  readonly errorType: string;
  readonly message: string;
  /** `AWSEvents.PutEvents`, `DynamoDB_20120810.UpdateItem`, … */
  readonly target: string;
}

/** One PutEvents entry as the client sent it, byte for byte. */
export interface SentEntry {
  readonly Source?: string;
  readonly DetailType?: string;
  readonly Detail?: string;
}

export interface PutEventsStats {
  /** PutEvents requests received. */
  readonly requests: number;
  /** Entries answered as failed by the proxy. */
  readonly rejectedEntries: number;
  /** Requests refused as a whole by the proxy. */
  readonly refusedRequests: number;
  /** Custom bus: entries the bus answered `DEDUPLICATED` (it had them already, and delivers them once). */
  readonly deduplicatedEntries: number;
}

/** One entry of a custom-bus PutEvents, decoded, with what the bus answered for it. */
export interface CustomBusEntry {
  readonly detailType: string;
  readonly detail: string;
  readonly eventGroupId: string | undefined;
  readonly deduplicationId: string | undefined;
  /** `PUBLISHED`, `DEDUPLICATED`, the entry's `ErrorCode`, or `undefined` when no answer came. */
  readonly outcome: string | undefined;
}

/** One custom-bus PutEvents request, in arrival order. */
export interface CustomBusRequest {
  readonly entries: readonly CustomBusEntry[];
  /** The whole request was refused (by the proxy or the bus), or never answered. */
  readonly refused: boolean;
  /** The answer was written whole before the client gave up on it (killed, timed out, aborted). */
  readonly answerDelivered: boolean;
}

/** The custom-bus stand-in this proxy fronts. */
export interface EventBridgeV2Upstream {
  readonly endpoint: string;
  readonly faults: StandInFaults;
}

/** A request as the proxy sees it, before it is forwarded. */
export interface AwsCall {
  /** `events` (either bus), `dynamodb` or `other`. */
  readonly service: 'events' | 'dynamodb' | 'other';
  /** `PutEvents`, `UpdateItem`, `GetItem`, … (empty for `other`). */
  readonly operation: string;
  /** The JSON body (AWS JSON protocols), the decoded CBOR one (the custom bus), or `undefined`. */
  readonly body: unknown;
  /** For an `UpdateItem` that writes the checkpoint: the number it writes. */
  readonly checkpoint: number | undefined;
}

/** What `intercept` decides: forward the request, or drop it (the client never gets an answer). */
export type InterceptDecision = 'forward' | 'drop';

export type TimelineEntry =
  | {
      readonly at: number;
      readonly kind: 'accepted';
      readonly detailType: string;
      readonly detail: string;
      /**
       * The bus accepted it after the client had given up on the request (its answer timeout, a
       * kill): the client never learned, so it rightly sends it again. The `client-gave-up` mark
       * comes before this acceptance, so only this flag tells the invariant it was in flight then.
       */
      readonly unanswered?: true;
    }
  | { readonly at: number; readonly kind: 'commit-requested'; readonly checkpoint: number }
  | { readonly at: number; readonly kind: 'commit-applied'; readonly checkpoint: number }
  /** A checkpoint write DynamoDB refused (its condition failed, or it was throttled). */
  | { readonly at: number; readonly kind: 'commit-refused'; readonly checkpoint: number }
  /** A PutEvents request arrived (before any fault is applied to it). */
  | { readonly at: number; readonly kind: 'put-events-requested' }
  | { readonly at: number; readonly kind: 'mark'; readonly label: string };

const DYNAMODB_PREFIX = 'DynamoDB_20120810.';
const EVENTS_PREFIX = 'AWSEvents.';
/** How the proxy names a custom-bus operation internally (the protocol has no `x-amz-target`). */
const EVENTS_V2_PREFIX = 'AWSEventsV2.';
/** The custom bus's RPC v2 CBOR path: `POST /service/AWSEventsV2/operation/<Operation>`. */
const EVENTS_V2_PATH = /^\/service\/AWSEventsV2\/operation\/([A-Za-z]+)$/;

export class AwsFaultProxy {
  readonly endpoint: string;
  readonly #server: Server;
  readonly #target: URL;
  readonly #v2: { readonly target: URL; readonly faults: StandInFaults } | undefined;
  readonly #customRequests: CustomBusRequest[] = [];
  readonly #entryFaults: EntryFault[] = [];
  readonly #requestFaults: RequestFault[] = [];
  #stats = { requests: 0, rejectedEntries: 0, refusedRequests: 0, deduplicatedEntries: 0 };
  readonly #sent: SentEntry[] = [];
  readonly #timeline: TimelineEntry[] = [];
  #clock = 0;
  #interceptors: Array<(call: AwsCall) => InterceptDecision | Promise<InterceptDecision> | undefined> = [];
  #inFlight = 0;
  #requestBytesLimit = Number.POSITIVE_INFINITY;
  #idleWaiters: Array<() => void> = [];
  /** Requests whose client left before their answer was written whole. */
  readonly #gaveUp = new WeakSet<ServerResponse>();
  readonly #open = new Set<ServerResponse>();

  private constructor(server: Server, target: URL, v2: EventBridgeV2Upstream | undefined) {
    this.#server = server;
    this.#target = target;
    this.#v2 = v2 === undefined ? undefined : { target: new URL(v2.endpoint), faults: v2.faults };
    this.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** `target`: moto. `options.eventBridgeV2`: the custom-bus stand-in, for custom-bus calls. */
  static async start(
    target: string,
    options: { eventBridgeV2?: EventBridgeV2Upstream } = {},
  ): Promise<AwsFaultProxy> {
    let proxy: AwsFaultProxy | undefined;
    const server = createServer((req, res) => {
      proxy?.track(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new AwsFaultProxy(server, new URL(target), options.eventBridgeV2);
    return proxy;
  }

  /** Every custom-bus PutEvents request, in arrival order, with the bus's answer per entry. */
  get customBusRequests(): readonly CustomBusRequest[] {
    return this.#customRequests;
  }

  get putEvents(): PutEventsStats {
    return { ...this.#stats };
  }

  /** Every PutEvents entry received, in order, faults included: what EventBridge would have seen. */
  get sentEntries(): readonly SentEntry[] {
    return this.#sent;
  }

  /** What happened, in order (see the module comment). */
  get timeline(): readonly TimelineEntry[] {
    return this.#timeline;
  }

  /** Adds a mark to the timeline (a crash, a takeover) for the invariant checker. */
  mark(label: string): void {
    this.#timeline.push({ at: this.#tick(), kind: 'mark', label });
  }

  /**
   * The next `requests` PutEvents calls (on either bus) have every `every`-th entry (the 1st, then `every` later,
   * …) answered with `errorCode` instead of being forwarded.
   */
  rejectEntries(
    requests: number,
    options: { every?: number; errorCode?: string; errorMessage?: string } = {},
  ): void {
    this.#entryFaults.push({
      remaining: requests,
      every: options.every ?? 2,
      errorCode: options.errorCode ?? 'InternalFailure',
      errorMessage: options.errorMessage ?? 'Injected by the fault proxy',
    });
  }

  /**
   * The next `requests` PutEvents calls (on either bus) are refused as a whole with `status` and
   * `errorType` (the custom bus answers its `ThrottlingException` with 429).
   */
  refuseRequests(
    requests: number,
    options: { status?: number; errorType?: string; message?: string } = {},
  ): void {
    this.#requestFaults.push({
      remaining: requests,
      status: options.status ?? 400,
      errorType: options.errorType ?? 'ThrottlingException',
      message: options.message ?? 'Injected by the fault proxy',
      target: `${EVENTS_PREFIX}PutEvents`,
    });
  }

  /** Ends every entry and request fault still pending: the service is healthy again. */
  clearFaults(): void {
    this.#entryFaults.length = 0;
    this.#requestFaults.length = 0;
  }

  /**
   * From now on, a PutEvents request whose entries add up (as AWS counts them) to more than
   * `bytes` is refused as a whole with the validation error EventBridge gives for its size: a bus
   * whose cap is below what the function was configured for.
   */
  limitRequestBytes(bytes: number): void {
    this.#requestBytesLimit = bytes;
  }

  /** The next `requests` DynamoDB calls of `operation` are refused as a whole (throttled by default). */
  refuseDynamoDb(
    requests: number,
    options: { operation?: string; status?: number; errorType?: string } = {},
  ): void {
    this.#requestFaults.push({
      remaining: requests,
      status: options.status ?? 400,
      errorType: `com.amazonaws.dynamodb.v20120810#${options.errorType ?? 'ProvisionedThroughputExceededException'}`,
      message: 'Injected by the fault proxy',
      target: `${DYNAMODB_PREFIX}${options.operation ?? 'UpdateItem'}`,
    });
  }

  /**
   * Calls `listener` with every request before it is forwarded; the request waits for it, so a
   * test can act at that exact point. Returning `'drop'` holds the request forever (the client is
   * gone, or will time out); anything else forwards it. Listeners run in the order added.
   */
  intercept(listener: (call: AwsCall) => InterceptDecision | Promise<InterceptDecision> | undefined): void {
    this.#interceptors.push(listener);
  }

  /** Resolves once no request is being handled (forwarded and answered, or dropped). */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    for (const res of this.#open) res.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private track(req: IncomingMessage, res: ServerResponse): void {
    this.#inFlight += 1;
    this.#open.add(res);
    // A client that leaves before its answer (killed, timed out) never learns what the call did.
    res.once('close', () => {
      if (res.writableFinished) return;
      this.#gaveUp.add(res);
      this.mark('client-gave-up');
    });
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      this.#open.delete(res);
      this.#inFlight -= 1;
      if (this.#inFlight === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
    };
    this.handle(req, res)
      .catch((error: unknown) => {
        if (!res.headersSent && !res.destroyed) res.writeHead(502).end(String(error));
      })
      .finally(finish);
  }

  #tick(): number {
    this.#clock += 1;
    return this.#clock;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Listened for from the start: a client killed while an interceptor runs closes before a drop.
    const closed = new Promise<void>((resolve) => res.once('close', () => resolve()));
    const body = await readBody(req);
    const v2Operation = this.#v2 === undefined ? undefined : EVENTS_V2_PATH.exec(req.url ?? '')?.[1];
    const target =
      v2Operation === undefined
        ? String(req.headers['x-amz-target'] ?? '')
        : `${EVENTS_V2_PREFIX}${v2Operation}`;
    const call = v2Operation === undefined ? describeCall(target, body) : describeCborCall(v2Operation, body);
    if (call.checkpoint !== undefined) {
      this.#timeline.push({ at: this.#tick(), kind: 'commit-requested', checkpoint: call.checkpoint });
    }
    if (call.operation === 'PutEvents')
      this.#timeline.push({ at: this.#tick(), kind: 'put-events-requested' });
    for (const listener of this.#interceptors) {
      if ((await listener(call)) === 'drop') {
        // Held until the client gives up: it never learns whether the call was made.
        await closed;
        return;
      }
    }
    if (target === `${EVENTS_PREFIX}PutEvents`) {
      await this.#putEvents(req, body, res, target);
      return;
    }
    if (target === `${EVENTS_V2_PREFIX}PutEvents`) {
      await this.#putEventsV2(req, body, res, call.body as CborPutEvents);
      return;
    }
    if (v2Operation !== undefined) {
      const answer = await this.#sendV2(req, body);
      res.writeHead(answer.status, answer.headers).end(answer.body);
      return;
    }
    const refusal = takeFault(this.#requestFaults, (fault) => fault.target === target);
    if (refusal !== undefined) {
      if (call.checkpoint !== undefined) {
        this.#timeline.push({ at: this.#tick(), kind: 'commit-refused', checkpoint: call.checkpoint });
      }
      sendError(res, refusal);
      return;
    }
    const answer = await this.#send(req, body);
    if (call.checkpoint !== undefined) {
      const kind = answer.status === 200 ? 'commit-applied' : 'commit-refused';
      this.#timeline.push({ at: this.#tick(), kind, checkpoint: call.checkpoint });
    }
    res.writeHead(answer.status, answer.headers).end(answer.body);
  }

  async #putEvents(req: IncomingMessage, body: Buffer, res: ServerResponse, target: string): Promise<void> {
    this.#stats.requests += 1;
    const input = JSON.parse(body.toString('utf8')) as { Entries: SentEntry[] };
    this.#sent.push(...input.Entries);
    const refusal =
      entriesBytes(input.Entries) > this.#requestBytesLimit
        ? {
            remaining: 1,
            status: 400,
            errorType: 'ValidationException',
            message: 'Total size of the entries in the request is over the limit.',
            target,
          }
        : takeFault(this.#requestFaults, (fault) => fault.target === target);
    if (refusal !== undefined) {
      this.#stats.refusedRequests += 1;
      sendError(res, refusal);
      return;
    }
    const fault = takeFault(this.#entryFaults, () => true);
    const rejected = input.Entries.map((_, index) => fault !== undefined && index % fault.every === 0);
    const forwarded = input.Entries.filter((_, index) => !rejected[index]);
    const results =
      forwarded.length === 0
        ? []
        : ((
            JSON.parse(
              (
                await this.#send(req, Buffer.from(JSON.stringify({ ...input, Entries: forwarded })))
              ).body.toString('utf8'),
            ) as { Entries?: Array<{ EventId?: string; ErrorCode?: string }> }
          ).Entries ?? []);
    let next = 0;
    const entries = rejected.map((isRejected) =>
      isRejected
        ? { ErrorCode: fault!.errorCode, ErrorMessage: fault!.errorMessage }
        : (results[next++] ?? {}),
    );
    const failed = entries.filter((entry) => 'ErrorCode' in entry && entry.ErrorCode !== undefined).length;
    this.#stats.rejectedEntries += rejected.filter(Boolean).length;
    res
      .writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'fault-proxy' })
      .end(JSON.stringify({ FailedEntryCount: failed, Entries: entries }));
    // Accepted by the bus once the answer is on its way back; a client killed meanwhile never knew.
    input.Entries.forEach((entry, index) => {
      const result = entries[index] as { EventId?: string };
      if (result.EventId !== undefined && result.EventId !== '') {
        this.#timeline.push({
          at: this.#tick(),
          kind: 'accepted',
          detailType: entry.DetailType ?? '',
          detail: entry.Detail ?? '',
          ...(this.#gaveUp.has(res) ? { unanswered: true as const } : {}),
        });
      }
    });
  }

  /**
   * The custom bus's PutEvents: the same faults as `#putEvents`, the request forwarded unchanged
   * (see the module comment), the answer read for the timeline and passed back as it came.
   */
  async #putEventsV2(
    req: IncomingMessage,
    body: Buffer,
    res: ServerResponse,
    input: CborPutEvents,
  ): Promise<void> {
    this.#stats.requests += 1;
    const entries = Array.isArray(input.Entries) ? input.Entries : [];
    this.#sent.push(
      ...entries.map((entry) => ({
        Source: entry.Source,
        DetailType: entry.DetailType,
        Detail: entry.Detail,
      })),
    );
    const request: { entries: CustomBusEntry[]; refused: boolean; answerDelivered: boolean } = {
      entries: entries.map((entry) => ({
        detailType: entry.DetailType ?? '',
        detail: entry.Detail ?? '',
        eventGroupId: entry.SystemMetadata?.EventGroupId,
        deduplicationId: entry.SystemMetadata?.DeduplicationId,
        outcome: undefined,
      })),
      refused: true,
      answerDelivered: false,
    };
    this.#customRequests.push(request);
    res.once('finish', () => {
      request.answerDelivered = true;
    });
    const refusal =
      entriesBytes(entries) > this.#requestBytesLimit
        ? {
            remaining: 1,
            status: 400,
            errorType: 'InvalidInputException',
            message: 'Total size of the entries in the request is over the limit.',
            target: `${EVENTS_PREFIX}PutEvents`,
          }
        : takeFault(this.#requestFaults, (fault) => fault.target === `${EVENTS_PREFIX}PutEvents`);
    if (refusal !== undefined) {
      this.#stats.refusedRequests += 1;
      res
        .writeHead(refusal.status, {
          'content-type': 'application/cbor',
          'smithy-protocol': 'rpc-v2-cbor',
          'x-amzn-requestid': 'fault-proxy',
        })
        .end(cbor.serialize({ __type: refusal.errorType, Message: refusal.message }));
      return;
    }
    // The chosen entries of this request, by position and de-duplication id, rejected by the bus.
    const fault = takeFault(this.#entryFaults, () => true);
    const chosen = new Set(
      fault === undefined
        ? []
        : entries.flatMap((entry, index) =>
            index % fault.every === 0 ? [`${index}\u0000${entry.SystemMetadata?.DeduplicationId}`] : [],
          ),
    );
    const disarm =
      fault === undefined
        ? () => {}
        : this.#v2!.faults.rejectEntries(
            (view) =>
              chosen.has(`${view.index}\u0000${view.deduplicationId}`)
                ? { errorCode: fault.errorCode, errorMessage: fault.errorMessage }
                : undefined,
            { times: chosen.size },
          );
    let answer: ForwardedAnswer;
    try {
      answer = await this.#sendV2(req, body);
    } finally {
      disarm();
    }
    this.#stats.rejectedEntries += chosen.size;
    res.writeHead(answer.status, answer.headers).end(answer.body);
    if (answer.status !== 200) return;
    const results = (cbor.deserialize(answer.body) as { Entries?: CborResultEntry[] }).Entries ?? [];
    request.refused = false;
    // Accepted by the bus once the answer is on its way back; a client killed meanwhile never knew.
    entries.forEach((entry, index) => {
      const result = results[index] ?? {};
      request.entries[index] = {
        ...request.entries[index]!,
        outcome: result.ErrorCode ?? result.SuccessCode,
      };
      if (result.SuccessCode === 'DEDUPLICATED') this.#stats.deduplicatedEntries += 1;
      if (result.EventId !== undefined && result.EventId !== '') {
        this.#timeline.push({
          at: this.#tick(),
          kind: 'accepted',
          detailType: entry.DetailType ?? '',
          detail: entry.Detail ?? '',
          ...(this.#gaveUp.has(res) ? { unanswered: true as const } : {}),
        });
      }
    });
  }

  /** Forwards to the stand-in as sent: its signature covers the `host` header and the body. */
  #sendV2(req: IncomingMessage, body: Buffer): Promise<ForwardedAnswer> {
    const headers = { ...req.headers, 'content-length': String(body.length) };
    return forwardRequest(req, body, this.#v2!.target, headers);
  }

  #send(req: IncomingMessage, body: Buffer): Promise<ForwardedAnswer> {
    const headers = { ...req.headers, host: this.#target.host, 'content-length': String(body.length) };
    return forwardRequest(req, body, this.#target, headers);
  }
}

/** Entry sizes as AWS documents them: Time 14 bytes, Source, DetailType, Detail in UTF-8. */
function entriesBytes(entries: readonly (SentEntry & { Time?: unknown })[]): number {
  return entries.reduce(
    (total, entry) =>
      total +
      (entry.Time === undefined ? 0 : 14) +
      Buffer.byteLength(entry.Source ?? '') +
      Buffer.byteLength(entry.DetailType ?? '') +
      Buffer.byteLength(entry.Detail ?? ''),
    0,
  );
}

/** A custom-bus PutEvents input, as decoded from CBOR (timestamps stay tag objects). */
interface CborPutEvents {
  readonly Entries?: ReadonlyArray<{
    readonly Source?: string;
    readonly DetailType?: string;
    readonly Detail?: string;
    readonly Time?: unknown;
    readonly SystemMetadata?: { readonly EventGroupId?: string; readonly DeduplicationId?: string };
  }>;
}

interface CborResultEntry {
  readonly EventId?: string;
  readonly SuccessCode?: string;
  readonly ErrorCode?: string;
}

function describeCborCall(operation: string, body: Buffer): AwsCall {
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? undefined : cbor.deserialize(body);
  } catch {
    parsed = undefined;
  }
  return { service: 'events', operation, body: parsed, checkpoint: undefined };
}

function describeCall(target: string, body: Buffer): AwsCall {
  const service = target.startsWith(EVENTS_PREFIX)
    ? 'events'
    : target.startsWith(DYNAMODB_PREFIX)
      ? 'dynamodb'
      : 'other';
  const operation = service === 'other' ? '' : target.slice(target.indexOf('.') + 1);
  let parsed: unknown;
  try {
    parsed = body.length === 0 ? undefined : JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  return { service, operation, body: parsed, checkpoint: checkpointWritten(operation, parsed) };
}

/** The checkpoint an `UpdateItem` sets (`SET checkpoint = :seq`), if it is a checkpoint write. */
function checkpointWritten(operation: string, body: unknown): number | undefined {
  if (operation !== 'UpdateItem' || typeof body !== 'object' || body === null) return undefined;
  const { UpdateExpression, ExpressionAttributeValues } = body as {
    UpdateExpression?: string;
    ExpressionAttributeValues?: Record<string, { N?: string }>;
  };
  const match = /checkpoint = (:\w+)/.exec(UpdateExpression ?? '');
  const value = match === null ? undefined : ExpressionAttributeValues?.[match[1]!]?.N;
  return value === undefined ? undefined : Number(value);
}

function sendError(res: ServerResponse, fault: RequestFault): void {
  const contentType = fault.target.startsWith(DYNAMODB_PREFIX)
    ? 'application/x-amz-json-1.0'
    : 'application/x-amz-json-1.1';
  res
    .writeHead(fault.status, { 'content-type': contentType, 'x-amzn-requestid': 'fault-proxy' })
    .end(JSON.stringify({ __type: fault.errorType, message: fault.message }));
}

function takeFault<T extends { remaining: number }>(
  queue: T[],
  accepts: (fault: T) => boolean,
): T | undefined {
  const index = queue.findIndex(accepts);
  if (index === -1) return undefined;
  const fault = queue[index]!;
  fault.remaining -= 1;
  if (fault.remaining <= 0) queue.splice(index, 1);
  return fault;
}
