/**
 * One request/response pair as the simulator sees it: what gets recorded (never a header value),
 * how JSON answers are written, and how request inputs are read and validated.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** What the simulator remembers of a request. Header values are never kept, only whether a bearer was sent. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** Query parameters; values of secret-looking names are replaced by `[redacted]`. */
  readonly query: Readonly<Record<string, string>>;
  /** The answered status; 0 while held or when the client left before an answer. */
  readonly status: number;
  readonly hadBearer: boolean;
  /** Epoch ms of arrival (the simulator's clock). */
  readonly at: number;
  /** Epoch ms when the exchange ended: answered, or the client went away. Absent while it is open. */
  readonly endedAt?: number;
}

/** Query parameters that would be secrets if a client misplaced them; their values are never stored. */
const SECRET_QUERY_NAMES = new Set(['client_secret', 'access_token', 'token', 'password', 'refresh_token']);

export interface Exchange {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly record: { -readonly [K in keyof RecordedRequest]: RecordedRequest[K] };
}

/** Parses the request target without letting a `//host/...` path be read as a host name. */
export function parseRequestUrl(target: string | undefined): URL | undefined {
  try {
    return new URL(`http://simulator.invalid${target?.startsWith('/') ? target : '/'}`);
  } catch {
    return undefined;
  }
}

export function recordRequest(req: IncomingMessage, url: URL, at: number): Exchange['record'] {
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    query[name] = SECRET_QUERY_NAMES.has(name.toLowerCase()) ? '[redacted]' : value;
  }
  return {
    method: req.method ?? 'GET',
    path: url.pathname,
    query,
    status: 0,
    hadBearer: /^bearer\s/i.test(req.headers.authorization ?? ''),
    at,
  };
}

/** Records the status before writing, so it is visible as soon as the client can see the answer. */
export function writeHead(
  exchange: Exchange,
  status: number,
  headers: Record<string, string | number>,
): void {
  exchange.record.status = status;
  exchange.res.writeHead(status, headers);
}

export function sendJson(
  exchange: Exchange,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
): void {
  sendRaw(exchange, status, JSON.stringify(body), headers);
}

/** Sends a body as-is with a JSON content type (also how a malformed body is delivered). */
export function sendRaw(
  exchange: Exchange,
  status: number,
  payload: string,
  headers: Record<string, string | number> = {},
): void {
  if (exchange.res.headersSent || exchange.res.destroyed) return;
  writeHead(exchange, status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
    ...headers,
  });
  exchange.res.end(payload);
}

/** The body as text, or undefined when it exceeds `limitBytes` (reading stops there). */
export async function readBody(req: IncomingMessage, limitBytes: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > limitBytes) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Media type without parameters, lower case: `Application/JSON; charset=x` → `application/json`. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function accepts(header: string | undefined, type: string): boolean {
  return (header ?? '').split(',').some((range) => mediaType(range) === type);
}

export type ParsedInteger = { readonly ok: true; readonly value: number } | { readonly ok: false };

/** Strict decimal integer: digits only, a safe integer, within [min, max]. No signs, spaces or exponents. */
export function parseInteger(raw: string, min: number, max: number): ParsedInteger {
  if (!/^\d+$/.test(raw)) return { ok: false };
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= min && value <= max ? { ok: true, value } : { ok: false };
}
