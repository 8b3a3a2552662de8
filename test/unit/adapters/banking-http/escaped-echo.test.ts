/**
 * A bank that echoes the credentials back in its error bodies, escaped: the real token provider
 * and feed over loopback HTTP against a scripted server, the error logged through the real
 * Powertools Logger as the handler logs failures. Neither the message, the context nor the
 * logged line may show the secret or the token in any encoding, or a prefix of 8+ of either.
 */

import { Logger } from '@aws-lambda-powertools/logger';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { BankingEventFeed } from '../../../../functions/adapters/banking-http/banking-event-feed.ts';
import { BankingEventStream } from '../../../../functions/adapters/banking-http/banking-event-stream.ts';
import { ClientCredentialsTokenProvider } from '../../../../functions/adapters/banking-http/token-cache.ts';
import { StaticCredentialsProvider } from '../../../../functions/adapters/local/static-credentials.ts';
import { AuthenticationError, UpstreamHttpError } from '../../../../functions/core/errors.ts';
import {
  closeAll,
  json,
  type Responder,
  startScriptedServer,
} from '../../../support/scripted-http-server.ts';
import { ENCODINGS, leaks } from '../../../support/secret-encodings.ts';

const SECRET = 's3cr3t/with+plus=and/slash';
const TOKEN = 'tok/3n+V4lue/with/slashes==';

/** How the bank escapes what it echoes: each form named in the issue. */
const ECHOES: ReadonlyArray<readonly [string, (text: string) => string]> = [
  ['\\/ for /', ENCODINGS['JSON-escaped with \\/']!],
  ['lower-case percent-encoding', ENCODINGS['percent-encoded, lower case']!],
  ['\\uXXXX escapes', ENCODINGS['\\uXXXX for every character']!],
  ['cut short', (text) => text.slice(0, 12)],
];

/** A JSON error body whose `detail` carries `echoed` verbatim (already escaped for JSON). */
function echoing(
  status: number,
  echoed: (request: { body: string; authorization: string }) => string,
): Responder {
  return (request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    const body = { body: request.body, authorization: String(request.headers.authorization ?? '') };
    response.end(`{"detail":"bad credentials ${echoed(body)}"}`);
  };
}

let written: string[] = [];
beforeEach(() => {
  written = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  }
});
afterEach(async () => {
  vi.restoreAllMocks();
  await closeAll();
});

type Call = 'poll' | 'lookup' | 'stream';

async function pollAgainst(
  eventsAnswer: Responder,
  tokenAnswer: Responder,
  secret = SECRET,
  call: Call = 'poll',
): Promise<{ error: unknown; shown: string }> {
  const server = await startScriptedServer(eventsAnswer, { routes: { '/oauth2/token': tokenAnswer } });
  const credentials = new StaticCredentialsProvider({
    baseUrl: server.baseUrl,
    clientId: 'c1',
    clientSecret: secret,
  });
  const dispatcher = new Agent();
  const tokens = new ClientCredentialsTokenProvider({ credentials, dispatcher });
  const feed = new BankingEventFeed({ entryRules: CLASSIC_BUS_ENTRY_RULES, credentials, tokens, dispatcher });
  const stream = new BankingEventStream({
    entryRules: CLASSIC_BUS_ENTRY_RULES,
    credentials,
    tokens,
    dispatcher,
  });
  const signal = AbortSignal.timeout(10_000);
  let error: unknown;
  try {
    if (call === 'poll') await feed.poll({ after: 1, signal });
    else if (call === 'lookup') await feed.fetchEventBySequence(7, signal);
    else await stream.open({ after: 1, signal });
  } catch (caught) {
    error = caught;
  } finally {
    await dispatcher.destroy();
  }
  new Logger({ serviceName: 'escaped-echo', logLevel: 'DEBUG' }).error('Poll cycle failed', error as Error);
  const shown = [
    (error as Error).message,
    JSON.stringify((error as { context?: unknown }).context),
    written.join(''),
  ].join('\n');
  return { error, shown };
}

describe('a token endpoint answering 401 with the client secret echoed', () => {
  it.each(ECHOES)('escaped as %s: refused, and the secret shown nowhere', async (_label, encode) => {
    const tokenAnswer = echoing(401, ({ body }) =>
      encode(new URLSearchParams(body).get('client_secret') ?? ''),
    );

    const { error, shown } = await pollAgainst(json(200, { data: [] }), tokenAnswer);

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('bad credentials [redacted]');
    expect(written.join('')).toContain('bad credentials [redacted]');
    expect(leaks(shown, [SECRET])).toEqual([]);
  });

  it('with a secret holding a lone surrogate: still an AuthenticationError, not a network error', async () => {
    const secret = 's3cr3t\uD800with/slash';
    const tokenAnswer = echoing(401, ({ body }) =>
      ENCODINGS['JSON-escaped with \\/']!(new URLSearchParams(body).get('client_secret') ?? ''),
    );

    const { error, shown } = await pollAgainst(json(200, { data: [] }), tokenAnswer, secret);

    expect(error).toBeInstanceOf(AuthenticationError);
    expect(leaks(shown, [secret])).toEqual([]);
  });
});

describe('GET /events answering 500 with the bearer token echoed', () => {
  it.each(ECHOES)('escaped as %s: a retryable error, and the token shown nowhere', async (_label, encode) => {
    const eventsAnswer = echoing(500, ({ authorization }) => encode(authorization.replace(/^Bearer /, '')));

    const { error, shown } = await pollAgainst(
      eventsAnswer,
      json(200, { access_token: TOKEN, expires_in: 3600 }),
    );

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 500, retryable: true });
    expect((error as UpstreamHttpError).context).toMatchObject({ detail: '(bad credentials [redacted])' });
    expect(leaks(shown, [TOKEN, SECRET])).toEqual([]);
  });
});

describe('an event lookup and the stream answering 500 with the bearer token echoed', () => {
  it.each(['lookup', 'stream'] as const)(
    '%s: a retryable error, and the token shown nowhere',
    async (call) => {
      const eventsAnswer = echoing(500, ({ authorization }) =>
        ENCODINGS['JSON-escaped with \\/']!(authorization.replace(/^Bearer /, '')),
      );

      const { error, shown } = await pollAgainst(
        eventsAnswer,
        json(200, { access_token: TOKEN, expires_in: 3600 }),
        SECRET,
        call,
      );

      expect(error).toBeInstanceOf(UpstreamHttpError);
      expect((error as UpstreamHttpError).context).toMatchObject({ detail: '(bad credentials [redacted])' });
      expect(leaks(shown, [TOKEN, SECRET])).toEqual([]);
    },
  );
});
