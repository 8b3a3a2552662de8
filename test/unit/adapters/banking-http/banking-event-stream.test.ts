import type { ServerResponse } from 'node:http';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { BankingEventStream } from '../../../../functions/adapters/banking-http/banking-event-stream.ts';
import { ClientCredentialsTokenProvider } from '../../../../functions/adapters/banking-http/token-cache.ts';
import {
  AuthenticationError,
  DeadlineExceededError,
  PayloadValidationError,
  UpstreamHttpError,
} from '../../../../functions/core/errors.ts';
import type {
  BankingCredentials,
  CredentialsProvider,
  StreamMessage,
} from '../../../../functions/core/ports.ts';
import {
  bare,
  closeAll,
  json,
  type Responder,
  startScriptedServer,
} from '../../../support/scripted-http-server.ts';
import { expectNoSecretShown } from '../../../support/secret-assertions.ts';

const CLIENT_SECRET = 'client-s3cret-value';
const TOKEN_PATH = '/oauth2/token';

function streamEvent(sequence: number, type = 'ACCOUNT_STATUS', data: Record<string, unknown> = {}) {
  return {
    id: `0b0c3f4e-0000-4000-8000-${String(sequence).padStart(12, '0')}`,
    program_id: '5f1f2a7c-1111-4222-8333-444455556666',
    sequence_number: String(sequence),
    created_dt: '2025-03-04T10:00:00.123456+00:00',
    type,
    data: { status: 'OPEN', ...data, type: type.toLowerCase() },
  };
}

/** Writes `chunks` as an event stream, then either ends it or keeps it open. */
function sse(chunks: readonly string[], then: 'end' | 'hold' = 'end'): Responder {
  return (_request, response) => {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    for (const chunk of chunks) response.write(chunk);
    if (then === 'end') response.end();
  };
}

class FakeCredentials implements CredentialsProvider {
  readonly current: BankingCredentials;
  refreshes = 0;
  constructor(baseUrl: string) {
    this.current = { baseUrl, clientId: 'client-1', clientSecret: CLIENT_SECRET };
  }
  async get() {
    return this.current;
  }
  async refresh() {
    this.refreshes += 1;
    return this.current;
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await closeAll();
});

async function setup(script: Responder[]) {
  let issued = 0;
  const issueToken: Responder = (_request, response) => {
    issued += 1;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ access_token: `tok-${issued}`, expires_in: 3600 }));
  };
  const server = await startScriptedServer(script, { routes: { [TOKEN_PATH]: issueToken } });
  const dispatcher = new Agent();
  cleanups.push(() => dispatcher.destroy());
  const credentials = new FakeCredentials(server.baseUrl);
  const tokens = new ClientCredentialsTokenProvider({ credentials, dispatcher });
  const stream = new BankingEventStream({
    entryRules: CLASSIC_BUS_ENTRY_RULES,
    credentials,
    tokens,
    dispatcher,
    maxMessageChars: 10_000,
  });
  const calls = () => server.requests.filter((request) => request.url !== TOKEN_PATH);
  return { stream, credentials, calls };
}

async function collect(messages: AsyncIterable<StreamMessage>): Promise<StreamMessage[]> {
  const collected: StreamMessage[] = [];
  for await (const message of messages) collected.push(message);
  return collected;
}

const live = () => new AbortController().signal;

describe('BankingEventStream', () => {
  it('asks for the stream after the cursor, with the bearer header only, and reads its messages', async () => {
    const first = streamEvent(42);
    const { stream, calls } = await setup([
      sse([`retry: 2000\n\nid: 42\nda`, `ta: ${JSON.stringify([first])}\n\n: ping\n\n`]),
    ]);

    const messages = await collect(await stream.open({ after: 41, signal: live() }));

    const [request] = calls();
    expect(request!.url).toBe('/events/stream?last_sequence_number=41');
    expect(request!.headers).toMatchObject({
      accept: 'text/event-stream',
      'last-event-id': '41',
      authorization: 'Bearer tok-1',
    });
    expect(messages).toEqual([
      { kind: 'retry', retryMs: 2000 },
      {
        kind: 'events',
        lastEventId: 42,
        events: [
          { event: expect.objectContaining({ id: first.id, sequence_number: 42 }), needsRecovery: false },
        ],
      },
    ]);
  });

  it('starts from the beginning without a cursor or Last-Event-ID', async () => {
    const { stream, calls } = await setup([sse([])]);

    await collect(await stream.open({ after: null, signal: live() }));

    expect(calls()[0]!.url).toBe('/events/stream');
    expect(calls()[0]!.headers).not.toHaveProperty('last-event-id');
  });

  it('skips a named message that holds no events, and reports an unnamed unreadable one', async () => {
    const { stream } = await setup([
      sse(['event: notice\ndata: maintenance at noon\n\n', 'id: 3\ndata: oops\n\n']),
    ]);

    const messages = await collect(await stream.open({ after: null, signal: live() }));

    expect(messages).toEqual([{ kind: 'unreadable', lastEventId: 3, reason: 'its data is not JSON' }]);
  });

  it('refreshes the credentials and the token on a 401, once', async () => {
    const { stream, credentials, calls } = await setup([
      json(401, { error: 'invalid_token' }),
      sse([`id: 1\ndata: ${JSON.stringify([streamEvent(1)])}\n\n`]),
    ]);

    const messages = await collect(await stream.open({ after: null, signal: live() }));

    expect(messages).toHaveLength(1);
    expect(credentials.refreshes).toBe(1);
    expect(calls().map((call) => call.headers.authorization)).toEqual(['Bearer tok-1', 'Bearer tok-2']);
  });

  it('refuses a freshly issued token refused again, without showing it', async () => {
    const { stream } = await setup([json(401, { error: 'invalid_token' })]);

    const error = await stream.open({ after: null, signal: live() }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(AuthenticationError);
    expectNoSecretShown(error, [CLIENT_SECRET, /tok-\d/]);
  });

  it.each([
    [408, true],
    [504, true],
    [503, true],
    [406, false],
    [403, false],
  ])('answers HTTP %i with an UpstreamHttpError, retryable: %s', async (status, retryable) => {
    const { stream } = await setup([bare(status)]);

    const error = await stream.open({ after: null, signal: live() }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status, retryable });
  });

  it('refuses a 200 that is not an event stream', async () => {
    const { stream } = await setup([json(200, { data: [] })]);

    const error = await stream.open({ after: null, signal: live() }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(PayloadValidationError);
    expect((error as Error).message).toMatch(
      /content-type must be text\/event-stream, got "application\/json"/,
    );
  });

  it('throws a retryable error when the connection drops in the middle of a message', async () => {
    let held: ServerResponse | undefined;
    const { stream } = await setup([
      (request, response) => {
        held = response;
        sse([`id: 1\ndata: ${JSON.stringify([streamEvent(1)])}\n\n`], 'hold')(request, response);
      },
    ]);
    const received: StreamMessage[] = [];

    const error = await (async () => {
      for await (const message of await stream.open({ after: null, signal: live() })) {
        received.push(message);
        // Half the next message, then the connection is gone.
        held!.write('id: 2\ndata: [{"id":');
        held!.destroy();
      }
    })().catch((caught: unknown) => caught);

    expect(received).toHaveLength(1);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ retryable: true });
  });

  it('ends with DeadlineExceededError when its signal aborts, and closes the connection when left early', async () => {
    const { stream } = await setup([
      sse([`id: 1\ndata: ${JSON.stringify([streamEvent(1)])}\n\n`], 'hold'),
      sse([`id: 1\ndata: ${JSON.stringify([streamEvent(1)])}\n\n`], 'hold'),
    ]);
    const controller = new AbortController();
    const aborted = (async () => {
      for await (const _message of await stream.open({ after: null, signal: controller.signal }))
        controller.abort();
    })().catch((caught: unknown) => caught);

    expect(await aborted).toBeInstanceOf(DeadlineExceededError);

    for await (const _message of await stream.open({ after: null, signal: live() })) break;
  });
});
