/**
 * How a PutEvents request reaches EventBridge: its JSON body signed by hand (SigV4, `sigv4.ts`)
 * and sent with undici, one attempt per call (the publish pipeline retries, within the budget).
 * Credentials, region and endpoint still come from an `EventBridgeClient`'s configuration,
 * resolved by the SDK as always: the Lambda role's credentials with their session token and
 * refresh, `AWS_ENDPOINT_URL_EVENTBRIDGE` or `AWS_ENDPOINT_URL`, the region's endpoint rules. Only
 * the per-request path is ours: it costs about a quarter of the SDK's CPU per call
 * (`npm run bench:put-events`, side by side), and that CPU is what a catch-up at Lambda's share
 * of a core is limited by. Errors keep the SDK's shape (`name`, `$metadata`, `$fault`), so they
 * are classified as before.
 */
import type { EventBridgeClient, PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import type { Dispatcher } from 'undici';
import { awsAgent, DEFAULT_EXCHANGE_TIMEOUTS, type Exchanged, exchange } from './aws-http-exchange.ts';
import { safeAwsMessage } from './service-error-redaction.ts';
import { SigningKeyCache, signPost } from './sigv4.ts';

/** One entry as the publisher prepared it. */
export interface PutEventsEntry {
  readonly source: string;
  readonly detailType: string;
  /** The `Detail` text, sent as a JSON string. */
  readonly detail: string;
  /** Epoch ms of `Time`. */
  readonly time: number;
  readonly eventBusName: string;
}

/** Sends one PutEvents request; results in request order. Errors have the SDK's shape (`name`, `$metadata`). */
export interface PutEventsTransport {
  putEvents(
    entries: readonly PutEventsEntry[],
    signal: AbortSignal,
  ): Promise<readonly PutEventsResultEntry[]>;
}

/** An error EventBridge answered with, shaped as the SDK shapes its service errors. */
export class EventBridgeServiceError extends Error {
  readonly $fault: 'client' | 'server';
  readonly $metadata: { readonly httpStatusCode: number; readonly requestId?: string };

  constructor(name: string, message: string, status: number, requestId: string | undefined) {
    super(message);
    this.name = name;
    this.$fault = status >= 500 ? 'server' : 'client';
    this.$metadata = { httpStatusCode: status, requestId };
  }
}

export interface SignedPutEventsOptions {
  /** Supplies credentials, region and endpoint (its configuration, resolved by the SDK). */
  readonly client: EventBridgeClient;
  /** @default 1 000 ms to connect, 2 000 ms for the answer (as `boundedClientConfig`) */
  readonly timeouts?: { readonly connectMs: number; readonly answerMs: number };
  /** The undici dispatcher; a test seam. @default an Agent with the timeouts above */
  readonly dispatcher?: Dispatcher;
  /** Epoch ms, for the signature. @default Date.now */
  readonly now?: () => number;
}

interface Target {
  readonly url: URL;
  readonly region: string;
}

const HEADERS = Object.freeze({
  'content-type': 'application/x-amz-json-1.1',
  'x-amz-target': 'AWSEvents.PutEvents',
});

/** PutEvents signed by hand and sent with undici; see the module comment. */
export class SignedPutEvents implements PutEventsTransport {
  readonly #client: EventBridgeClient;
  readonly #dispatcher: Dispatcher;
  readonly #now: () => number;
  readonly #keys = new SigningKeyCache();
  #target: Promise<Target> | undefined;

  constructor(options: SignedPutEventsOptions) {
    this.#client = options.client;
    this.#dispatcher = options.dispatcher ?? awsAgent(options.timeouts ?? DEFAULT_EXCHANGE_TIMEOUTS);
    this.#now = options.now ?? Date.now;
  }

  async putEvents(
    entries: readonly PutEventsEntry[],
    signal: AbortSignal,
  ): Promise<readonly PutEventsResultEntry[]> {
    const [target, credentials] = await Promise.all([
      this.#resolveTarget(),
      this.#client.config.credentials(),
    ]);
    const body = requestBody(entries);
    // Awaited though ours is synchronous: `bench:signer` puts the library's signer, which is not, here.
    const headers = await signPost(
      {
        host: target.url.host,
        body,
        headers: HEADERS,
        service: 'events',
        region: target.region,
        credentials,
        now: this.#now(),
      },
      this.#keys,
    );
    const response = await exchange(this.#dispatcher, {
      origin: target.url.origin,
      path: target.url.pathname,
      headers,
      body,
      signal,
    });
    if (response.status !== 200) throw serviceError(response, credentials);
    const parsed = JSON.parse(response.body.toString('utf8')) as { Entries?: PutEventsResultEntry[] };
    return parsed.Entries ?? [];
  }

  /** The endpoint and region, as the SDK resolves them for this client: once. */
  #resolveTarget(): Promise<Target> {
    this.#target ??= (async () => {
      const { config } = this.#client;
      const region = await config.region();
      // The client's own `endpoint` first, then AWS_ENDPOINT_URL_EVENTBRIDGE / AWS_ENDPOINT_URL.
      const configured = config.isCustomEndpoint
        ? endpointUrl(await config.endpoint!())
        : await config.serviceConfiguredEndpoint?.();
      const endpoint = config.endpointProvider({
        Region: region,
        UseFIPS: await config.useFipsEndpoint(),
        UseDualStack: await config.useDualstackEndpoint(),
        ...(configured === undefined ? {} : { Endpoint: configured }),
      });
      return { url: new URL(endpoint.url.href), region };
    })();
    return this.#target;
  }
}

/** An endpoint as a client's configuration holds it, as a URL. */
function endpointUrl(endpoint: { protocol: string; hostname: string; port?: number; path: string }): string {
  const port = endpoint.port === undefined ? '' : `:${endpoint.port}`;
  return `${endpoint.protocol}//${endpoint.hostname}${port}${endpoint.path}`;
}

/** The JSON 1.1 body: `Time` in epoch seconds, as the SDK writes timestamps. */
function requestBody(entries: readonly PutEventsEntry[]): string {
  const parts = entries.map(
    (entry) =>
      `{"Source":${JSON.stringify(entry.source)},"DetailType":${JSON.stringify(entry.detailType)},` +
      `"Detail":${JSON.stringify(entry.detail)},` +
      // Without a usable time EventBridge stamps the entry itself, as the SDK would send it.
      (Number.isFinite(entry.time) ? `"Time":${entry.time / 1000},` : '') +
      `"EventBusName":${JSON.stringify(entry.eventBusName)}}`,
  );
  return `{"Entries":[${parts.join(',')}]}`;
}

/**
 * The error of a non-200 answer, named as the SDK names it: the `x-amzn-ErrorType` header (before
 * any `:`), else the JSON body's `__type` (after its `#`) or `code`; else an XML `<Code>`, which
 * AWS front ends (and moto) send for authentication failures; else by its status.
 */
function serviceError(
  { status, body, requestId, errorType }: Exchanged,
  credentials: { readonly secretAccessKey: string; readonly sessionToken?: string },
): EventBridgeServiceError {
  const text = body.toString('utf8');
  let type = errorType?.split(':')[0]?.trim() || undefined;
  let message: string | undefined;
  try {
    const parsed = JSON.parse(text) as {
      __type?: unknown;
      code?: unknown;
      message?: unknown;
      Message?: unknown;
    };
    const named = parsed.__type ?? parsed.code;
    type ??= typeof named === 'string' ? named.split('#').at(-1) : undefined;
    const found = parsed.message ?? parsed.Message;
    message = typeof found === 'string' ? found : undefined;
  } catch {
    type ??= /<Code>([^<]{1,100})<\/Code>/.exec(text)?.[1];
    message = /<Message>([^<]{1,500})<\/Message>/.exec(text)?.[1];
  }
  // An error name is an identifier; anything else in its place is text we do not understand.
  const name =
    type !== undefined && ERROR_NAME.test(type) ? type : status >= 500 ? 'InternalFailure' : `Http${status}`;
  return new EventBridgeServiceError(
    name,
    (message === undefined ? undefined : safeAwsMessage(message, credentials)) ?? `HTTP ${status}`,
    status,
    requestId,
  );
}

/** An error name is an identifier; anything else in its place is text we do not understand. */
export const ERROR_NAME = /^[A-Za-z][A-Za-z0-9_.]{0,99}$/;
