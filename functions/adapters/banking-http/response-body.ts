/**
 * Reading undici response bodies safely: bounded, streaming UTF-8 decoding of the bodies we parse,
 * short redacted summaries of error bodies, and draining the bodies we ignore (an unread undici
 * body keeps its connection busy until it is consumed or destroyed).
 */
import type { Dispatcher } from 'undici';
import { type ErrorContext, PayloadValidationError, type PollerError } from '../../core/errors.ts';
import type { PayloadOrigin } from '../../core/event-model.ts';
import { isJsonObject } from '../../core/json-object.ts';
import type { JsonDocument } from '../../core/json-text.ts';
import { collapseWhitespace, redact, WITHHELD } from '../secret-redaction.ts';

/**
 * A 100-event page is a few hundred KiB; a single event, a token answer, near this is a broken or
 * hostile upstream, refused. A poll answer longer than what is read of it at once (at most this) is
 * read in parts instead (`readPageBody`).
 */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;
/** Error bodies are read only for a summary; the rest is dropped with the connection. */
const ERROR_BODY_READ_BYTES = 16 * 1024;
/** Bodies we ignore up to this size are drained so the keep-alive connection can be reused. */
const DRAIN_LIMIT_BYTES = 64 * 1024;
const CODE_MAX_CHARS = 60;
const DESCRIPTION_MAX_CHARS = 160;
/** What a summary says of a body it does not understand, rather than quoting it. */
const NOT_JSON = 'body not shown (not a JSON object)';
const NO_KNOWN_FIELD = 'body not shown (no error field we know)';

type ResponseBody = Dispatcher.ResponseData['body'];

function describe(origin: PayloadOrigin): string {
  return origin.status === undefined ? origin.source : `${origin.source} (HTTP ${origin.status})`;
}

function declaredLength(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || !/^\d+$/.test(value.trim())) return undefined;
  return Number(value);
}

type ReadableBody = AsyncIterable<Uint8Array | string> & { destroy?: (error?: Error) => unknown };

interface ReadingOptions {
  readonly origin: PayloadOrigin;
  readonly maxBytes: number;
  readonly contentLength?: string | string[];
  /** The error for a body that cannot be read (not UTF-8, not JSON). @default a `PayloadValidationError` */
  readonly unreadable?: (message: string, context: ErrorContext) => PollerError;
  /** A reading of a body `JSON.parse` refused (`recoverPage`), tried before giving up on it. */
  readonly recover?: (text: string) => JsonDocument | undefined;
  /**
   * Awaited once the body is read, before it is parsed: the program's turn on a thread it shares
   * with others (`CpuTurns`). @default no wait
   */
  readonly beforeParse?: () => Promise<void>;
}

/** A body's text as far as it was read: all of it, or its first `bytesRead` bytes. */
interface BodyText {
  readonly text: string;
  readonly bytesRead: number;
  readonly complete: boolean;
}

/**
 * Reads the body as UTF-8 with a streaming `TextDecoder` (a character split across chunks
 * survives) in fatal mode: invalid UTF-8 in an event is rejected rather than silently replaced.
 * Past `maxBytes` it stops: with `cut`, what was read is returned (the connection is dropped);
 * without, the body is refused as too large.
 */
async function readText(body: ReadableBody, options: ReadingOptions, cut: boolean): Promise<BodyText> {
  const { origin, maxBytes } = options;
  const unreadable = unreadableError(options);
  const context = { source: origin.source, status: origin.status, maxBytes };
  const tooLarge = () =>
    new PayloadValidationError(`${describe(origin)}: body is larger than ${maxBytes} bytes`, context);
  const declared = declaredLength(options.contentLength);
  if (!cut && declared !== undefined && declared > maxBytes) {
    body.destroy?.();
    throw tooLarge();
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let received = 0;
  let text = '';
  try {
    for await (const chunk of body) {
      const bytes = typeof chunk === 'string' ? new TextEncoder().encode(chunk) : chunk;
      const room = maxBytes - received;
      if (bytes.byteLength > room) {
        // Leaving the loop destroys the stream, which is what we want for an oversized body.
        if (!cut) throw tooLarge();
        text += decoder.decode(bytes.subarray(0, room), { stream: true });
        // A character cut in two stays in the decoder: the text ends before it.
        return { text, bytesRead: maxBytes, complete: false };
      }
      received += bytes.byteLength;
      text += decoder.decode(bytes, { stream: true });
    }
    text += decoder.decode();
  } catch (error) {
    if (
      error instanceof TypeError &&
      (error as { code?: string }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA'
    ) {
      throw unreadable(`${describe(origin)}: body is not valid UTF-8`, context);
    }
    throw error;
  }
  return { text, bytesRead: received, complete: true };
}

function unreadableError(options: ReadingOptions): (message: string, context: ErrorContext) => PollerError {
  return (
    options.unreadable ??
    ((message: string, context: ErrorContext) => new PayloadValidationError(message, context))
  );
}

/** The whole text of a body parsed as JSON, or `recover`ed; an empty body gives `undefined`. */
function parseJson(text: string, options: ReadingOptions): JsonDocument | undefined {
  const { origin, maxBytes } = options;
  if (text.trim() === '') return undefined;
  try {
    return { text, value: JSON.parse(text) as unknown };
  } catch (error) {
    const recovered = options.recover?.(text);
    if (recovered !== undefined) return recovered;
    // No cause: the parser's message quotes the body, which may hold a token, and loggers print causes.
    // V8's parser does not recurse, but should a runtime's run out of stack, say so rather than "not JSON".
    const reason = error instanceof RangeError ? `could not be parsed (${error.name})` : 'is not JSON';
    throw unreadableError(options)(`${describe(origin)}: body ${reason}`, {
      source: origin.source,
      status: origin.status,
      maxBytes,
    });
  }
}

/**
 * Reads the whole body as UTF-8 and parses it as JSON, keeping the text beside the value (events
 * are republished from their text, not from the parsed value). An empty body gives `undefined`.
 *
 * @throws PayloadValidationError when the body is larger than `maxBytes`; when it is not UTF-8 or
 *   not JSON, what `unreadable` makes (a `PayloadValidationError` unless given).
 */
export async function readJsonBody(
  body: ReadableBody,
  options: ReadingOptions,
): Promise<JsonDocument | undefined> {
  const { text } = await readText(body, options, false);
  return parseJson(text, options);
}

/** A page's body: parsed whole, or cut after `maxBytes` for `parsePagePrefix` to read its first events. */
export type PageBody =
  | { readonly kind: 'whole'; readonly document: JsonDocument | undefined }
  | { readonly kind: 'cut'; readonly text: string; readonly bytesRead: number };

/**
 * Reads a page's body like `readJsonBody`, except that a body longer than `maxBytes` is not refused:
 * its first `maxBytes` are returned as text (`cut`), and the connection is dropped, so a page of any
 * size takes no more memory than that to read. `beforeParse` is awaited before either is parsed
 * (the caller parses a cut text, in the same turn).
 */
export async function readPageBody(body: ReadableBody, options: ReadingOptions): Promise<PageBody> {
  const read = await readText(body, options, true);
  if (options.beforeParse !== undefined) await options.beforeParse();
  if (!read.complete) return { kind: 'cut', text: read.text, bytesRead: read.bytesRead };
  return { kind: 'whole', document: parseJson(read.text, options) };
}

/**
 * Reads at most 16 KiB of an error body, leniently decoded, for a summary. A failure while reading
 * gives what was read so far: the status is what matters. `signal` is rethrown if it aborted, so
 * the caller can report the deadline instead.
 */
export async function readErrorBody(body: ResponseBody, signal?: AbortSignal): Promise<string> {
  const decoder = new TextDecoder('utf-8');
  let received = 0;
  let text = '';
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      const room = ERROR_BODY_READ_BYTES - received;
      const part = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
      received += part.byteLength;
      text += decoder.decode(part, { stream: true });
      if (received >= ERROR_BODY_READ_BYTES) break;
    }
  } catch (error) {
    if (signal?.aborted) throw error;
  }
  return text + decoder.decode();
}

/** Drains a body we do not need; a large one is destroyed instead. Never throws. */
export async function discardBody(body: ResponseBody): Promise<void> {
  try {
    await body.dump({ limit: DRAIN_LIMIT_BYTES });
  } catch {
    // The connection is closed either way; nothing to report.
  }
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * One field of an error body as a summary shows it: decoded, on one line, bounded, with every
 * secret redacted (again after each step that could have joined the pieces of one).
 */
function shown(value: string, secrets: readonly (string | undefined)[], max: number): string {
  const line = redact(collapseWhitespace(redact(value, secrets)).trim(), secrets);
  return redact(shorten(line, max), secrets);
}

/**
 * A one-line summary of an error body, for messages and context. A body is never quoted as it
 * came: only the fields we know are kept (the OAuth `error`, or `error.code` / `error.type` /
 * `code`, and a description from `error_description`, `error.message`, `message` or `detail`),
 * each decoded and redacted of every secret in every encoding (see `redact`). A body that is not
 * a JSON object, or has none of those fields, is described, not shown. Never throws: if anything
 * goes wrong the summary is `WITHHELD`.
 *
 * @example
 * summarizeErrorBody('{"error":"invalid_client","error_description":"bad secret"}', []);
 * // 'invalid_client (bad secret)'
 */
export function summarizeErrorBody(
  text: string,
  secrets: readonly (string | undefined)[],
): string | undefined {
  try {
    if (text.trim() === '') return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return NOT_JSON;
    }
    if (!isJsonObject(parsed)) return NOT_JSON;
    const nested = isJsonObject(parsed.error) ? parsed.error : undefined;
    const code = [parsed.error, nested?.code, nested?.type, parsed.code].find(
      (value): value is string => typeof value === 'string' && value.trim() !== '',
    );
    const description = [parsed.error_description, nested?.message, parsed.message, parsed.detail].find(
      (value): value is string => typeof value === 'string' && value.trim() !== '',
    );
    const parts = [
      code === undefined ? undefined : shown(code, secrets, CODE_MAX_CHARS),
      description === undefined ? undefined : `(${shown(description, secrets, DESCRIPTION_MAX_CHARS)})`,
    ].filter((part) => part !== undefined);
    // One field that could not be redacted withholds the whole summary.
    if (parts.some((part) => part.includes(WITHHELD))) return WITHHELD;
    return parts.length === 0 ? NO_KNOWN_FIELD : parts.join(' ');
  } catch {
    return WITHHELD;
  }
}
