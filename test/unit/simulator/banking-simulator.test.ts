import { afterEach, describe, expect, it } from 'vitest';
import {
  type RawEvent,
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from '../../../functions/simulator/banking-simulator.ts';

const running: RunningSimulator[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((simulator) => simulator.close()));
});

/** Short holds by default so a forgotten poll never slows the suite. */
async function start(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const simulator = await startSimulator({ seed: 1, maxPollHoldMs: 50, ...options });
  running.push(simulator);
  return simulator;
}

function tokenRequest(simulator: RunningSimulator, fields: Record<string, string>, init: RequestInit = {}) {
  return fetch(`${simulator.url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams(fields).toString(),
    ...init,
  });
}

async function tokenFor(simulator: RunningSimulator, programIndex = 0): Promise<string> {
  const program = simulator.programs[programIndex]!;
  const response = await tokenRequest(simulator, {
    client_id: program.clientId,
    client_secret: program.clientSecret,
    grant_type: 'client_credentials',
  });
  expect(response.status).toBe(200);
  const body = (await response.json()) as { access_token: string };
  return body.access_token;
}

function get(
  simulator: RunningSimulator,
  path: string,
  token?: string,
  headers: Record<string, string> = {},
) {
  return fetch(`${simulator.url}${path}`, {
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...headers },
  });
}

interface PollBody {
  data: RawEvent[];
  last_sequence_number: number;
  limit: number;
}

async function poll(simulator: RunningSimulator, token: string, query = ''): Promise<PollBody> {
  const response = await get(simulator, `/events${query}`, token);
  expect(response.status).toBe(200);
  return (await response.json()) as PollBody;
}

async function waitFor(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

interface SseMessage {
  id: string | undefined;
  data: string;
}

/** A minimal SSE reader over fetch: collects messages and comments until a condition holds. */
async function openStream(
  simulator: RunningSimulator,
  token: string,
  query = '',
  headers: Record<string, string> = {},
) {
  const controller = new AbortController();
  const response = await fetch(`${simulator.url}/events/stream${query}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const messages: SseMessage[] = [];
  const comments: string[] = [];
  let buffer = '';
  let ended = false;
  const parseBlocks = () => {
    let boundary = buffer.indexOf('\n\n');
    while (boundary !== -1) {
      const block = buffer.slice(0, boundary);
      buffer = buffer.slice(boundary + 2);
      let id: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (data.length > 0) messages.push({ id, data: data.join('\n') });
      boundary = buffer.indexOf('\n\n');
    }
  };
  const until = async (condition: () => boolean, timeoutMs = 2_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (ended) throw new Error('stream ended before the condition held');
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error('stream condition not met in time')),
          deadline - Date.now(),
        );
      });
      try {
        const chunk = await Promise.race([reader.read(), timeout]);
        if (chunk.done) ended = true;
        else buffer += decoder.decode(chunk.value, { stream: true });
        parseBlocks();
      } finally {
        clearTimeout(timer);
      }
    }
  };
  const events = () =>
    messages.flatMap((message) => JSON.parse(message.data) as Array<Record<string, unknown>>);
  return {
    response,
    messages,
    comments,
    events,
    until,
    ended: () => ended,
    close: () => controller.abort(),
  };
}

describe('token endpoint', () => {
  it('issues an opaque bearer token with the configured lifetime', async () => {
    const simulator = await start({ tokenLifetimeSeconds: 120 });

    const response = await tokenRequest(simulator, {
      client_id: 'local-client',
      client_secret: 'local-secret',
      grant_type: 'client_credentials',
    });

    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 120 });
    expect(body.access_token).toMatch(/^[\w-]{20,}$/);
    expect(simulator.stats.tokensIssued).toBe(1);
  });

  it('refuses a wrong secret and an unknown client alike with 401 invalid_client', async () => {
    const simulator = await start();

    const wrongSecret = await tokenRequest(simulator, {
      client_id: 'local-client',
      client_secret: 'nope',
      grant_type: 'client_credentials',
    });
    const unknownClient = await tokenRequest(simulator, {
      client_id: 'stranger',
      client_secret: 'local-secret',
      grant_type: 'client_credentials',
    });

    for (const response of [wrongSecret, unknownClient]) {
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({
        error: 'invalid_client',
        error_description: expect.any(String),
      });
    }
    expect(simulator.stats.tokensIssued).toBe(0);
  });

  it('answers 400 for a wrong grant, a missing field or a wrong content type', async () => {
    const simulator = await start();
    const credentials = { client_id: 'local-client', client_secret: 'local-secret' };

    const wrongGrant = await tokenRequest(simulator, { ...credentials, grant_type: 'password' });
    const missingSecret = await tokenRequest(simulator, {
      client_id: 'local-client',
      grant_type: 'client_credentials',
    });
    const json = await fetch(`${simulator.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...credentials, grant_type: 'client_credentials' }),
    });

    expect(wrongGrant.status).toBe(400);
    expect(await wrongGrant.json()).toMatchObject({ error: 'unsupported_grant_type' });
    expect(missingSecret.status).toBe(400);
    expect(await missingSecret.json()).toMatchObject({ error: 'invalid_request' });
    expect(json.status).toBe(400);
    expect(await json.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('refuses credentials in the query string and never records the secret', async () => {
    const simulator = await start();

    const response = await fetch(
      `${simulator.url}/oauth2/token?client_id=local-client&client_secret=local-secret`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&client_id=local-client&client_secret=local-secret',
      },
    );

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
    expect(simulator.requests[0]?.query).toEqual({ client_id: 'local-client', client_secret: '[redacted]' });
  });

  it('lets a token expire after tokenLifetimeSeconds on the simulator clock', async () => {
    let now = Date.parse('2026-03-01T00:00:00Z');
    const simulator = await start({ tokenLifetimeSeconds: 60, now: () => now });
    const token = await tokenFor(simulator);
    now += 59_999;
    const beforeExpiry = await get(simulator, '/event/sequence/1', token);

    now += 1;
    const atExpiry = await get(simulator, '/events', token);

    expect(beforeExpiry.status).toBe(404);
    expect(atExpiry.status).toBe(401);
    expect(atExpiry.headers.get('www-authenticate')).toContain('invalid_token');
    expect(await atExpiry.json()).toMatchObject({ error: 'invalid_token' });
  });

  it('expires real-time tokens too (fractional lifetime)', async () => {
    const simulator = await start({ tokenLifetimeSeconds: 0.05 });
    const token = await tokenFor(simulator);

    // Real time has to pass the 50 ms lifetime: the expiry itself is what is waited for.
    await new Promise((resolve) => setTimeout(resolve, 80));

    expect((await get(simulator, '/events', token)).status).toBe(401);
  });
});

describe('bearer authentication', () => {
  it('refuses a missing, unknown or query-string token with 401 invalid_token', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);

    const missing = await get(simulator, '/events');
    const unknown = await get(simulator, '/events', 'not-a-token');
    const inQuery = await get(simulator, `/events?access_token=${token}`, token);

    for (const response of [missing, unknown, inQuery]) {
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: 'invalid_token' });
    }
    expect(JSON.stringify(simulator.requests)).not.toContain(token);
  });

  it('revokeTokens invalidates every issued token while new ones work', async () => {
    const simulator = await start();
    const old = await tokenFor(simulator);

    simulator.faults.revokeTokens();
    const fresh = await tokenFor(simulator);

    expect((await get(simulator, '/events', old)).status).toBe(401);
    expect((await get(simulator, '/events', fresh)).status).toBe(200);
  });
});

describe('routing', () => {
  it('answers 404 JSON for an unknown path and 405 for a wrong method', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);

    const unknown = await get(simulator, '/profiles', token);
    const wrongMethod = await fetch(`${simulator.url}/events`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });

    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'not_found' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
  });
});

describe('program scoping', () => {
  it('shows each token only its own program, with sequence numbers from 1 per program', async () => {
    const simulator = await start({ programs: [{}, { clientId: 'second', clientSecret: 'second-secret' }] });
    const [first, second] = simulator.programs;
    simulator.generate(3, { programId: first!.programId });
    const secondEvents = simulator.generate(2, { programId: second!.programId });

    const firstPage = await poll(simulator, await tokenFor(simulator, 0));
    const secondToken = await tokenFor(simulator, 1);
    const secondPage = await poll(simulator, secondToken);
    const crossLookup = await get(
      simulator,
      `/event/${simulator.events(first!.programId)[0]!.id}`,
      secondToken,
    );

    expect(firstPage.data.map((event) => [event.program_id, event.sequence_number])).toEqual([
      [first!.programId, 1],
      [first!.programId, 2],
      [first!.programId, 3],
    ]);
    expect(secondPage.data).toEqual(secondEvents);
    expect(secondPage.data.map((event) => event.sequence_number)).toEqual([1, 2]);
    expect(crossLookup.status).toBe(404);
  });
});

describe('GET /events', () => {
  it('returns the events after the cursor, at most limit, and the highest sequence returned', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(10);

    const page = await poll(simulator, token, '?last_sequence_number=3&limit=4');
    const everything = await poll(simulator, token);

    expect(page.data.map((event) => event.sequence_number)).toEqual([4, 5, 6, 7]);
    expect(page).toMatchObject({ last_sequence_number: 7, limit: 4 });
    expect(everything.data).toHaveLength(10);
    expect(everything).toMatchObject({ last_sequence_number: 10, limit: 100 });
    expect(everything.data[0]).toEqual(simulator.events()[0]);
  });

  it.each([
    ['last_sequence_number=-1', 'last_sequence_number'],
    ['last_sequence_number=abc', 'last_sequence_number'],
    ['last_sequence_number=1.5', 'last_sequence_number'],
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=ten', 'limit'],
  ])('answers 400 naming the parameter for %s', async (query, parameter) => {
    const simulator = await start();
    const token = await tokenFor(simulator);

    const response = await get(simulator, `/events?${query}`, token);

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request', parameter });
  });

  it('holds an empty poll until an event is appended, then answers with it', async () => {
    const simulator = await start({ maxPollHoldMs: 10_000, seed: 3 });
    const token = await tokenFor(simulator);
    simulator.generate(2);

    // The hold outlasts the test's timeout: only the append can answer this poll in time.
    const pending = poll(simulator, token, '?last_sequence_number=2');
    await waitFor(() => simulator.stats.heldPolls === 1);
    const appended = simulator.append({ type: 'ACCOUNT_STATUS', data: { status: 'PENDING' } });
    const page = await pending;

    expect(page.data).toEqual([appended]);
    expect(page.last_sequence_number).toBe(3);
    expect(appended.sequence_number).toBe(3);
    expect(simulator.stats.heldPolls).toBe(0);
  });

  it('answers an empty page with the cursor (or 0) when the hold times out', async () => {
    const simulator = await start({ maxPollHoldMs: 30 });
    const token = await tokenFor(simulator);

    const withoutCursor = await poll(simulator, token);
    const withCursor = await poll(simulator, token, '?last_sequence_number=42&limit=5');

    expect(withoutCursor).toEqual({ data: [], last_sequence_number: 0, limit: 100 });
    expect(withCursor).toEqual({ data: [], last_sequence_number: 42, limit: 5 });
  });

  it('releases a held poll when the client disconnects', async () => {
    const simulator = await start({ maxPollHoldMs: 10_000 });
    const token = await tokenFor(simulator);
    const controller = new AbortController();

    const pending = fetch(`${simulator.url}/events`, {
      headers: { authorization: `Bearer ${token}` },
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await waitFor(() => simulator.stats.heldPolls === 1);
    controller.abort();
    await pending;

    await waitFor(() => simulator.stats.heldPolls === 0);
    expect(simulator.requests.at(-1)).toMatchObject({ path: '/events', status: 0 });
  });

  it('answers held polls with an empty page on close()', async () => {
    // The hold outlasts the test's timeout: only close() can answer this poll in time.
    const simulator = await start({ maxPollHoldMs: 600_000 });
    const token = await tokenFor(simulator);
    const pending = poll(simulator, token, '?last_sequence_number=0');
    await waitFor(() => simulator.stats.heldPolls === 1);

    await simulator.close();

    expect((await pending).data).toEqual([]);
  });
});

describe('GET /events/stream', () => {
  it('requires Accept: text/event-stream', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);

    const response = await get(simulator, '/events/stream', token, { accept: 'application/json' });

    expect(response.status).toBe(406);
  });

  it('sends the backlog in batches of 50 with string sequence numbers and data.type, then live events', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(120);

    const stream = await openStream(simulator, token);
    await stream.until(() => stream.messages.length === 3);
    const live = simulator.append({ type: 'CARD_STATUS', data: { card_id: 'c-1', status: 'LOCKED' } });
    await stream.until(() => stream.messages.length === 4);
    stream.close();

    expect(stream.response.headers.get('content-type')).toContain('text/event-stream');
    expect(stream.messages.map((message) => message.id)).toEqual(['50', '100', '120', '121']);
    const events = stream.events();
    expect(events.map((event) => event.sequence_number)).toEqual(
      Array.from({ length: 121 }, (_, index) => String(index + 1)),
    );
    for (const [index, event] of events.entries()) {
      const original = simulator.events()[index]!;
      expect(event.data).toEqual({ ...original.data, type: original.type.toLowerCase() });
      expect(event.type).toBe(original.type);
    }
    expect(events.at(-1)).toMatchObject({ id: live.id, data: { type: 'card_status' } });
  });

  it('resumes after Last-Event-ID, which wins over the query parameter', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(8);

    const byHeader = await openStream(simulator, token, '?last_sequence_number=2', { 'last-event-id': '6' });
    const byQuery = await openStream(simulator, token, '?last_sequence_number=5');
    await byHeader.until(() => byHeader.messages.length === 1);
    await byQuery.until(() => byQuery.messages.length === 1);
    byHeader.close();
    byQuery.close();

    expect(byHeader.events().map((event) => event.sequence_number)).toEqual(['7', '8']);
    expect(byHeader.messages[0]!.id).toBe('8');
    expect(byQuery.events().map((event) => event.sequence_number)).toEqual(['6', '7', '8']);
  });

  it('answers 400 for a non-integer Last-Event-ID', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);

    const response = await get(simulator, '/events/stream', token, {
      accept: 'text/event-stream',
      'last-event-id': 'abc',
    });

    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ parameter: 'Last-Event-ID' });
  });

  it("keeps a transaction's own data.type in the type-preserved shape, and data given as text as written", async () => {
    const simulator = await start({ streamShape: 'type-preserved' });
    const token = await tokenFor(simulator);
    const dataText = '{"transaction_id":"tx-1","amount":9007199254740993,"type":"card"}';
    simulator.append({ type: 'TRANSACTION', dataText });
    simulator.append({ type: 'ACCOUNT_STATUS', dataText: '{"account_id":"a-1","limit":12.50}' });

    const stream = await openStream(simulator, token);
    await stream.until(() => stream.messages.length === 1);
    stream.close();

    expect(stream.messages[0]!.data).toContain(`"data":${dataText}}`);
    expect(stream.messages[0]!.data).toContain(
      '"data":{"account_id":"a-1","limit":12.50,"type":"account_status"}}',
    );
  });

  it('ends a stream whose token is revoked or has expired, before sending anything more', async () => {
    let now = Date.parse('2026-11-22T00:00:00Z');
    const simulator = await start({ now: () => now, tokenLifetimeSeconds: 60 });
    const revoked = await openStream(simulator, await tokenFor(simulator));
    await waitFor(() => simulator.stats.openStreams === 1);

    simulator.faults.revokeTokens();
    await revoked.until(() => false).catch(() => undefined);
    const expired = await openStream(simulator, await tokenFor(simulator));
    await waitFor(() => simulator.stats.openStreams === 1);
    now += 61_000;
    simulator.generate(1);
    await expired.until(() => false).catch(() => undefined);

    expect(revoked.ended()).toBe(true);
    expect(expired.ended()).toBe(true);
    expect(expired.messages).toEqual([]);
    expect(simulator.stats.openStreams).toBe(0);
  });

  it('cuts streams in the middle of a message and held polls without an answer on dropConnections()', async () => {
    const simulator = await start({ maxPollHoldMs: 60_000 });
    const token = await tokenFor(simulator);
    const stream = await openStream(simulator, token);
    const held = get(simulator, '/events', token);
    await waitFor(() => simulator.stats.openStreams === 1 && simulator.stats.heldPolls === 1);

    simulator.faults.dropConnections();

    await expect(held).rejects.toThrow();
    const failure = await stream.until(() => false).catch((error: Error) => error);
    expect(failure).toBeInstanceOf(Error);
    expect(stream.messages).toEqual([]);
    expect(simulator.stats).toMatchObject({ openStreams: 0, heldPolls: 0 });
  });

  it('sends a ": ping" heartbeat and ends streams on close()', async () => {
    const simulator = await start({ heartbeatIntervalMs: 20 });
    const token = await tokenFor(simulator);

    const stream = await openStream(simulator, token);
    await stream.until(() => stream.comments.includes('ping'));
    expect(simulator.stats.openStreams).toBe(1);
    await simulator.close();
    await stream.until(() => false).catch(() => undefined);

    expect(stream.ended()).toBe(true);
    expect(simulator.stats.openStreams).toBe(0);
  });
});

describe('unlisted events', () => {
  it('are skipped by polls and streams, and found by the lookups', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(1);
    const unlisted = simulator.append(
      { type: 'ACCOUNT_STATUS', data: { status: 'OPEN' } },
      { unlisted: true },
    );
    simulator.generate(1);

    const page = await poll(simulator, token);
    const stream = await openStream(simulator, token);
    await stream.until(() => stream.messages.length === 1);
    stream.close();
    const bySequence = await get(simulator, '/event/sequence/2', token);
    const byId = await get(simulator, `/event/${unlisted.id}`, token);

    expect(page.data.map((event) => event.sequence_number)).toEqual([1, 3]);
    expect(stream.events().map((event) => event.sequence_number)).toEqual(['1', '3']);
    expect(await bySequence.json()).toMatchObject({ id: unlisted.id, sequence_number: 2 });
    expect(byId.status).toBe(200);
  });
});

describe('single-event lookups', () => {
  it('finds an event by id and by sequence number, in poll format', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    const [, second] = simulator.generate(3);

    const byId = await get(simulator, `/event/${second!.id}`, token);
    const bySequence = await get(simulator, '/event/sequence/2', token);

    expect(await byId.json()).toEqual(second);
    expect(await bySequence.json()).toEqual(second);
  });

  it('answers 404 for an unknown event and 400 for a non-integer sequence number', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(1);

    const unknownId = await get(simulator, '/event/00000000-0000-4000-8000-000000000000', token);
    const beyond = await get(simulator, '/event/sequence/2', token);
    const notInteger = await get(simulator, '/event/sequence/1.5', token);

    expect(unknownId.status).toBe(404);
    expect(await unknownId.json()).toMatchObject({ error: 'not_found' });
    expect(beyond.status).toBe(404);
    expect(notInteger.status).toBe(400);
    expect(await notInteger.json()).toMatchObject({ parameter: 'sequence_number' });
  });
});

describe('faults', () => {
  it('failNext answers the next N requests with the status and Retry-After, then recovers', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(1);
    simulator.faults.failNext(2, 503, { retryAfter: '2' });

    const first = await get(simulator, '/events', token);
    const second = await get(simulator, '/events', token);
    const third = await get(simulator, '/events', token);

    expect([first.status, second.status, third.status]).toEqual([503, 503, 200]);
    expect(first.headers.get('retry-after')).toBe('2');
    expect(await first.json()).toMatchObject({ error: 'simulated_failure' });
  });

  it('failNext with a path only affects that path, in order of arrival', async () => {
    const simulator = await start();
    simulator.faults.failNext(1, 429, { path: '/events', retryAfter: '1' });
    simulator.faults.failNext(1, 500, { path: '/oauth2/token' });

    const tokenFailure = await tokenRequest(simulator, {
      client_id: 'local-client',
      client_secret: 'local-secret',
      grant_type: 'client_credentials',
    });
    const token = await tokenFor(simulator);
    const limited = await get(simulator, '/events', token);
    const recovered = await get(simulator, '/events', token);

    expect(tokenFailure.status).toBe(500);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(recovered.status).toBe(200);
  });

  it('an injected 401 looks like an expired token so clients refresh', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.faults.failNext(1, 401, { path: '/events' });

    const refused = await get(simulator, '/events', token);

    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_token' });
    expect((await get(simulator, '/events', token)).status).toBe(200);
  });

  it('malformedNext breaks the next successful /events bodies only', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(2);
    simulator.faults.malformedNext(1, 'not-json');
    simulator.faults.malformedNext(1, 'bad-schema');

    const lookup = await get(simulator, '/event/sequence/1', token);
    const notJson = await get(simulator, '/events', token);
    const badSchema = await get(simulator, '/events', token);
    const healthy = await poll(simulator, token);

    expect(await lookup.json()).toMatchObject({ sequence_number: 1 });
    expect(notJson.status).toBe(200);
    expect(notJson.headers.get('content-type')).toContain('application/json');
    const text = await notJson.text();
    expect(() => JSON.parse(text)).toThrow();
    const badBody = (await badSchema.json()) as Record<string, unknown>;
    expect(Array.isArray(badBody.data)).toBe(false);
    expect(healthy.data).toHaveLength(2);
  });

  it('delayNext holds the next N requests of any path for its time, and only those', async () => {
    const simulator = await start();
    simulator.faults.delayNext(1, 600_000);
    let delayedAnswered = false;
    const delayed = get(simulator, '/events').then(
      () => {
        delayedAnswered = true;
      },
      () => undefined,
    );
    // Faults are claimed when a request arrives, and arrivals are recorded at once.
    await waitFor(() => simulator.requests.length === 1);

    await tokenFor(simulator);

    expect(delayedAnswered).toBe(false);
    simulator.faults.delayNext(1, 200);
    const started = Date.now();
    await tokenFor(simulator);
    // A lower bound only (a timer never fires much early); the upper one is the test's timeout.
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    await simulator.close();
    await delayed;
    expect(delayedAnswered).toBe(false);
  });

  it('reset drops pending faults', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.faults.failNext(5, 503);
    simulator.faults.delayNext(5, 1_000);
    simulator.faults.malformedNext(5, 'not-json');

    simulator.faults.reset();

    const response = await get(simulator, '/events', token);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ data: [] });
  });

  it('rejects nonsensical fault arguments with a message', async () => {
    const simulator = await start();

    expect(() => simulator.faults.failNext(1, 200)).toThrow(/status/);
    expect(() => simulator.faults.delayNext(-1, 10)).toThrow(/count/);
  });
});

describe('program misbehaviours', () => {
  /** Two programs: the first misbehaves in each case, the second is the control. */
  async function startTwo() {
    const simulator = await start({ programs: [{}, { clientId: 'second', clientSecret: 'second-secret' }] });
    const [bad, good] = simulator.programs;
    return { simulator, bad: bad!, good: good! };
  }

  it('stall holds every request of that program unanswered while the others are served', async () => {
    const { simulator, bad, good } = await startTwo();
    const badToken = await tokenFor(simulator, 0);
    simulator.generate(1, { programId: bad.programId });
    simulator.generate(1, { programId: good.programId });
    simulator.faults.misbehave(bad.programId, { kind: 'stall' });
    const answered: string[] = [];
    const controller = new AbortController();
    const held = [
      fetch(`${simulator.url}/events`, {
        headers: { authorization: `Bearer ${badToken}` },
        signal: controller.signal,
      }),
      tokenRequest(
        simulator,
        { client_id: bad.clientId, client_secret: bad.clientSecret, grant_type: 'client_credentials' },
        { signal: controller.signal },
      ),
    ].map((request, index) =>
      request.then(
        () => answered.push(`request ${index}`),
        () => undefined,
      ),
    );
    await waitFor(() => simulator.requests.length === 3);

    const goodPage = await poll(simulator, await tokenFor(simulator, 1));

    expect(goodPage.data).toHaveLength(1);
    expect(answered).toEqual([]);
    expect(simulator.requests.slice(1, 3).map((request) => request.status)).toEqual([0, 0]);
    controller.abort();
    await Promise.all(held);
    await waitFor(() => simulator.requests.slice(1, 3).every((request) => request.endedAt !== undefined));
    expect(answered).toEqual([]);
  });

  it('error answers every request of that program with the status until cleared', async () => {
    const { simulator, bad, good } = await startTwo();
    const badToken = await tokenFor(simulator, 0);
    simulator.generate(1, { programId: bad.programId });
    simulator.faults.misbehave(bad.programId, { kind: 'error', status: 503, retryAfter: '3' });

    const badPoll = await get(simulator, '/events', badToken);
    const badLookup = await get(simulator, '/event/sequence/1', badToken);
    const badTokenRequest = await tokenRequest(simulator, {
      client_id: bad.clientId,
      client_secret: bad.clientSecret,
      grant_type: 'client_credentials',
    });
    const goodToken = await tokenFor(simulator, 1);
    const goodPoll = await get(simulator, '/events', goodToken);
    simulator.faults.misbehave(bad.programId, undefined);
    const recovered = await poll(simulator, badToken);

    expect([badPoll.status, badLookup.status, badTokenRequest.status]).toEqual([503, 503, 503]);
    expect(badPoll.headers.get('retry-after')).toBe('3');
    expect(await badPoll.json()).toMatchObject({ error: 'simulated_failure' });
    expect(goodPoll.status).toBe(200);
    expect(recovered.data).toHaveLength(1);
    expect(good.programId).not.toBe(bad.programId);
  });

  it('oversize-pages answers polls with pageEvents events whatever the limit, echoing the limit asked', async () => {
    const { simulator, bad, good } = await startTwo();
    simulator.generate(8, { programId: bad.programId });
    simulator.generate(8, { programId: good.programId });
    simulator.faults.misbehave(bad.programId, { kind: 'oversize-pages', pageEvents: 5 });

    const badPage = await poll(simulator, await tokenFor(simulator, 0), '?limit=2&last_sequence_number=1');
    const goodPage = await poll(simulator, await tokenFor(simulator, 1), '?limit=2');

    expect(badPage.data.map((event) => event.sequence_number)).toEqual([2, 3, 4, 5, 6]);
    expect(badPage.last_sequence_number).toBe(6);
    expect(badPage.limit).toBe(2);
    expect(goodPage.data.map((event) => event.sequence_number)).toEqual([1, 2]);
  });

  it("revoked refuses that program's client and tokens, and ends its open streams", async () => {
    const { simulator, bad, good } = await startTwo();
    const badToken = await tokenFor(simulator, 0);
    const goodToken = await tokenFor(simulator, 1);
    const stream = await openStream(simulator, badToken);
    await waitFor(() => simulator.stats.openStreams === 1);

    simulator.faults.misbehave(bad.programId, { kind: 'revoked' });

    const refusedToken = await tokenRequest(simulator, {
      client_id: bad.clientId,
      client_secret: bad.clientSecret,
      grant_type: 'client_credentials',
    });
    const refusedPoll = await get(simulator, '/events', badToken);
    expect(refusedToken.status).toBe(401);
    expect(await refusedToken.json()).toMatchObject({ error: 'invalid_client' });
    expect(refusedPoll.status).toBe(401);
    expect(await refusedPoll.json()).toMatchObject({ error: 'invalid_token' });
    await stream.until(() => false).catch(() => undefined);
    expect(stream.ended()).toBe(true);
    expect((await get(simulator, '/events', goodToken)).status).toBe(200);
    expect(good.clientId).toBe('second');
  });

  it('reset clears misbehaviours; bad arguments and unknown programs are refused by name', async () => {
    const { simulator, bad } = await startTwo();
    const token = await tokenFor(simulator, 0);
    simulator.faults.misbehave(bad.programId, { kind: 'error', status: 500 });

    simulator.faults.reset();

    expect((await get(simulator, '/events', token)).status).toBe(200);
    expect(() => simulator.faults.misbehave(bad.programId, { kind: 'error', status: 200 })).toThrow(/status/);
    expect(() =>
      simulator.faults.misbehave(bad.programId, { kind: 'oversize-pages', pageEvents: 0 }),
    ).toThrow(/pageEvents/);
    expect(() =>
      simulator.faults.misbehave(bad.programId, { kind: 'flood' } as unknown as { kind: 'stall' }),
    ).toThrow(/kind/);
    expect(() => simulator.faults.misbehave('no-such-program', { kind: 'stall' })).toThrow(
      /Unknown programId/,
    );
  });
});

describe('request recording', () => {
  it('records method, path, query, status and hadBearer but never a header value', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);

    await get(simulator, '/events?limit=5', token, { 'x-api-key': 'header-secret-value' });
    await get(simulator, '/events');

    const [tokenCall, withBearer, withoutBearer] = simulator.requests;
    expect(tokenCall).toMatchObject({ method: 'POST', path: '/oauth2/token', status: 200, hadBearer: false });
    expect(withBearer).toMatchObject({
      method: 'GET',
      path: '/events',
      query: { limit: '5' },
      status: 200,
      hadBearer: true,
    });
    expect(withoutBearer).toMatchObject({ status: 401, hadBearer: false });
    expect(typeof withBearer!.at).toBe('number');
    const recorded = JSON.stringify(simulator.requests);
    for (const secret of [token, 'header-secret-value', 'local-secret']) {
      expect(recorded).not.toContain(secret);
    }
    expect(simulator.stats.pollRequests).toBe(2);
  });
});

describe('determinism', () => {
  it('gives the same program ids and event content for the same seed and clock', async () => {
    const now = () => Date.parse('2026-05-05T05:05:05.005Z');
    const first = await start({ seed: 99, now });
    const second = await start({ seed: 99, now });
    const other = await start({ seed: 100, now });

    expect(second.programs).toEqual(first.programs);
    expect(second.generate(200)).toEqual(first.generate(200));
    expect(other.generate(200)).not.toEqual(first.events());
    expect(first.events()[0]!.created_dt).toBe('2026-05-05T05:05:05.005+00:00');
  });
});

describe('gaps, late events, re-sends and exact values', () => {
  it('leaves skipped numbers out of answers and lookups until they are filled', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(2);
    const gap = simulator.skip(3);
    simulator.generate(1);

    const page = await poll(simulator, token, '?last_sequence_number=0');

    expect(gap).toEqual({ from: 3, to: 5 });
    expect(page.data.map((e) => e.sequence_number)).toEqual([1, 2, 6]);
    expect((await get(simulator, '/event/sequence/4', token)).status).toBe(404);
  });

  it('carries a late-filled event and a re-sent one in the next answer, whatever its cursor', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    simulator.generate(2);
    simulator.skip(1);
    simulator.generate(2);
    const late = simulator.fill(3, { type: 'TRANSACTION', data: { note: 'late' } });
    simulator.resend(1);

    const next = await poll(simulator, token, '?last_sequence_number=5');
    const after = await poll(simulator, token, '?last_sequence_number=5');

    expect(next.data.map((e) => e.sequence_number)).toEqual([1, 3]);
    expect(next.data[1]).toMatchObject({ id: late.id, data: { note: 'late' } });
    expect(after.data).toEqual([]);
    expect((await (await get(simulator, '/event/sequence/3', token)).json()) as RawEvent).toMatchObject({
      id: late.id,
    });
  });

  it('writes data given as text exactly as given, in answers and lookups', async () => {
    const simulator = await start();
    const token = await tokenFor(simulator);
    const dataText = '{"amount":9007199254740993,"fee":12.50,"tiny":1.0E-7,"note":"caf\\u00e9"}';
    const event = simulator.append({ type: 'TRANSACTION', dataText });

    const pageText = await (await get(simulator, '/events?last_sequence_number=0', token)).text();
    const lookupText = await (await get(simulator, `/event/sequence/${event.sequence_number}`, token)).text();

    expect(pageText).toContain(`"data":${dataText}}`);
    expect(lookupText).toBe(
      `{"id":"${event.id}","program_id":"${event.program_id}","sequence_number":1,"created_dt":"${event.created_dt}","type":"TRANSACTION","data":${dataText}}`,
    );
    expect(event.data).toEqual(JSON.parse(dataText));
  });

  it('refuses the old client secret after a rotation, while issued tokens stay valid', async () => {
    const simulator = await start();
    const before = simulator.programs[0]!;
    const token = await tokenFor(simulator);

    const secret = simulator.rotateClientSecret();
    const refused = await tokenRequest(simulator, {
      client_id: before.clientId,
      client_secret: before.clientSecret,
      grant_type: 'client_credentials',
    });

    expect(secret).not.toBe(before.clientSecret);
    expect(simulator.programs[0]!.clientSecret).toBe(secret);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' });
    expect((await get(simulator, '/events', token)).status).toBe(200);
    expect(await tokenFor(simulator)).toEqual(expect.any(String));
  });
});

describe("the bank's clock", () => {
  it('stamps created_dt with its own clock, clockOffsetMs off ours', async () => {
    const now = Date.parse('2026-11-22T00:00:00.000Z');
    const simulator = await start({ now: () => now, clockOffsetMs: -600_000 });

    const [generated] = simulator.generate(1);
    const appended = simulator.append({ type: 'ACCOUNT_STATUS', data: { status: 'OPEN' } });

    expect(generated!.created_dt).toBe('2026-11-21T23:50:00.000+00:00');
    expect(appended.created_dt).toBe('2026-11-21T23:50:00.000+00:00');
  });

  it('refuses a clock offset that is not an integer', async () => {
    await expect(start({ clockOffsetMs: 1.5 })).rejects.toThrow(/clockOffsetMs must be an integer/);
  });
});
