/**
 * A small caller of the EventBridge Custom Event Bus API (`EventBridgeV2`, API version 2025-05-15),
 * for which no JavaScript SDK client exists. Its protocol is Smithy RPC v2 CBOR
 * (https://smithy.io/2.0/additional-specs/protocols/smithy-rpc-v2.html):
 * `POST /service/AWSEventsV2/operation/<Operation>` with a CBOR body, `smithy-protocol: rpc-v2-cbor`,
 * signed with SigV4 under the signing name `events` (`sigv4.ts`), sent over undici as
 * `put-events-transport.ts` sends the classic PutEvents.
 *
 * What the SDK would resolve, and where it comes from here:
 * - credentials and region: an SDK client's configuration (an `EventBridgeClient`'s by default),
 *   so the Lambda role's credentials, their session token and refresh, `AWS_REGION`, profiles all
 *   work as for every other client;
 * - the endpoint, once: `AWS_ENDPOINT_URL_EVENTBRIDGEV2`, then `AWS_ENDPOINT_URL` (the SDKs'
 *   service-specific endpoint variables, unless `AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true`), else
 *   the regional endpoint `https://eventsv2[-fips].{region}.{dnsSuffix}`. The endpoint rules also
 *   name an account-specific host (`{account}.eventsv2.{region}...`), a routing optimisation
 *   (`AccountIdEndpointMode=preferred`); the regional host serves every account, so it is used
 *   rather than deriving an account from each request.
 *
 * Errors keep the SDK's shape (`name`, `$metadata`, `$fault`: `EventBridgeServiceError`), named
 * from the body's `__type` (or the `x-amzn-errortype` header), their message redacted as
 * `safeAwsMessage` does; so callers classify them as they classify the classic bus's.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { cbor, tagSymbol } from '@smithy/core/cbor';
import type { Dispatcher } from 'undici';
import { ConfigurationError } from '../../../core/errors.ts';
import {
  awsAgent,
  DEFAULT_EXCHANGE_TIMEOUTS,
  type Exchanged,
  type ExchangeTimeouts,
  exchange,
} from '../aws-http-exchange.ts';
import { ERROR_NAME, EventBridgeServiceError } from '../put-events-transport.ts';
import { safeAwsMessage } from '../service-error-redaction.ts';
import { type SigningCredentials, SigningKeyCache, signPost } from '../sigv4.ts';

/** The service's Smithy shape id, the first part of every operation's path. */
const SERVICE_PATH = '/service/AWSEventsV2/operation/';
const SIGNING_NAME = 'events';
const HEADERS = Object.freeze({
  'content-type': 'application/cbor',
  accept: 'application/cbor',
  'smithy-protocol': 'rpc-v2-cbor',
});

/** What this needs of an SDK client: its resolved configuration (every `@aws-sdk/client-*` has it). */
export interface CredentialsAndRegionSource {
  readonly config: {
    credentials(): Promise<SigningCredentials>;
    region(): Promise<string>;
    useFipsEndpoint(): Promise<boolean>;
  };
}

export interface EventBridgeV2RpcOptions {
  /**
   * Supplies credentials and region (its configuration, as the SDK resolves it). Build it once per
   * container at module scope.
   * @default a new `EventBridgeClient` with the SDK's default configuration
   */
  readonly client?: CredentialsAndRegionSource;
  /**
   * Where the endpoint variables are read, once, on the first call.
   * @default process.env
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** @default 1 000 ms to connect, 2 000 ms for the answer (as `boundedClientConfig`) */
  readonly timeouts?: ExchangeTimeouts;
  /** The undici dispatcher; a test seam. @default an Agent of its own with the timeouts above */
  readonly dispatcher?: Dispatcher;
  /** Epoch ms, for the signature. @default Date.now */
  readonly now?: () => number;
}

interface Target {
  readonly url: URL;
  readonly region: string;
}

/**
 * Signed RPC v2 CBOR calls to EventBridgeV2, one attempt per call (the caller retries).
 *
 * @example
 * const rpc = new EventBridgeV2Rpc({ client: new EventBridgeClient(boundedClientConfig) }); // module scope
 * const bus = await rpc.call<{ Arn: string }>('DescribeEventBus', { EventBusArn: arn });
 */
export class EventBridgeV2Rpc {
  readonly #client: CredentialsAndRegionSource;
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #dispatcher: Dispatcher;
  readonly #now: () => number;
  readonly #keys = new SigningKeyCache();
  #target: Promise<Target> | undefined;

  constructor(options: EventBridgeV2RpcOptions = {}) {
    this.#client = options.client ?? (new EventBridgeClient({}) as unknown as CredentialsAndRegionSource);
    this.#env = options.env ?? process.env;
    this.#dispatcher = options.dispatcher ?? awsAgent(options.timeouts ?? DEFAULT_EXCHANGE_TIMEOUTS);
    this.#now = options.now ?? Date.now;
  }

  /**
   * Calls `operation` with `input` (encoded with `@smithy/core`'s CBOR codec: timestamps as
   * `tag({ tag: 1, value: epochSeconds })`, members in the order given) and resolves with the
   * decoded answer, its timestamps as `Date`s.
   *
   * @throws EventBridgeServiceError when the service answers with an error; undici's error, or the
   *   signal's reason once it aborts, when no answer came.
   */
  call<T>(operation: string, input: object, signal?: AbortSignal): Promise<T> {
    return this.callEncoded<T>(operation, cbor.serialize(input), signal);
  }

  /**
   * As `call`, with a body already encoded as CBOR (the publisher's `put-events-request.ts`, which
   * `bench:cbor` swaps for a hand writer to compare the two).
   */
  async callEncoded<T>(operation: string, body: Uint8Array, signal?: AbortSignal): Promise<T> {
    const [target, credentials] = await Promise.all([
      this.#resolveTarget(),
      this.#client.config.credentials(),
    ]);
    const path = `${target.url.pathname.replace(/\/$/, '')}${SERVICE_PATH}${operation}`;
    // Awaited though ours is synchronous, as in `put-events-transport.ts`: `bench:signer` swaps in the library signer.
    const headers = await signPost(
      {
        host: target.url.host,
        path,
        body,
        headers: HEADERS,
        service: SIGNING_NAME,
        region: target.region,
        credentials,
        now: this.#now(),
      },
      this.#keys,
    );
    const response = await exchange(this.#dispatcher, {
      origin: target.url.origin,
      path,
      headers,
      body,
      signal: signal ?? NEVER,
    });
    if (response.status < 200 || response.status > 299) throw serviceError(response, credentials);
    return (response.body.length === 0 ? {} : withDates(cbor.deserialize(response.body))) as T;
  }

  /** The endpoint and region: once. */
  #resolveTarget(): Promise<Target> {
    this.#target ??= (async () => {
      const { config } = this.#client;
      const region = await config.region();
      const configured = configuredEndpoint(this.#env);
      if (configured !== undefined) return { url: configured, region };
      const fips = await config.useFipsEndpoint();
      return { url: new URL(regionalEndpoint(region, fips)), region };
    })();
    // A failed resolution (no region yet) is tried again on the next call.
    this.#target.catch(() => {
      this.#target = undefined;
    });
    return this.#target;
  }
}

const NEVER = new AbortController().signal;

/** Timestamps (CBOR tag 1, epoch seconds) as `Date`s, as the SDKs give them; the rest as decoded. */
function withDates(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i += 1) value[i] = withDates(value[i]);
    return value;
  }
  if ((value as { [tagSymbol]?: true })[tagSymbol] === true) {
    const { tag, value: inner } = value as { tag: number | bigint; value: unknown };
    return Number(tag) === 1 && typeof inner === 'number' ? new Date(inner * 1000) : value;
  }
  if (value instanceof Uint8Array) return value;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) record[key] = withDates(record[key]);
  return record;
}

/** `AWS_ENDPOINT_URL_EVENTBRIDGEV2`, then `AWS_ENDPOINT_URL`, as the SDKs read them. */
function configuredEndpoint(env: Readonly<Record<string, string | undefined>>): URL | undefined {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.trim().toLowerCase() === 'true') return undefined;
  for (const variable of ['AWS_ENDPOINT_URL_EVENTBRIDGEV2', 'AWS_ENDPOINT_URL']) {
    const value = env[variable]?.trim();
    if (value === undefined || value === '') continue;
    try {
      return new URL(value);
    } catch (error) {
      throw new ConfigurationError(
        `Environment variable ${variable} is not a URL; expected e.g. https://eventsv2.eu-west-1.amazonaws.com`,
        { variable },
        error,
      );
    }
  }
  return undefined;
}

/**
 * The regional endpoint of the endpoint rules (`https://eventsv2.{Region}.{dnsSuffix}`), for the
 * partitions with a public DNS suffix: China's, and `amazonaws.com` for the others.
 */
export function regionalEndpoint(region: string, fips = false): string {
  const suffix = region.startsWith('cn-') ? 'amazonaws.com.cn' : 'amazonaws.com';
  return `https://eventsv2${fips ? '-fips' : ''}.${region}.${suffix}`;
}

/**
 * The error of a non-2xx answer, named as the SDK names an RPC v2 CBOR error: the body's
 * `__type` (after any `#`), else the `x-amzn-errortype` header (before any `:`); else an XML
 * `<Code>`, which AWS front ends send for authentication failures; else by its status.
 */
function serviceError({ status, body, requestId, errorType }: Exchanged, credentials: SigningCredentials) {
  let type: string | undefined;
  let message: string | undefined;
  const decoded = decodeErrorBody(body);
  if (decoded !== undefined) {
    const named = decoded.__type;
    type = typeof named === 'string' ? named.split('#').at(-1)?.split(':')[0] : undefined;
    const found = decoded.message ?? decoded.Message;
    message = typeof found === 'string' ? found : undefined;
  } else {
    const text = body.toString('utf8');
    type = /<Code>([^<]{1,100})<\/Code>/.exec(text)?.[1];
    message = /<Message>([^<]{1,500})<\/Message>/.exec(text)?.[1];
  }
  type ??= errorType?.split(':')[0]?.split('#').at(-1)?.trim() || undefined;
  const name =
    type !== undefined && ERROR_NAME.test(type) ? type : status >= 500 ? 'InternalFailure' : `Http${status}`;
  return new EventBridgeServiceError(
    name,
    (message === undefined ? undefined : safeAwsMessage(message, credentials)) ?? `HTTP ${status}`,
    status,
    requestId,
  );
}

/** The body as a CBOR map, or `undefined` when it is not one (empty, XML, garbage). */
function decodeErrorBody(body: Buffer): Record<string, unknown> | undefined {
  if (body.length === 0) return undefined;
  try {
    const value: unknown = cbor.deserialize(body);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
