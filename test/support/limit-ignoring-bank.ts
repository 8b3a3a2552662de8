/**
 * A banking service on loopback that ignores the page size asked for: every `GET /events` answers
 * with up to `pageEvents` events after the cursor, whatever `limit` said (65,000 events of about
 * 145 bytes make a page of about 9 MB). Events are made from their sequence number, so the bank
 * holds no list of them: `1..total`, all created before the first poll. It also issues tokens and
 * answers `GET /event/sequence/:n`. Records what each poll asked for and what it was given.
 *
 * @example
 * const bank = await LimitIgnoringBank.start({ total: 130_000, pageEvents: 65_000 });
 * secret = { base_url: bank.url, client_id: bank.clientId, client_secret: bank.clientSecret };
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LimitIgnoringBankOptions {
  /** Events in the feed: sequence numbers 1 to `total`. */
  readonly total: number;
  /** Events in every answer that has that many after the cursor, whatever `limit` asked for. */
  readonly pageEvents: number;
  /** How long an answer with no events waits before it goes (a long poll's hold). @default 200 */
  readonly emptyHoldMs?: number;
  /** Characters of a note in each event's `data`, to make events this much longer. @default 0 */
  readonly notePadding?: number;
}

/** One `GET /events` as the bank saw it. */
export interface BankPoll {
  /** The cursor asked after (`last_sequence_number`); `null` when none. */
  readonly after: number | null;
  /** The `limit` asked for; `null` when none. */
  readonly limit: number | null;
  /** Events in the answer. */
  readonly answered: number;
}

export const BANK_PROGRAM_ID = 'program-1';
const CREATED_DT = '2026-01-05T10:00:00.000Z';

/** The event with sequence number `n`, as the bank writes it (about 138 bytes, and `notePadding` more). */
export function bankEventText(n: number, notePadding = 0): string {
  const data = notePadding > 0 ? `{"note":"${'n'.repeat(notePadding)}"}` : '{}';
  return `{"id":"e${n}","program_id":"${BANK_PROGRAM_ID}","sequence_number":${n},"created_dt":"${CREATED_DT}","type":"ACCOUNT_STATUS","data":${data}}`;
}

export class LimitIgnoringBank {
  readonly url: string;
  readonly clientId = 'limit-ignoring-client';
  readonly clientSecret = 'limit-ignoring-secret-7f3a9c';
  readonly polls: BankPoll[] = [];
  readonly #server: Server;
  readonly #options: Required<LimitIgnoringBankOptions>;
  readonly #token = 'limit-ignoring-token-4b8e1d';

  private constructor(server: Server, options: Required<LimitIgnoringBankOptions>) {
    this.#server = server;
    this.#options = options;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async start(options: LimitIgnoringBankOptions): Promise<LimitIgnoringBank> {
    let bank: LimitIgnoringBank | undefined;
    const server = createServer((request, response) => bank?.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    bank = new LimitIgnoringBank(server, { emptyHoldMs: 200, notePadding: 0, ...options });
    return bank;
  }

  /** The secret value `{"base_url", "client_id", "client_secret"}` of this bank. */
  secretString(): string {
    return JSON.stringify({ base_url: this.url, client_id: this.clientId, client_secret: this.clientSecret });
  }

  /** The credentials this bank issued or accepts: none may appear in a log. */
  get secrets(): readonly string[] {
    return [this.clientSecret, this.#token];
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    // A client that stops reading a page it finds too large closes the connection: not an error here.
    response.on('error', () => {});
    request.resume();
    request.on('end', () => {
      const url = new URL(request.url ?? '/', this.url);
      if (request.method === 'POST' && url.pathname === '/oauth2/token') {
        this.#json(response, 200, { access_token: this.#token, token_type: 'Bearer', expires_in: 3600 });
        return;
      }
      if (request.headers.authorization !== `Bearer ${this.#token}`) {
        this.#json(response, 401, { error: 'invalid_token' });
        return;
      }
      if (request.method === 'GET' && url.pathname === '/events') {
        this.#poll(url, response);
        return;
      }
      const single = /^\/event\/sequence\/(\d+)$/.exec(url.pathname);
      if (request.method === 'GET' && single !== null) {
        const n = Number(single[1]);
        if (n >= 1 && n <= this.#options.total)
          this.#send(response, 200, bankEventText(n, this.#options.notePadding));
        else this.#json(response, 404, { error: 'not_found' });
        return;
      }
      this.#json(response, 404, { error: 'not_found' });
    });
  }

  #poll(url: URL, response: ServerResponse): void {
    const cursor = url.searchParams.get('last_sequence_number');
    const limit = url.searchParams.get('limit');
    const after = cursor === null ? null : Number(cursor);
    const from = (after ?? 0) + 1;
    const to = Math.min(this.#options.total, (after ?? 0) + this.#options.pageEvents);
    const answered = Math.max(0, to - from + 1);
    this.polls.push({ after, limit: limit === null ? null : Number(limit), answered });
    const write = () => {
      const texts: string[] = [];
      for (let n = from; n <= to; n += 1) texts.push(bankEventText(n, this.#options.notePadding));
      const last = answered > 0 ? to : (after ?? 0);
      this.#send(
        response,
        200,
        `{"data":[${texts.join(',')}],"last_sequence_number":${last},"limit":${limit ?? 100}}`,
      );
    };
    if (answered > 0) write();
    else setTimeout(write, this.#options.emptyHoldMs);
  }

  #json(response: ServerResponse, status: number, body: unknown): void {
    this.#send(response, status, JSON.stringify(body));
  }

  #send(response: ServerResponse, status: number, text: string): void {
    if (response.destroyed) return;
    response.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    response.end(text);
  }
}
