/**
 * The simulator's HTTP behaviour: routing, authentication, faults, the long poll, the stream and
 * the single-event lookups. State lives in `SimulatorContext`; this module only reads and reacts.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultInjector } from './fault-injector.ts';
import {
  accepts,
  type Exchange,
  mediaType,
  parseInteger,
  parseRequestUrl,
  type RecordedRequest,
  readBody,
  recordRequest,
  sendJson,
  sendRaw,
  writeHead,
} from './http-exchange.ts';
import type { ProgramFeed } from './program-feed.ts';
import type { ProgramMisbehaviour, ProgramMisbehaviours } from './program-misbehaviour.ts';
import { type RawEvent, wireText } from './raw-event.ts';
import type { Random } from './seeded-random.ts';
import type { SimulatorProgram } from './simulator-program.ts';
import { formatComment, formatEventMessage, SSE_BATCH_SIZE, type StreamShape } from './sse.ts';
import type { TokenRegistry } from './token-registry.ts';

/** Oldest half of the request log is dropped past this size. */
const MAX_RECORDED_REQUESTS = 20_000;

export const DEFAULT_POLL_LIMIT = 100;
export const MAX_POLL_LIMIT = 1000;
/** A token request is a few form fields; anything bigger is refused before it is buffered. */
const MAX_TOKEN_BODY_BYTES = 16 * 1024;

/** A request the simulator is keeping open (held poll, stream, injected delay); `close()` ends them. */
export interface ActiveConnection {
  readonly kind: 'poll' | 'stream' | 'delay';
  shutdown(): void;
  /** Streams: ends the stream if its token is no longer valid (revoked), as a real service would. */
  recheckToken?(): void;
  /** Cuts the connection without an answer (a stream in the middle of a message). */
  drop?(): void;
}

export interface SimulatorContext {
  /** Current credentials per client id; a rotation replaces the entry. */
  readonly programsByClientId: ReadonlyMap<string, SimulatorProgram>;
  readonly feeds: ReadonlyMap<string, ProgramFeed>;
  readonly tokens: TokenRegistry;
  readonly faults: FaultInjector;
  /** Programs the bank misbehaves for, whatever the other programs get. */
  readonly misbehaviours: ProgramMisbehaviours;
  readonly requests: Exchange['record'][];
  readonly counters: { pollRequests: number };
  readonly active: Set<ActiveConnection>;
  /** Hold timeouts have their own stream so request timing never shifts the generated data. */
  readonly holdRandom: Random;
  readonly maxPollHoldMs: number;
  /** Added before every answer: the network and service time of a real upstream. */
  readonly responseDelayMs: number;
  readonly heartbeatMs: number;
  readonly streamShape: StreamShape;
  readonly tokenLifetimeSeconds: number;
  readonly now: () => number;
  readonly lifecycle: { closing: boolean };
}

type Handler = (
  context: SimulatorContext,
  exchange: Exchange,
  params: readonly string[],
) => void | Promise<void>;

interface Route {
  readonly pattern: RegExp;
  readonly methods: Readonly<Record<string, Handler>>;
}

const ROUTES: readonly Route[] = [
  { pattern: /^\/oauth2\/token$/, methods: { POST: issueToken } },
  { pattern: /^\/events$/, methods: { GET: authenticated(pollEvents) } },
  { pattern: /^\/events\/stream$/, methods: { GET: authenticated(streamEvents) } },
  { pattern: /^\/event\/sequence\/([^/]+)$/, methods: { GET: authenticated(eventBySequence) } },
  { pattern: /^\/event\/([^/]+)$/, methods: { GET: authenticated(eventById) } },
];

/** The `node:http` request listener. Never throws: an unexpected error becomes a 500. */
export function createRequestHandler(
  context: SimulatorContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = parseRequestUrl(req.url);
    if (url === undefined) {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
      res.end(JSON.stringify({ error: 'invalid_request', error_description: 'unparseable request target' }));
      return;
    }
    const exchange: Exchange = { req, res, url, record: recordRequest(req, url, context.now()) };
    context.requests.push(exchange.record);
    // For measuring when the feed was being polled at all (hand-overs between runs).
    res.once('close', () => {
      exchange.record.endedAt = context.now();
    });
    // Keep the log bounded for long local runs; tests look at recent requests only.
    if (context.requests.length > MAX_RECORDED_REQUESTS)
      context.requests.splice(0, context.requests.length / 2);
    handle(context, exchange).catch((error: unknown) => {
      // A client that vanished mid-body lands here too; only a live response gets an answer.
      if (!res.headersSent && !res.destroyed) {
        sendJson(exchange, 500, { error: 'server_error', error_description: 'simulator error' });
        console.error('banking simulator: unexpected error', error);
      } else {
        res.destroy();
      }
    });
  };
}

async function handle(context: SimulatorContext, exchange: Exchange): Promise<void> {
  const { req, url } = exchange;
  if (context.lifecycle.closing) {
    req.resume();
    sendJson(
      exchange,
      503,
      { error: 'unavailable', error_description: 'simulator is shutting down' },
      {
        connection: 'close',
      },
    );
    return;
  }
  if (req.method === 'GET' && url.pathname === '/events') context.counters.pollRequests += 1;

  // Faults are claimed on arrival, so "the next N requests" means the next N to arrive, even
  // when an earlier one is still delayed or held.
  const delayMs = (context.faults.takeDelay() ?? 0) + context.responseDelayMs;
  const failure = context.faults.takeFailure(url.pathname);
  if (delayMs !== undefined && delayMs > 0 && !(await delay(context, exchange, delayMs))) return;
  if (failure !== undefined) {
    req.resume();
    const headers: Record<string, string> =
      failure.retryAfter === undefined ? {} : { 'retry-after': failure.retryAfter };
    sendJson(exchange, failure.status, injectedErrorBody(failure.status, url.pathname, headers), headers);
    return;
  }

  const route = ROUTES.find((candidate) => candidate.pattern.test(url.pathname));
  if (route === undefined) {
    req.resume();
    sendJson(exchange, 404, { error: 'not_found', error_description: `no route for ${url.pathname}` });
    return;
  }
  const handler = route.methods[req.method ?? ''];
  if (handler === undefined) {
    req.resume();
    const allowed = Object.keys(route.methods).join(', ');
    sendJson(
      exchange,
      405,
      { error: 'method_not_allowed', error_description: `use ${allowed}` },
      { allow: allowed },
    );
    return;
  }
  const params = route.pattern.exec(url.pathname)!.slice(1);
  await handler(context, exchange, params);
}

/** Body of an injected failure; a 401 looks like the real thing so clients take their refresh path. */
function injectedErrorBody(
  status: number,
  path: string,
  headers: Record<string, string>,
): Record<string, unknown> {
  if (status === 401) {
    const tokenEndpoint = path === '/oauth2/token';
    headers['www-authenticate'] = tokenEndpoint
      ? 'Basic realm="banking-simulator"'
      : 'Bearer error="invalid_token"';
    return { error: tokenEndpoint ? 'invalid_client' : 'invalid_token', error_description: 'injected fault' };
  }
  if (status === 429) return { error: 'rate_limited', error_description: 'injected fault' };
  return { error: 'simulated_failure', error_description: 'injected fault', status };
}

/**
 * Waits `ms` (`Infinity`: until the client leaves or the simulator closes); false when the client
 * left or the simulator closed meanwhile (nothing left to answer).
 */
function delay(context: SimulatorContext, exchange: Exchange, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const connection: ActiveConnection = {
      kind: 'delay',
      shutdown: () => {
        finish(false);
        exchange.res.destroy();
      },
    };
    const timer = Number.isFinite(ms) ? setTimeout(() => finish(true), ms) : undefined;
    const onClose = () => finish(false);
    function finish(proceed: boolean): void {
      clearTimeout(timer);
      exchange.res.off('close', onClose);
      context.active.delete(connection);
      resolve(proceed);
    }
    exchange.res.on('close', onClose);
    context.active.add(connection);
  });
}

// --- Authentication -------------------------------------------------------------------------

function refuseToken(exchange: Exchange, description: string): void {
  exchange.req.resume();
  sendJson(
    exchange,
    401,
    { error: 'invalid_token', error_description: description },
    { 'www-authenticate': 'Bearer realm="banking-simulator", error="invalid_token"' },
  );
}

type ProgramHandler = (
  context: SimulatorContext,
  exchange: Exchange,
  feed: ProgramFeed,
  params: readonly string[],
  token: string,
) => void;

/** Wraps a handler so it runs only with a valid bearer token, scoped to the token's program. */
function authenticated(handler: ProgramHandler): Handler {
  return (context, exchange, params) => {
    const { req, url } = exchange;
    // RFC 6750 allows `access_token` in the query; the interface forbids it, so it is refused
    // even when a valid header comes with it.
    if (url.searchParams.has('access_token')) {
      refuseToken(exchange, 'access tokens must not be sent in the URL; use the Authorization header');
      return;
    }
    const match = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (match === null) {
      refuseToken(exchange, 'missing bearer token');
      return;
    }
    const check = context.tokens.check(match[1]!);
    if (!check.valid) {
      refuseToken(exchange, `token ${check.reason}`);
      return;
    }
    req.resume();
    const misbehaviour = context.misbehaviours.of(check.programId);
    if (misbehaviour !== undefined && misbehave(context, exchange, misbehaviour, 'bearer')) return;
    handler(context, exchange, context.feeds.get(check.programId)!, params, match[1]!);
  };
}

/**
 * What a misbehaving program's request gets instead of its answer; false when the misbehaviour
 * lets the request through (oversize pages: the poll itself answers too much).
 */
function misbehave(
  context: SimulatorContext,
  exchange: Exchange,
  misbehaviour: ProgramMisbehaviour,
  authentication: 'client' | 'bearer',
): boolean {
  switch (misbehaviour.kind) {
    case 'stall':
      void delay(context, exchange, Number.POSITIVE_INFINITY);
      return true;
    case 'error': {
      const headers: Record<string, string> =
        misbehaviour.retryAfter === undefined ? {} : { 'retry-after': misbehaviour.retryAfter };
      sendJson(
        exchange,
        misbehaviour.status,
        injectedErrorBody(misbehaviour.status, exchange.url.pathname, headers),
        headers,
      );
      return true;
    }
    case 'revoked':
      if (authentication === 'bearer') refuseToken(exchange, 'token revoked');
      else refuseClient(exchange);
      return true;
    case 'oversize-pages':
      return false;
  }
}

/** One answer for an unknown client, a wrong secret and a withdrawn access, so none can be probed. */
function refuseClient(exchange: Exchange): void {
  sendJson(
    exchange,
    401,
    { error: 'invalid_client', error_description: 'client authentication failed' },
    { 'www-authenticate': 'Basic realm="banking-simulator"' },
  );
}

function sameSecret(expected: string, given: string): boolean {
  // Hashing first gives equal lengths, which timingSafeEqual requires.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(expected), digest(given));
}

async function issueToken(context: SimulatorContext, exchange: Exchange): Promise<void> {
  const { req, url } = exchange;
  const invalidRequest = (description: string, status = 400) => {
    sendJson(exchange, status, { error: 'invalid_request', error_description: description });
  };
  if (url.searchParams.has('client_secret')) {
    req.resume();
    invalidRequest('client_secret must be sent in the request body, never in the URL');
    return;
  }
  if (mediaType(req.headers['content-type']) !== 'application/x-www-form-urlencoded') {
    req.resume();
    invalidRequest('Content-Type must be application/x-www-form-urlencoded');
    return;
  }
  const body = await readBody(req, MAX_TOKEN_BODY_BYTES);
  if (body === undefined) {
    sendJson(
      exchange,
      413,
      { error: 'invalid_request', error_description: 'request body too large' },
      {
        connection: 'close',
      },
    );
    return;
  }
  const form = new URLSearchParams(body);
  const missing = ['client_id', 'client_secret', 'grant_type'].filter((name) => !form.get(name));
  if (missing.length > 0) {
    invalidRequest(`missing form field(s): ${missing.join(', ')}`);
    return;
  }
  if (form.get('grant_type') !== 'client_credentials') {
    sendJson(exchange, 400, {
      error: 'unsupported_grant_type',
      error_description: 'only client_credentials is supported',
    });
    return;
  }
  const program = context.programsByClientId.get(form.get('client_id')!);
  if (program === undefined || !sameSecret(program.clientSecret, form.get('client_secret')!)) {
    refuseClient(exchange);
    return;
  }
  const misbehaviour = context.misbehaviours.of(program.programId);
  if (misbehaviour !== undefined && misbehave(context, exchange, misbehaviour, 'client')) return;
  sendJson(exchange, 200, {
    access_token: context.tokens.issue(program.programId),
    token_type: 'Bearer',
    expires_in: context.tokenLifetimeSeconds,
  });
}

// --- Events ---------------------------------------------------------------------------------

function invalidParameter(exchange: Exchange, parameter: string, expected: string): void {
  sendJson(exchange, 400, {
    error: 'invalid_request',
    error_description: `${parameter} must be ${expected}`,
    parameter,
  });
}

/** Reads a single-valued integer query parameter; undefined when absent, null after answering 400. */
function integerParameter(
  exchange: Exchange,
  name: string,
  min: number,
  max: number,
  expected: string,
): number | undefined | null {
  const values = exchange.url.searchParams.getAll(name);
  if (values.length === 0) return undefined;
  const parsed = values.length === 1 ? parseInteger(values[0]!, min, max) : { ok: false as const };
  if (!parsed.ok) {
    invalidParameter(exchange, name, expected);
    return null;
  }
  return parsed.value;
}

function pollEvents(context: SimulatorContext, exchange: Exchange, feed: ProgramFeed): void {
  const cursor = integerParameter(
    exchange,
    'last_sequence_number',
    0,
    Number.MAX_SAFE_INTEGER,
    'a non-negative integer',
  );
  if (cursor === null) return;
  const limit = integerParameter(
    exchange,
    'limit',
    1,
    MAX_POLL_LIMIT,
    `an integer from 1 to ${MAX_POLL_LIMIT}`,
  );
  if (limit === null) return;
  const from = cursor ?? 0;
  const askedLimit = limit ?? DEFAULT_POLL_LIMIT;
  const misbehaviour = context.misbehaviours.of(feed.programId);
  // A bank that ignores `limit` for this program: its pages hold what it likes.
  const pageLimit = misbehaviour?.kind === 'oversize-pages' ? misbehaviour.pageEvents : askedLimit;
  // Late fills and re-sends ride along with whatever the cursor selects, in sequence order.
  const answer = (events: RawEvent[]) =>
    answerPoll(
      context,
      exchange,
      [...feed.takeExtras(), ...events].sort((a, b) => a.sequence_number - b.sequence_number),
      from,
      askedLimit,
    );

  const available = feed.after(from, pageLimit);
  // Uniform in [0, max]: the interface promises only "random, at most one minute".
  const holdMs = Math.floor(context.holdRandom.next() * (context.maxPollHoldMs + 1));
  if (available.length > 0 || feed.hasExtras || holdMs === 0) {
    answer(available);
    return;
  }

  let settled = false;
  const connection: ActiveConnection = {
    kind: 'poll',
    shutdown: () => settle([]),
    drop: () => {
      release();
      exchange.res.destroy();
    },
  };
  const unsubscribe = feed.subscribe(() => {
    const appended = feed.after(from, pageLimit);
    if (appended.length > 0 || feed.hasExtras) settle(appended);
  });
  const timer = setTimeout(() => settle([]), holdMs);
  const release = () => {
    settled = true;
    clearTimeout(timer);
    unsubscribe();
    exchange.res.off('close', onClose);
    context.active.delete(connection);
  };
  // The client gave up (timeout, abort): drop the timer and listener, answer nobody.
  const onClose = () => {
    if (!settled) release();
  };
  function settle(events: RawEvent[]): void {
    if (settled) return;
    release();
    answer(events);
  }
  exchange.res.on('close', onClose);
  context.active.add(connection);
}

function answerPoll(
  context: SimulatorContext,
  exchange: Exchange,
  events: RawEvent[],
  cursor: number,
  limit: number,
): void {
  const lastSequenceNumber = events.at(-1)?.sequence_number ?? cursor;
  // Written from each event's wire text, so values a JSON round trip would change arrive as set.
  const text = `{"data":[${events.map(wireText).join(',')}],"last_sequence_number":${lastSequenceNumber},"limit":${limit}}`;
  const malformed = context.faults.takeMalformed();
  if (malformed === 'not-json') {
    // Declared as JSON but cut in half, like a truncated upstream answer: any proper prefix of a
    // JSON object fails to parse.
    sendRaw(exchange, 200, text.slice(0, Math.max(1, Math.floor(text.length / 2))));
  } else if (malformed === 'bad-schema') {
    // Valid JSON whose `data` is an object wrapping the events instead of an array.
    sendJson(exchange, 200, { data: { events }, last_sequence_number: lastSequenceNumber, limit });
  } else {
    sendRaw(exchange, 200, text);
  }
}

/** Starting point of a stream: `Last-Event-ID` (a reconnecting EventSource) wins over the query. */
function streamStart(exchange: Exchange): number | null {
  const header = exchange.req.headers['last-event-id'];
  const lastEventId = Array.isArray(header) ? header[0] : header;
  if (lastEventId !== undefined && lastEventId.trim() !== '') {
    const parsed = parseInteger(lastEventId.trim(), 0, Number.MAX_SAFE_INTEGER);
    if (!parsed.ok) {
      invalidParameter(exchange, 'Last-Event-ID', 'a non-negative integer');
      return null;
    }
    return parsed.value;
  }
  const cursor = integerParameter(
    exchange,
    'last_sequence_number',
    0,
    Number.MAX_SAFE_INTEGER,
    'a non-negative integer',
  );
  return cursor === null ? null : (cursor ?? 0);
}

function streamEvents(
  context: SimulatorContext,
  exchange: Exchange,
  feed: ProgramFeed,
  _params: readonly string[],
  token: string,
): void {
  const { req, res } = exchange;
  if (!accepts(req.headers.accept, 'text/event-stream')) {
    sendJson(exchange, 406, {
      error: 'not_acceptable',
      error_description: 'GET /events/stream requires Accept: text/event-stream',
    });
    return;
  }
  const start = streamStart(exchange);
  if (start === null) return;

  writeHead(exchange, 200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  res.flushHeaders();

  let sent = start;
  let waitingForDrain = false;
  let ended = false;
  // A token that expires or is revoked (all tokens, or this program's access) ends the stream:
  // the client must come back with a new one.
  const tokenStillValid = (): boolean => {
    const revoked = context.misbehaviours.of(feed.programId)?.kind === 'revoked';
    if (!revoked && context.tokens.check(token).valid) return true;
    connection.shutdown();
    return false;
  };
  // Writes everything after `sent` in batches, pausing when the socket buffer is full so a large
  // backlog does not pile up in memory.
  const pump = () => {
    while (!ended && !waitingForDrain && tokenStillValid()) {
      const batch = feed.after(sent, SSE_BATCH_SIZE);
      if (batch.length === 0) return;
      sent = batch.at(-1)!.sequence_number;
      if (!res.write(formatEventMessage(batch, context.streamShape))) {
        waitingForDrain = true;
        res.once('drain', () => {
          waitingForDrain = false;
          pump();
        });
      }
    }
  };
  const heartbeat = setInterval(() => {
    if (!waitingForDrain) res.write(formatComment('ping'));
  }, context.heartbeatMs);
  // A timer may fire a millisecond before the wall clock reaches the expiry: look again then,
  // or the stream would outlive its token (once in a few runs, the client was never cut off).
  const watchExpiry = (): NodeJS.Timeout =>
    setTimeout(
      () => {
        if (tokenStillValid()) expiry = watchExpiry();
      },
      Math.min(2 ** 31 - 1, Math.max(1, context.tokens.expiresAt(token) - context.now())),
    );
  let expiry = watchExpiry();
  const unsubscribe = feed.subscribe(pump);
  const release = () => {
    ended = true;
    clearInterval(heartbeat);
    clearTimeout(expiry);
    unsubscribe();
    res.off('close', release);
    context.active.delete(connection);
  };
  const connection: ActiveConnection = {
    kind: 'stream',
    shutdown: () => {
      release();
      res.end();
    },
    recheckToken: () => {
      tokenStillValid();
    },
    drop: () => {
      release();
      // Half a message, then the connection is gone: a client must not take the fragment for an event.
      res.write(`id: ${sent + 1}\ndata: [{"id":"`);
      res.destroy();
    },
  };
  res.on('close', release);
  context.active.add(connection);
  pump();
}

function eventNotFound(exchange: Exchange): void {
  sendJson(exchange, 404, { error: 'not_found', error_description: 'no such event in this program' });
}

function eventById(
  _context: SimulatorContext,
  exchange: Exchange,
  feed: ProgramFeed,
  params: readonly string[],
): void {
  let id: string;
  try {
    id = decodeURIComponent(params[0]!);
  } catch {
    eventNotFound(exchange);
    return;
  }
  const event = feed.byEventId(id);
  if (event === undefined) eventNotFound(exchange);
  else sendRaw(exchange, 200, wireText(event));
}

function eventBySequence(
  _context: SimulatorContext,
  exchange: Exchange,
  feed: ProgramFeed,
  params: readonly string[],
): void {
  const parsed = parseInteger(params[0]!, 0, Number.MAX_SAFE_INTEGER);
  if (!parsed.ok) {
    invalidParameter(exchange, 'sequence_number', 'a non-negative integer');
    return;
  }
  const event = feed.bySequence(parsed.value);
  if (event === undefined) eventNotFound(exchange);
  else sendRaw(exchange, 200, wireText(event));
}

/** Re-exported so the composition module can expose the record type without reaching deeper. */
export type { RecordedRequest };
