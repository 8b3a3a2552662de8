/**
 * A banking service on loopback whose events a test places at any sequence number, 2^53 − 1
 * included (the simulator keeps its log in an array indexed by number). It answers as the
 * interface documents: the token endpoint; `GET /events` after the cursor (`last_sequence_number`)
 * with at most `limit` events and `last_sequence_number` the page's highest, holding a poll that
 * finds nothing for `holdMs`; `GET /event/sequence/:n` and `GET /event/:id` (404 when none);
 * `GET /events/stream`, one message per event above the cursor, then one per event created while
 * it is open (`sequence_number` a string, the inner `data.type` the event type). Every request is
 * recorded (`ScriptedHttpServer.requests`); header values are never kept apart from that record.
 */
import type { ServerResponse } from 'node:http';
import {
  type RecordedRequest,
  type ScriptedHttpServer,
  startScriptedServer,
} from './scripted-http-server.ts';

/** An event as the bank holds it (the poll's shape). */
export interface BankEventRecord {
  readonly id: string;
  readonly program_id: string;
  readonly sequence_number: number;
  readonly created_dt: string;
  readonly type: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface ScriptedBank {
  readonly baseUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly programId: string;
  readonly requests: readonly RecordedRequest[];
  /** The `{base_url, client_id, client_secret}` of the function's secret. */
  readonly secret: string;
  /** Creates account-status events at these numbers (any order), announced to open streams. */
  add(...sequenceNumbers: number[]): BankEventRecord[];
  /** The cursors (`last_sequence_number`) of every poll and stream request, in order; `null` when absent. */
  cursors(path: '/events' | '/events/stream'): Array<number | null>;
  close(): Promise<void>;
}

export async function startScriptedBank(
  options: { holdMs?: number; seed?: number } = {},
): Promise<ScriptedBank> {
  const holdMs = options.holdMs ?? 300;
  const seed = options.seed ?? 1;
  const programId = `00000000-0000-4000-8000-${String(seed).padStart(12, '0')}`;
  const clientId = `client-${seed}`;
  const clientSecret = `secret-${seed}-scripted-bank`;
  const events: BankEventRecord[] = [];
  const waiting = new Set<() => void>();
  const streams = new Set<{ after: number | null; response: ServerResponse }>();

  const after = (cursor: number | null) =>
    events.filter((event) => cursor === null || event.sequence_number > cursor);

  const server: ScriptedHttpServer = await startScriptedServer(async (request, response) => {
    const url = new URL(request.url, 'http://bank.invalid');
    const cursor = numberParam(url, 'last_sequence_number');
    if (request.method === 'POST' && url.pathname === '/oauth2/token') {
      const form = new URLSearchParams(request.body);
      if (form.get('client_id') !== clientId || form.get('client_secret') !== clientSecret) {
        return send(response, 401, { error: 'invalid_client' });
      }
      return send(response, 200, { access_token: `token-${seed}-${server.requests.length}` });
    }
    if (!String(request.headers.authorization ?? '').startsWith('Bearer ')) return send(response, 401, {});
    if (url.pathname === '/events') {
      const limit = numberParam(url, 'limit') ?? 100;
      if (after(cursor).length === 0) await held(holdMs);
      const page = after(cursor).slice(0, limit);
      return send(response, 200, {
        data: page,
        last_sequence_number: page.at(-1)?.sequence_number ?? cursor ?? 0,
        limit,
      });
    }
    const bySequence = /^\/event\/sequence\/(\d+)$/.exec(url.pathname);
    if (bySequence !== null) {
      const found = events.find((event) => event.sequence_number === Number(bySequence[1]));
      return found === undefined ? send(response, 404, { error: 'not found' }) : send(response, 200, found);
    }
    const byId = /^\/event\/([^/]+)$/.exec(url.pathname);
    if (byId !== null) {
      const found = events.find((event) => event.id === decodeURIComponent(byId[1]!));
      return found === undefined ? send(response, 404, { error: 'not found' }) : send(response, 200, found);
    }
    if (url.pathname === '/events/stream') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      response.flushHeaders();
      const stream = { after: cursor, response };
      for (const event of after(cursor)) streamMessage(response, event);
      streams.add(stream);
      response.once('close', () => streams.delete(stream));
      return;
    }
    send(response, 404, { error: 'no such route' });
  });

  function held(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiting.add(done);
    });
  }

  return {
    baseUrl: server.baseUrl,
    clientId,
    clientSecret,
    programId,
    get requests() {
      return server.requests;
    },
    secret: JSON.stringify({ base_url: server.baseUrl, client_id: clientId, client_secret: clientSecret }),
    add(...sequenceNumbers) {
      const created = sequenceNumbers.map(
        (sequenceNumber): BankEventRecord => ({
          id: `${programId.slice(0, 8)}-${sequenceNumber}`,
          program_id: programId,
          sequence_number: sequenceNumber,
          created_dt: new Date().toISOString(),
          type: 'ACCOUNT_STATUS',
          data: { account_id: `acc-${sequenceNumber}`, blockchain_address: '0xabc', status: 'OPEN' },
        }),
      );
      events.push(...created);
      events.sort((a, b) => a.sequence_number - b.sequence_number);
      for (const event of created) {
        for (const stream of streams) {
          if (stream.after === null || event.sequence_number > stream.after)
            streamMessage(stream.response, event);
        }
      }
      for (const wake of [...waiting]) wake();
      return created;
    },
    cursors(path) {
      return server.requests
        .map((request) => new URL(request.url, 'http://bank.invalid'))
        .filter((url) => url.pathname === path)
        .map((url) => numberParam(url, 'last_sequence_number'));
    },
    async close() {
      for (const wake of [...waiting]) wake();
      for (const stream of streams) stream.response.destroy();
      await server.close();
    },
  };
}

function numberParam(url: URL, name: string): number | null {
  const value = url.searchParams.get(name);
  return value === null ? null : Number(value);
}

function send(response: ServerResponse, status: number, body: unknown): void {
  if (response.destroyed) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

/** One SSE message as the interface documents it: `id:` the number, the event with a string number and `data.type`. */
function streamMessage(response: ServerResponse, event: BankEventRecord): void {
  const streamed = {
    ...event,
    sequence_number: String(event.sequence_number),
    data: { ...event.data, type: event.type.toLowerCase() },
  };
  response.write(`id: ${event.sequence_number}\ndata: ${JSON.stringify([streamed])}\n\n`);
}
