import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { BankingEventFeed } from '../../../../functions/adapters/banking-http/banking-event-feed.ts';
import { ClientCredentialsTokenProvider } from '../../../../functions/adapters/banking-http/token-cache.ts';
import {
  AuthenticationError,
  DeadlineExceededError,
  PageTooLargeError,
  PageUnreadableError,
  UpstreamHttpError,
} from '../../../../functions/core/errors.ts';
import type { BankingCredentials, CredentialsProvider } from '../../../../functions/core/ports.ts';
import {
  bare,
  closeAll,
  json,
  type Responder,
  startScriptedServer,
} from '../../../support/scripted-http-server.ts';
import { expectNoSecretShown } from '../../../support/secret-assertions.ts';
import { observeUndici, type UndiciObserver } from '../../../support/undici-observer.ts';

const CLIENT_SECRET = 'client-s3cret-value';

const TOKEN_PATH = '/oauth2/token';

/**
 * A loopback banking service: `/oauth2/token` hands out `<prefix>tok-1`, `<prefix>tok-2`, …; every
 * other request is recorded in `calls` and answered by the next scripted responder (the last one
 * repeats).
 */
async function startService(script: Responder[], prefix = '') {
  let issued = 0;
  const issueToken: Responder = (_request, response) => {
    issued += 1;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ access_token: `${prefix}tok-${issued}`, expires_in: 3600 }));
  };
  const server = await startScriptedServer(script, { routes: { [TOKEN_PATH]: issueToken } });
  return {
    baseUrl: server.baseUrl,
    get calls() {
      return server.requests.filter((request) => request.url !== TOKEN_PATH);
    },
    get tokenRequests() {
      return server.requests.filter((request) => request.url === TOKEN_PATH);
    },
    close: server.close,
  };
}

function event(sequence: number, overrides: Record<string, unknown> = {}) {
  return {
    id: `0b0c3f4e-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    program_id: '5f1f2a7c-1111-4222-8333-444455556666',
    sequence_number: sequence,
    created_dt: '2025-03-04T10:00:00.123456+00:00',
    type: 'ACCOUNT_STATUS',
    data: { account_id: 'a-1', blockchain_address: '0xabc', status: 'OPEN' },
    ...overrides,
  };
}

class FakeCredentials implements CredentialsProvider {
  current: BankingCredentials;
  next: BankingCredentials | undefined;
  refreshes = 0;
  constructor(baseUrl: string) {
    this.current = { baseUrl, clientId: 'client-1', clientSecret: CLIENT_SECRET };
  }
  async get() {
    return this.current;
  }
  async refresh() {
    this.refreshes += 1;
    if (this.next) this.current = this.next;
    return this.current;
  }
}

let undici: UndiciObserver;
beforeEach(() => {
  undici = observeUndici();
});
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  undici.stop();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await closeAll();
});

async function setup(
  script: Responder[],
  options: { clock?: () => number; maxBodyBytes?: number; maxPageBytes?: number; connections?: number } = {},
) {
  const service = await startService(script);
  const dispatcher = new Agent({ connections: options.connections ?? null });
  cleanups.push(() => dispatcher.destroy());
  const credentials = new FakeCredentials(service.baseUrl);
  const tokens = new ClientCredentialsTokenProvider({ credentials, dispatcher });
  const authRetries: string[] = [];
  const feed = new BankingEventFeed({
    entryRules: CLASSIC_BUS_ENTRY_RULES,
    credentials,
    tokens,
    dispatcher,
    clock: options.clock,
    maxBodyBytes: options.maxBodyBytes,
    maxPageBytes: options.maxPageBytes,
    onAuthRetry: (target) => authRetries.push(`${target.method} ${target.path}`),
  });
  return { service, credentials, tokens, feed, dispatcher, authRetries };
}

const live = () => new AbortController().signal;

/** No message, context or cause chain may show a token or the client secret. */
function expectNoSecrets(error: unknown) {
  expectNoSecretShown(error, [CLIENT_SECRET, /tok-\d/]);
}

async function pollError(feed: BankingEventFeed, after: number | null = 10): Promise<unknown> {
  const error = await feed.poll({ after, signal: live() }).catch((caught: unknown) => caught);
  expectNoSecrets(error);
  return error;
}

describe('BankingEventFeed.poll: the request', () => {
  it('asks without a cursor when there is no checkpoint', async () => {
    const { service, feed } = await setup([json(200, { data: [], last_sequence_number: 0, limit: 100 })]);

    await feed.poll({ after: null, signal: live() });

    expect(service.calls[0]?.url).toBe('/events?limit=100');
  });

  it('asks for events after the checkpoint with the configured parameter names', async () => {
    const service = await startService([json(200, { data: [] })]);
    const dispatcher = new Agent();
    cleanups.push(() => dispatcher.destroy());
    const credentials = new FakeCredentials(service.baseUrl);
    const feed = new BankingEventFeed({
      entryRules: CLASSIC_BUS_ENTRY_RULES,
      credentials,
      tokens: new ClientCredentialsTokenProvider({ credentials, dispatcher }),
      dispatcher,
      cursorParam: 'after',
      limitParam: 'page_size',
      limit: 25,
    });

    await feed.poll({ after: 41, signal: live() });

    expect(service.calls[0]?.url).toBe('/events?after=41&page_size=25');
  });

  it('uses last_sequence_number and limit by default', async () => {
    const { service, feed } = await setup([json(200, { data: [] })]);

    await feed.poll({ after: 41, signal: live() });

    expect(service.calls[0]?.url).toBe('/events?last_sequence_number=41&limit=100');
  });

  it('sends the bearer token in the Authorization header only', async () => {
    const { service, feed } = await setup([json(200, { data: [] })]);

    await feed.poll({ after: 1, signal: live() });

    expect(service.calls[0]?.method).toBe('GET');
    expect(service.calls[0]?.headers.authorization).toBe('Bearer tok-1');
    expect(service.calls[0]?.headers.accept).toBe('application/json');
    expect(service.calls[0]?.url).not.toContain('tok-1');
  });

  it('reuses the token across polls', async () => {
    const { service, feed } = await setup([json(200, { data: [] })]);

    await feed.poll({ after: 1, signal: live() });
    await feed.poll({ after: 1, signal: live() });

    expect(service.tokenRequests).toHaveLength(1);
    expect(service.calls.map((call) => call.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-1']);
  });

  it('rejects invalid options with the option name', () => {
    const credentials = new FakeCredentials('http://127.0.0.1:1');
    const tokens = new ClientCredentialsTokenProvider({ credentials });

    expect(
      () => new BankingEventFeed({ entryRules: CLASSIC_BUS_ENTRY_RULES, credentials, tokens, limit: 0 }),
    ).toThrow('limit must be a positive integer');
    expect(
      () =>
        new BankingEventFeed({
          entryRules: CLASSIC_BUS_ENTRY_RULES,
          credentials,
          tokens,
          cursorParam: 'a&b',
        }),
    ).toThrow('cursorParam');
  });
});

describe('BankingEventFeed.poll: answers', () => {
  it('returns the normalized events in sequence order and the upstream cursor', async () => {
    const body = {
      data: [event(12), event(11, { type: 'TRANSACTION' })],
      last_sequence_number: 12,
      limit: 100,
    };
    const { feed } = await setup([json(200, body)]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.events.map((e) => [e.sequence_number, e.type])).toEqual([
      [11, 'transaction'],
      [12, 'account_status'],
    ]);
    expect(page.lastSequenceNumber).toBe(12);
  });

  it.each([
    ['204', bare(204)],
    ['200 with an empty body', bare(200)],
    ['200 with empty data', json(200, { data: [], limit: 100 })],
  ])('gives an empty page for %s', async (_label, responder) => {
    const { feed } = await setup([responder]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page).toEqual({ events: [], lastSequenceNumber: null });
  });

  it.each([
    ['408', json(408, { error: 'timeout' })],
    ['504', json(504, '<html>gateway timeout</html>')],
  ])('marks the page of a %s as timed out: a gateway gave up, not "no events"', async (_label, responder) => {
    const { feed } = await setup([responder]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page).toEqual({ events: [], lastSequenceNumber: null, timedOut: true });
  });

  it("keeps the body's cursor on a 200 with no events", async () => {
    const { feed } = await setup([json(200, { data: [], last_sequence_number: 7, limit: 100 })]);

    await expect(feed.poll({ after: 7, signal: live() })).resolves.toEqual({
      events: [],
      lastSequenceNumber: 7,
    });
  });

  it('decodes a body sent in uneven chunks with multibyte characters cut in half', async () => {
    const note = 'Café ☕ – 😀 Zürich ¥€';
    const bytes = Buffer.from(
      JSON.stringify({ data: [event(11, { data: { note } })], last_sequence_number: 11 }),
    );
    const noteAt = bytes.indexOf(Buffer.from('Caf'));
    const cuts = [3, noteAt + 4, noteAt + 8, noteAt + 9, noteAt + 15, noteAt + 17, bytes.length];
    const { feed } = await setup([
      async (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        let start = 0;
        for (const end of cuts) {
          response.write(bytes.subarray(start, end));
          start = end;
          // The next piece leaves once the client has this one, so the cuts reach it as made.
          await expect.poll(() => undici.bodyBytes('/events')).toBe(end);
        }
        response.end();
      },
    ]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.events[0]?.data).toEqual({ note });
  });

  it('consumes every body it does not parse, so a one-connection pool never stalls', async () => {
    // Bodies larger than undici's 64 KiB buffer: one left unread would hold the only connection,
    // and the next request would wait for it until the test times out. The signals never fire, as
    // an abort would destroy the forgotten body and hide the leak.
    const large = 'x'.repeat(200_000);
    const { feed } = await setup(
      [
        json(504, large),
        json(401, large),
        json(200, { data: [] }),
        json(429, large),
        json(400, { error: 'invalid_request', padding: large }),
        json(200, { data: [event(11)] }),
      ],
      { connections: 1 },
    );
    const outcomes: string[] = [];

    for (let attempt = 0; attempt < 4; attempt += 1) {
      const outcome = await feed.poll({ after: 10, signal: live() }).then(
        (page) => `events:${page.events.length}`,
        (error: { name: string; status?: number }) => `${error.name}:${error.status}`,
      );
      outcomes.push(outcome);
    }

    expect(outcomes).toEqual(['events:0', 'events:0', 'UpstreamHttpError:429', 'UpstreamHttpError:400']);
    await expect(feed.poll({ after: 10, signal: live() })).resolves.toMatchObject({
      events: [{ sequence_number: 11 }],
    });
  }, 3000);
});

describe('BankingEventFeed.poll: 401', () => {
  it('re-reads the credentials, takes a new token and retries once', async () => {
    const { service, credentials, feed, authRetries } = await setup([
      json(401, { error: 'invalid_token' }),
      json(200, { data: [event(11)], last_sequence_number: 11 }),
    ]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.events).toHaveLength(1);
    expect(credentials.refreshes).toBe(1);
    expect(service.calls.map((call) => call.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
    expect(authRetries).toEqual(['GET /events']);
  });

  it('sends the retry, with its new token, to the base URL of a rotated secret', async () => {
    const { service: old, credentials, feed } = await setup([json(401, { error: 'invalid_token' })]);
    const rotated = await startService([json(200, { data: [] })], 'new-');
    credentials.next = { baseUrl: rotated.baseUrl, clientId: 'client-2', clientSecret: 'other-secret' };

    await feed.poll({ after: 1, signal: live() });

    expect(old.calls).toHaveLength(1);
    expect(rotated.calls.map((call) => call.headers.authorization)).toEqual(['Bearer new-tok-1']);
  });

  it('gives up with AuthenticationError when a fresh token is refused too', async () => {
    const { service, feed } = await setup([json(401, { error: 'invalid_token' })]);

    const error = await pollError(feed);

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('the banking service refused a freshly issued token');
    expect((error as AuthenticationError).context).toMatchObject({
      method: 'GET',
      path: '/events',
      status: 401,
    });
    expect(service.calls).toHaveLength(2);
    expect(service.tokenRequests).toHaveLength(2);
  });
});

describe('BankingEventFeed.poll: failures', () => {
  it('honours Retry-After in seconds on 429', async () => {
    const { feed } = await setup([json(429, { error: 'rate_limited' }, { 'retry-after': '3' })]);

    const error = await pollError(feed);

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 3000 });
    expect((error as Error).message).toContain('GET /events answered HTTP 429');
  });

  it('honours Retry-After as an HTTP date on 429', async () => {
    const now = Date.parse('2025-03-04T10:00:00Z');
    const { feed } = await setup([bare(429, { 'retry-after': new Date(now + 5000).toUTCString() })], {
      clock: () => now,
    });

    const error = await pollError(feed);

    expect(error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 5000 });
  });

  it('treats 503 as retryable, with and without Retry-After', async () => {
    const { feed } = await setup([bare(503, { 'retry-after': '2' }), bare(503, { 'retry-after': 'later' })]);

    const first = await pollError(feed);
    const second = await pollError(feed);

    expect(first).toMatchObject({ status: 503, retryable: true, retryAfterMs: 2000 });
    expect(second).toMatchObject({ status: 503, retryable: true, retryAfterMs: undefined });
  });

  it.each([500, 502])('treats %i as retryable without a delay', async (status) => {
    const { feed } = await setup([json(status, { error: 'boom' }, { 'retry-after': '9' })]);

    const error = await pollError(feed);

    expect(error).toMatchObject({ status, retryable: true, retryAfterMs: undefined });
  });

  it.each([
    [
      400,
      { error: 'invalid_request', error_description: 'unknown parameter' },
      'invalid_request (unknown parameter)',
    ],
    [403, { error: 'forbidden' }, 'forbidden'],
    [404, 'Not Found', 'body not shown (not a JSON object)'],
  ])('treats %i as not retryable and names the error', async (status, body, detail) => {
    const { feed } = await setup([json(status, body)]);

    const error = await pollError(feed);

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status, retryable: false });
    expect((error as Error).message).toBe(`GET /events answered HTTP ${status} (not retryable): ${detail}`);
    expect((error as UpstreamHttpError).context).toMatchObject({
      method: 'GET',
      path: '/events',
      status,
      detail,
    });
  });

  it('redacts the token and secret from an error body that echoes the request', async () => {
    const { feed } = await setup([
      (request, response) => {
        response.writeHead(400, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: `bad ${request.headers.authorization} ${CLIENT_SECRET}` }));
      },
    ]);

    const error = await pollError(feed);

    expect((error as Error).message).toContain('bad Bearer [redacted] [redacted]');
  });

  it('turns a reset connection into a retryable error without status', async () => {
    const { feed } = await setup([(_request, response) => void response.socket?.destroy()]);

    const error = await pollError(feed);

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ retryable: true, status: undefined });
    expect((error as Error).message).toMatch(/^GET \/events failed before a response: \w+ \(retryable\)$/);
  });

  it('turns a connection reset in the middle of a 200 body into a retryable error', async () => {
    const start = '{"data": [';
    const { feed } = await setup([
      async (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
        response.write(start);
        await expect.poll(() => undici.bodyBytes('/events')).toBe(start.length);
        response.socket?.destroy();
      },
    ]);

    const error = await pollError(feed);

    expect(undici.responses('/events')).toBe(1);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ retryable: true, status: undefined });
  });

  it('turns a refused connection into a retryable error', async () => {
    const { service, feed, tokens } = await setup([json(200, { data: [] })]);
    await tokens.getToken(live());
    await service.close();

    const error = await pollError(feed);

    expect(error).toMatchObject({ retryable: true, status: undefined });
    expect((error as UpstreamHttpError).context.errorCode).toMatch(
      /^(ECONNREFUSED|UND_ERR_SOCKET|ECONNRESET)$/,
    );
  });

  it('rejects a 200 that is not JSON as an unreadable page, naming the status, not a network failure', async () => {
    const { feed } = await setup([json(200, '<html>maintenance</html>')]);

    const error = await pollError(feed);

    expect(error).toBeInstanceOf(PageUnreadableError);
    expect(error).toMatchObject({ code: 'PAGE_UNREADABLE', context: { status: 200 } });
    expect((error as Error).message).toBe('GET /events (HTTP 200): body is not JSON');
  });

  it('quarantines an event that is not JSON, keeping the rest of the page, and placing it after the cursor', async () => {
    const broken = JSON.stringify(event(12)).replace('"OPEN"', 'OPEN');
    const text = `{"data":[${JSON.stringify(event(11))},${broken},${JSON.stringify(event(13))}]}`;
    const { feed } = await setup([json(200, text)]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.events.map((e) => e.type)).toEqual(['invalid_event', 'account_status', 'account_status']);
    expect(JSON.parse(page.events[0]!.detail)).toMatchObject({ raw: broken, raw_is_text: true });
  });

  it('rejects a 200 that is not UTF-8 as an unreadable page', async () => {
    const { feed } = await setup([
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]));
      },
    ]);

    const error = await pollError(feed);

    expect(error).toBeInstanceOf(PageUnreadableError);
    expect((error as Error).message).toBe('GET /events (HTTP 200): body is not valid UTF-8');
  });

  it('quarantines an event nested 100,000 arrays deep, keeping the events around it', async () => {
    const deep = { ...event(12), data: { deep: 0 } };
    const text = JSON.stringify({ data: [event(11), deep, event(13)] }).replace(
      '"deep":0',
      `"deep":${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    );
    const { feed } = await setup([json(200, text)]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.events.map((e) => [e.sequence_number, e.type])).toEqual([
      [11, 'account_status'],
      [12, 'invalid_event'],
      [13, 'account_status'],
    ]);
    expect(page.events[1]!.invalid?.message).toMatch(/data\[1\] nests arrays and objects 100002 levels deep/);
  });

  it('quarantines an event that violates the schema, naming the field, and keeps the rest of the page', async () => {
    const { program_id: _dropped, ...broken } = event(11);
    const { feed } = await setup([json(200, { data: [event(12), broken] })]);

    const page = await feed.poll({ after: 1, signal: live() });

    expect(page.events.map((e) => [e.sequence_number, e.type])).toEqual([
      [11, 'invalid_event'],
      [12, 'account_status'],
    ]);
    expect(page.events[0]!.invalid?.message).toContain('data[1].program_id must be a non-empty string');
  });

  it('refuses, by name, a page whose first event does not end within what is read of a page at once', async () => {
    const { feed } = await setup([json(200, { data: [event(11), event(12)] })], { maxPageBytes: 100 });

    const error = await pollError(feed);

    expect(error).toBeInstanceOf(PageTooLargeError);
    expect(error).toMatchObject({ code: 'PAGE_TOO_LARGE', context: { bytesRead: 100 } });
  });
});

describe('BankingEventFeed.poll: pages larger than asked for', () => {
  const body = (events: unknown[]) => JSON.stringify({ data: events, last_sequence_number: 13, limit: 2 });

  it('says how many events it asked for beside a page that has events', async () => {
    const { feed } = await setup([json(200, body([event(11), event(12), event(13)]))]);

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.asked).toBe(100);
    expect(page.cut).toBeUndefined();
    expect(page.events).toHaveLength(3);
  });

  it('reads a page longer than maxPageBytes in parts: the events complete in its first bytes', async () => {
    const text = body([event(11), event(12), event(13)]);
    // Room for the envelope and two events, and part of the third.
    const maxPageBytes = text.indexOf(JSON.stringify(event(13))) + 40;
    const { feed } = await setup([json(200, text)], { maxPageBytes });

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.events.map((e) => e.sequence_number)).toEqual([11, 12]);
    expect(page.cut).toEqual({ bytesRead: maxPageBytes });
    // Published as the bank wrote them, like the events of a page read whole.
    expect(page.events[1]!.detail).toBe(JSON.stringify({ ...event(12), type: 'account_status' }));
  });

  it('reads a page cut in the middle of a multibyte character up to the character before it', async () => {
    const note = `${'é'.repeat(30)}`;
    const text = body([event(11), event(12, { data: { note } })]);
    // The cut falls inside the second byte of an 'é' of event 12: event 11 is the page.
    const maxPageBytes = Buffer.byteLength(text.slice(0, text.indexOf('é'))) + 1;
    const { feed } = await setup([json(200, text)], { maxPageBytes });

    const page = await feed.poll({ after: 10, signal: live() });

    expect(page.events.map((e) => e.sequence_number)).toEqual([11]);
  });

  it.each([
    ['read whole', undefined],
    ['read in parts', 'cut'],
  ] as const)(
    'parses a page %s only once its program has its turn on the shared thread',
    async (_label, cut) => {
      const text = body([event(11), event(12), event(13)]);
      const maxPageBytes = cut === undefined ? undefined : text.indexOf(JSON.stringify(event(13))) + 40;
      const { feed } = await setup([json(200, text)], { maxPageBytes });
      let asked = 0;
      let release: (() => void) | undefined;
      const cpuTurn = () => {
        asked += 1;
        return new Promise<void>((resolve) => {
          release = resolve;
        });
      };
      let parsed = false;

      const polled = feed.poll({ after: 10, signal: live(), cpuTurn }).then((page) => {
        parsed = true;
        return page;
      });
      while (release === undefined && !parsed) await new Promise((resolve) => setTimeout(resolve, 5));
      await new Promise((resolve) => setImmediate(resolve));

      // The answer is read; its parse waits for the turn.
      expect(parsed).toBe(false);
      release?.();
      const page = await polled;
      expect(page.events.map((e) => e.sequence_number)).toEqual(cut === undefined ? [11, 12, 13] : [11, 12]);
      expect(asked).toBe(1);
    },
  );

  it('still refuses a single-event lookup larger than maxBodyBytes', async () => {
    const { feed } = await setup([json(200, event(11))], { maxBodyBytes: 100 });

    await expect(feed.fetchEventBySequence(11, live())).rejects.toThrow(
      'GET /event/sequence/11 (HTTP 200): body is larger than 100 bytes',
    );
  });
});

describe('BankingEventFeed.poll: deadline', () => {
  it('aborts a held long poll with DeadlineExceededError, without waiting for an answer', async () => {
    let closedByClient = false;
    const { service, feed } = await setup([
      (_request, response) => {
        response.on('close', () => {
          closedByClient = true;
        });
      },
    ]);
    const controller = new AbortController();

    const pending = feed.poll({ after: 1, signal: controller.signal }).catch((caught: unknown) => caught);
    await expect.poll(() => service.calls.length).toBe(1);
    controller.abort();
    const error = await pending;

    // The service never answers: only the abort can have settled the poll.
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect((error as DeadlineExceededError).context).toMatchObject({ method: 'GET', path: '/events' });
    await expect.poll(() => closedByClient).toBe(true);
  });

  it('aborts while the body is still arriving', async () => {
    const start = '{"data": [';
    const { feed } = await setup([
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(start);
      },
    ]);
    const controller = new AbortController();

    const pending = feed.poll({ after: 1, signal: controller.signal }).catch((caught: unknown) => caught);
    await expect.poll(() => undici.bodyBytes('/events')).toBe(start.length);
    controller.abort();

    await expect(pending).resolves.toBeInstanceOf(DeadlineExceededError);
  });

  it("passes the cycle's own DeadlineExceededError through", async () => {
    const { service, feed } = await setup([() => undefined]);
    const reason = new DeadlineExceededError('budget spent');
    const controller = new AbortController();

    const pending = feed.poll({ after: 1, signal: controller.signal }).catch((caught: unknown) => caught);
    await expect.poll(() => service.calls.length).toBe(1);
    controller.abort(reason);

    await expect(pending).resolves.toBe(reason);
  });

  it('aborts even while queued behind a busy connection', async () => {
    // undici only acts on a signal once the request has a connection; the adapter must not wait.
    const { service, feed, dispatcher } = await setup([() => undefined], { connections: 1 });
    const holder = new AbortController();
    const queued = new AbortController();
    cleanups.push(async () => holder.abort());

    const held = feed.poll({ after: 1, signal: holder.signal }).catch((caught: unknown) => caught);
    await expect.poll(() => service.calls.length).toBe(1);
    const pending = feed.poll({ after: 1, signal: queued.signal }).catch((caught: unknown) => caught);
    await expect.poll(() => dispatcher.stats[service.baseUrl]?.pending).toBe(1);
    queued.abort();
    const error = await pending;

    // The only connection is still held: the queued poll settled without ever being sent.
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(service.calls).toHaveLength(1);
    holder.abort();
    await expect(held).resolves.toBeInstanceOf(DeadlineExceededError);
  });

  it('sends nothing once the deadline has passed', async () => {
    const { service, feed } = await setup([json(200, { data: [] })]);

    await expect(feed.poll({ after: 1, signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
    expect(service.calls).toHaveLength(0);
    expect(service.tokenRequests).toHaveLength(0);
  });
});

describe('BankingEventFeed single-event lookups', () => {
  it('fetches an event by sequence number', async () => {
    const { service, feed } = await setup([json(200, event(42))]);

    const found = await feed.fetchEventBySequence(42, live());

    expect(service.calls[0]?.url).toBe('/event/sequence/42');
    expect(service.calls[0]?.headers.authorization).toBe('Bearer tok-1');
    expect(found).toMatchObject({ sequence_number: 42, type: 'account_status' });
  });

  it('accepts an event wrapped in data', async () => {
    const { feed } = await setup([json(200, { data: event(42) })]);

    await expect(feed.fetchEventBySequence(42, live())).resolves.toMatchObject({ sequence_number: 42 });
  });

  it('gives null on 404', async () => {
    const { feed } = await setup([json(404, { error: 'not_found' })]);

    await expect(feed.fetchEventBySequence(42, live())).resolves.toBeNull();
  });

  it('rejects an answer for another sequence number', async () => {
    const { feed } = await setup([json(200, event(43))]);

    await expect(feed.fetchEventBySequence(42, live())).rejects.toThrow('returned sequence 43 instead');
  });

  it('quarantines an event that fails validation, at its own number or, without one, at the number asked for', async () => {
    const { feed } = await setup([
      json(200, { ...event(42), type: 7 }),
      json(200, { ...event(42), sequence_number: 'forty-two' }),
    ]);

    const typed = await feed.fetchEventBySequence(42, live());
    const unnumbered = await feed.fetchEventBySequence(42, live());

    expect(typed).toMatchObject({
      type: 'invalid_event',
      sequence_number: 42,
      invalid: { sequenceNumber: 42 },
    });
    expect(unnumbered).toMatchObject({
      type: 'invalid_event',
      sequence_number: 42,
      invalid: { sequenceNumber: null },
    });
    expect(JSON.parse(unnumbered!.detail)).toMatchObject({
      sequence_number: null,
      position: 42,
      raw: { sequence_number: 'forty-two' },
    });
  });

  it('quarantines an event the bus would refuse, found by a lookup, with its reason', async () => {
    const { feed } = await setup([json(200, { ...event(42), type: 'T'.repeat(129) })]);

    const found = await feed.fetchEventBySequence(42, live());

    expect(found).toMatchObject({ type: 'invalid_event', sequence_number: 42 });
    expect(JSON.parse(found!.detail).error).toMatchObject({
      code: 'EVENT_UNPUBLISHABLE',
      field: 'event.type',
    });
  });

  it('shares the 401 handling with poll', async () => {
    const { credentials, feed } = await setup([json(401, {}), json(200, event(42))]);

    await expect(feed.fetchEventBySequence(42, live())).resolves.toMatchObject({ sequence_number: 42 });
    expect(credentials.refreshes).toBe(1);
  });

  it('fetches an event by id, encoding it in the path', async () => {
    const wanted = event(7, { id: 'a/b c' });
    const { service, feed } = await setup([json(200, wanted)]);

    const found = await feed.fetchEventById('a/b c', live());

    expect(service.calls[0]?.url).toBe('/event/a%2Fb%20c');
    expect(found?.id).toBe('a/b c');
  });

  it('gives null for an unknown id and maps other statuses like poll', async () => {
    const { feed } = await setup([bare(404), bare(503, { 'retry-after': '1' })]);

    await expect(feed.fetchEventById('missing', live())).resolves.toBeNull();
    await expect(feed.fetchEventById('missing', live())).rejects.toMatchObject({
      status: 503,
      retryable: true,
      retryAfterMs: 1000,
      context: { path: '/event/missing' },
    });
  });
});
