/**
 * One signed POST to an AWS endpoint through undici's dispatcher, the answer collected whole: the
 * transport under the requests the poller signs by hand (EventBridge's JSON PutEvents,
 * EventBridgeV2's RPC v2 CBOR calls). Lower than `request()`, which wraps every answer in a
 * stream: a PutEvents answer is a few hundred bytes, and the stream's machinery cost more CPU than
 * the rest of the exchange.
 */
import { Agent, type Dispatcher } from 'undici';

/** How long to wait for a connection, and then for the answer. */
export interface ExchangeTimeouts {
  readonly connectMs: number;
  readonly answerMs: number;
}

/** 1 000 ms to connect, 2 000 ms for the answer (as `boundedClientConfig`). */
export const DEFAULT_EXCHANGE_TIMEOUTS: ExchangeTimeouts = Object.freeze({
  connectMs: 1_000,
  answerMs: 2_000,
});

/**
 * An Agent of its own, never undici's global dispatcher nor the bank's: the egress proxy set for
 * the bank (HTTPS_PROXY, or NODE_USE_ENV_PROXY on the global) must not carry AWS requests.
 */
export function awsAgent(timeouts: ExchangeTimeouts = DEFAULT_EXCHANGE_TIMEOUTS): Agent {
  return new Agent({
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.answerMs,
    bodyTimeout: timeouts.answerMs,
  });
}

export interface ExchangeRequest {
  readonly origin: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | Uint8Array;
  readonly signal: AbortSignal;
}

/** An answer, whatever its status. */
export interface Exchanged {
  readonly status: number;
  readonly body: Buffer;
  /** `x-amzn-requestid` */
  readonly requestId: string | undefined;
  /** `x-amzn-errortype`, as sent (it may carry `:` and a URL after the name). */
  readonly errorType: string | undefined;
}

/** Sends `request` once; rejects with the signal's reason once it aborts, or with undici's error. */
export function exchange(dispatcher: Dispatcher, request: ExchangeRequest): Promise<Exchanged> {
  const { signal } = request;
  return new Promise<Exchanged>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const chunks: Buffer[] = [];
    let status = 0;
    let requestId: string | undefined;
    let errorType: string | undefined;
    let controller: Dispatcher.DispatchController | undefined;
    const onAbort = () => controller?.abort(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    const settle = () => signal.removeEventListener('abort', onAbort);
    dispatcher.dispatch(
      {
        origin: request.origin,
        path: request.path,
        method: 'POST',
        headers: request.headers,
        body: request.body,
      },
      {
        onRequestStart(started) {
          controller = started;
          if (signal.aborted) started.abort(signal.reason as Error);
        },
        onResponseStart(_controller, statusCode, headers) {
          status = statusCode;
          requestId = headerValue(headers['x-amzn-requestid']);
          errorType = headerValue(headers['x-amzn-errortype']);
        },
        onResponseData(_controller, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          settle();
          resolve({ status, body: Buffer.concat(chunks), requestId, errorType });
        },
        onResponseError(_controller, error) {
          settle();
          reject(signal.aborted ? signal.reason : error);
        },
      },
    );
  });
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
