/**
 * What undici did with the requests of this process, as its diagnostics channels report it: the
 * client side of an exchange, which a scripted server cannot see. A test waits for "the response
 * headers arrived" or "N body bytes arrived" before it acts, instead of sleeping a guessed time.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';

interface ChannelRequest {
  readonly method: string;
  readonly path: string;
}

export interface UndiciObserver {
  /** Requests to `path` (query ignored) whose response headers have arrived. */
  responses(path: string): number;
  /** Body bytes received so far for requests to `path` (query ignored). */
  bodyBytes(path: string): number;
  stop(): void;
}

/** Starts recording; `stop()` unsubscribes (call it in `afterEach`). */
export function observeUndici(): UndiciObserver {
  const responses = new Map<string, number>();
  const bodyBytes = new Map<string, number>();
  const pathOf = (request: ChannelRequest): string => request.path.split('?')[0] ?? '';
  const onHeaders = (message: unknown): void => {
    const path = pathOf((message as { request: ChannelRequest }).request);
    responses.set(path, (responses.get(path) ?? 0) + 1);
  };
  const onChunk = (message: unknown): void => {
    const { request, chunk } = message as { request: ChannelRequest; chunk: Uint8Array };
    const path = pathOf(request);
    bodyBytes.set(path, (bodyBytes.get(path) ?? 0) + chunk.byteLength);
  };
  subscribe('undici:request:headers', onHeaders);
  subscribe('undici:request:bodyChunkReceived', onChunk);
  return {
    responses: (path) => responses.get(path) ?? 0,
    bodyBytes: (path) => bodyBytes.get(path) ?? 0,
    stop: () => {
      unsubscribe('undici:request:headers', onHeaders);
      unsubscribe('undici:request:bodyChunkReceived', onChunk);
    },
  };
}
