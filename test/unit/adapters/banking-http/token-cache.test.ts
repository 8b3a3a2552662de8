import { inspect } from 'node:util';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientCredentialsTokenProvider } from '../../../../functions/adapters/banking-http/token-cache.ts';
import {
  AuthenticationError,
  DeadlineExceededError,
  PayloadValidationError,
  UpstreamHttpError,
} from '../../../../functions/core/errors.ts';
import type { BankingCredentials, CredentialsProvider } from '../../../../functions/core/ports.ts';
import {
  closeAll,
  heldUntilReleased,
  json,
  type Responder,
  startScriptedServer,
} from '../../../support/scripted-http-server.ts';
import { expectNoSecretShown } from '../../../support/secret-assertions.ts';

const CLIENT_SECRET = 'sup3r s3cret&key=+/é';

/** Hands out `tok-1`, `tok-2`, … so each token request is distinguishable. */
function issuing(expiresIn?: number): Responder {
  let issued = 0;
  return (_request, response) => {
    issued += 1;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({ access_token: `tok-${issued}`, token_type: 'Bearer', expires_in: expiresIn }),
    );
  };
}

/** A secret as Secrets Manager holds it (`stored`) and as the provider's cache last read it (`current`). */
class FakeCredentials implements CredentialsProvider {
  current: BankingCredentials;
  stored: BankingCredentials;
  rereads = 0;
  constructor(baseUrl: string) {
    this.current = { baseUrl, clientId: 'client-1', clientSecret: CLIENT_SECRET };
    this.stored = this.current;
  }
  async get() {
    return this.current;
  }
  async refresh() {
    this.rereads += 1;
    this.current = this.stored;
    return this.current;
  }
}

function expectNoSecrets(error: unknown, ...tokens: string[]) {
  expectNoSecretShown(error, [CLIENT_SECRET, encodeURIComponent(CLIENT_SECRET), ...tokens]);
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await closeAll();
});

async function setup(responder: Responder, options: { clock?: () => number; skewMs?: number } = {}) {
  const server = await startScriptedServer(responder);
  const dispatcher = new Agent();
  cleanups.push(() => dispatcher.destroy());
  const credentials = new FakeCredentials(server.baseUrl);
  let refreshes = 0;
  const provider = new ClientCredentialsTokenProvider({
    credentials,
    dispatcher,
    clock: options.clock,
    skewMs: options.skewMs,
    onRefresh: () => {
      refreshes += 1;
    },
  });
  return { server, credentials, provider, refreshes: () => refreshes };
}

const live = () => new AbortController().signal;

describe('ClientCredentialsTokenProvider: the token request', () => {
  it('posts the URL-encoded form with exactly the documented headers, nothing in the URL', async () => {
    const { server, provider } = await setup(issuing(3600));

    await provider.getToken(live());

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/oauth2/token');
    expect(request?.headers.accept).toBe('application/json');
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request?.headers.authorization).toBeUndefined();
    expect(request?.body).toBe(
      'grant_type=client_credentials&client_id=client-1&client_secret=sup3r+s3cret%26key%3D%2B%2F%C3%A9',
    );
    expect(Object.fromEntries(new URLSearchParams(request?.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'client-1',
      client_secret: CLIENT_SECRET,
    });
  });

  it('returns the access_token and reports one refresh', async () => {
    const { provider, refreshes } = await setup(issuing(3600));

    await expect(provider.getToken(live())).resolves.toBe('tok-1');
    expect(refreshes()).toBe(1);
  });

  it('binds the token to the base URL that issued it and never shows its value when logged', async () => {
    const { server, provider } = await setup(issuing(3600));

    const token = await provider.getAccessToken(live());

    expect(token.baseUrl).toBe(server.baseUrl);
    expect(JSON.stringify(token)).not.toContain('tok-1');
    expect(inspect(token)).not.toContain('tok-1');
    expect(String(token)).not.toContain('tok-1');
  });
});

describe('ClientCredentialsTokenProvider: caching', () => {
  // The token is reused until `refreshAt` ms after it was issued, and fetched again from then on.
  it.each([
    [
      'reuses the token until expires_in minus the skew',
      { expiresIn: 600, skewMs: 60_000, refreshAt: 540_000 },
    ],
    [
      'assumes one hour when expires_in is absent',
      { expiresIn: undefined, skewMs: undefined, refreshAt: 3_540_000 },
    ],
    [
      'caps the skew at half the lifetime so a short-lived token is still reused',
      { expiresIn: 60, skewMs: 60_000, refreshAt: 30_000 },
    ],
  ] as const)('%s', async (_title, { expiresIn, skewMs, refreshAt }) => {
    const issuedAt = 1_000_000;
    let now = issuedAt;
    const { server, provider } = await setup(issuing(expiresIn), { clock: () => now, skewMs });

    const first = await provider.getToken(live());
    now = issuedAt + refreshAt - 1;
    const stillCached = await provider.getToken(live());
    now = issuedAt + refreshAt;
    const refreshed = await provider.getToken(live());

    expect([first, stillCached, refreshed]).toEqual(['tok-1', 'tok-1', 'tok-2']);
    expect(server.requests).toHaveLength(2);
  });

  it('shares one request among concurrent callers', async () => {
    const tokenEndpoint = heldUntilReleased(issuing(3600));
    const { server, provider, refreshes } = await setup(tokenEndpoint);

    const first = Array.from({ length: 4 }, () => provider.getToken(live()));
    await expect.poll(() => server.requests.length).toBe(1);
    // Callers arriving while the request is in flight join it too.
    const later = Array.from({ length: 4 }, () => provider.getToken(live()));
    tokenEndpoint.release();
    const tokens = await Promise.all([...first, ...later]);

    expect(tokens).toEqual(Array(8).fill('tok-1'));
    expect(server.requests).toHaveLength(1);
    expect(refreshes()).toBe(1);
  });

  it('fetches a new token when the credentials were rotated', async () => {
    const { server, credentials, provider } = await setup(issuing(3600));

    await provider.getToken(live());
    credentials.current = { ...credentials.current, clientSecret: 'rotated-secret' };
    const afterRotation = await provider.getToken(live());

    expect(afterRotation).toBe('tok-2');
    expect(new URLSearchParams(server.requests[1]?.body).get('client_secret')).toBe('rotated-secret');
  });
});

describe('ClientCredentialsTokenProvider: a secret rotated while its old value is cached', () => {
  /** The token endpoint of a service whose client secret was rotated to `rotated-secret`. */
  const rotatedService: Responder = (request, response) => {
    const secret = new URLSearchParams(request.body).get('client_secret');
    if (secret === 'rotated-secret') {
      issuing(3600)(request, response);
      return;
    }
    json(401, { error: 'invalid_client' })(request, response);
  };

  it('reads the secret again when the token endpoint refuses the cached credentials, and asks once more', async () => {
    const { server, credentials, provider } = await setup(rotatedService);
    credentials.stored = { ...credentials.current, clientSecret: 'rotated-secret' };

    const token = await provider.getToken(live());

    expect(token).toBe('tok-1');
    expect(credentials.rereads).toBe(1);
    expect(server.requests.map((r) => new URLSearchParams(r.body).get('client_secret'))).toEqual([
      CLIENT_SECRET,
      'rotated-secret',
    ]);
  });

  it('fails after one request when the secret read again is unchanged', async () => {
    const { server, credentials, provider } = await setup(rotatedService);

    await expect(provider.getToken(live())).rejects.toBeInstanceOf(AuthenticationError);

    expect(credentials.rereads).toBe(1);
    expect(server.requests).toHaveLength(1);
  });
});

describe('ClientCredentialsTokenProvider: invalidate', () => {
  it('drops the cached token so the next call fetches a new one', async () => {
    const { provider } = await setup(issuing(3600));
    const token = await provider.getToken(live());

    const dropped = provider.invalidate(token);

    expect(dropped).toBe(true);
    await expect(provider.getToken(live())).resolves.toBe('tok-2');
  });

  it('keeps a newer token when told about an older one (a stale 401)', async () => {
    const { provider } = await setup(issuing(3600));
    const old = await provider.getToken(live());
    provider.invalidate(old);
    await provider.getToken(live());

    const dropped = provider.invalidate(old);

    expect(dropped).toBe(false);
    await expect(provider.getToken(live())).resolves.toBe('tok-2');
  });
});

describe('ClientCredentialsTokenProvider: failures', () => {
  it('turns a 401 with an OAuth error into AuthenticationError naming status and error, not the secret', async () => {
    const { provider } = await setup(
      json(401, { error: 'invalid_client', error_description: 'Client authentication failed' }),
    );

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).message).toContain('HTTP 401');
    expect((error as AuthenticationError).message).toContain('invalid_client (Client authentication failed)');
    expect((error as AuthenticationError).context).toMatchObject({ status: 401, path: '/oauth2/token' });
    expectNoSecrets(error);
  });

  it('turns a 400 invalid_grant into AuthenticationError', async () => {
    const { provider } = await setup(json(400, { error: 'unauthorized_client' }));

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toMatch(/HTTP 400: unauthorized_client;/);
    expectNoSecrets(error);
  });

  it('does not quote a plain-text error body, which may echo the secret', async () => {
    const { provider } = await setup((request, response) => {
      response.writeHead(403, { 'content-type': 'text/plain' });
      response.end(`forbidden: ${CLIENT_SECRET} / ${request.body}`);
    });

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('HTTP 403: body not shown (not a JSON object)');
    expectNoSecrets(error);
  });

  it('redacts a secret the endpoint echoes back in a field of its JSON error body', async () => {
    const { provider } = await setup((request, response) => {
      response.writeHead(403, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ error: 'forbidden', error_description: `${CLIENT_SECRET} / ${request.body}` }),
      );
    });

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as Error).message).toContain('HTTP 403: forbidden ([redacted] / grant_type');
    expectNoSecrets(error);
  });

  it('turns a 503 with Retry-After into a retryable UpstreamHttpError', async () => {
    const { provider } = await setup(json(503, { error: 'temporarily_unavailable' }, { 'retry-after': '7' }));

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status: 503, retryable: true, retryAfterMs: 7000 });
    expect((error as Error).message).toContain('temporarily_unavailable');
    expectNoSecrets(error);
  });

  it('turns a 500 into a retryable UpstreamHttpError without retryAfterMs', async () => {
    const { provider } = await setup(json(500, 'oops'));

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toMatchObject({ status: 500, retryable: true, retryAfterMs: undefined });
  });

  it('does not cache a failure', async () => {
    const { server, provider } = await setup(json(500, 'oops'));
    await provider.getToken(live()).catch(() => undefined);
    server.respondWith(issuing(3600));

    await expect(provider.getToken(live())).resolves.toBe('tok-1');
  });

  it('rejects a 200 without a string access_token, without showing what is there', async () => {
    const { provider } = await setup(json(200, { access_token: 12345678, expires_in: 3600 }));

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(PayloadValidationError);
    expect((error as Error).message).toBe(
      'POST /oauth2/token (HTTP 200): access_token must be a non-empty string',
    );
    expect((error as Error).message).not.toContain('12345678');
  });

  it('rejects a 200 that is not JSON', async () => {
    const { provider } = await setup(json(200, 'access_token=abc'));

    await expect(provider.getToken(live())).rejects.toThrow(
      'POST /oauth2/token (HTTP 200): body is not JSON',
    );
  });

  it('turns a reset connection into a retryable UpstreamHttpError', async () => {
    const { provider } = await setup((_request, response) => {
      response.socket?.destroy();
    });

    const error = await provider.getToken(live()).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ retryable: true, status: undefined });
    expectNoSecrets(error);
  });
});

describe('ClientCredentialsTokenProvider: deadline', () => {
  it('rejects with DeadlineExceededError as soon as the signal aborts, and aborts the request', async () => {
    let closed = false;
    const { server, provider } = await setup((_request, response) => {
      response.on('close', () => {
        closed = true;
      });
    });
    const controller = new AbortController();

    const pending = provider.getToken(controller.signal).catch((caught: unknown) => caught);
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort();
    const error = await pending;

    // The server never answers: only the abort can have settled the call.
    expect(error).toBeInstanceOf(DeadlineExceededError);
    await expect.poll(() => closed).toBe(true);
  });

  it('lets the other callers of a shared request go on when one who did not start it gives up', async () => {
    const tokenEndpoint = heldUntilReleased(issuing(3600));
    const { server, provider } = await setup(tokenEndpoint);
    const impatient = new AbortController();

    const first = provider.getToken(live());
    const second = provider.getToken(impatient.signal).catch((caught: unknown) => caught);
    await expect.poll(() => server.requests.length).toBe(1);
    impatient.abort();

    await expect(second).resolves.toBeInstanceOf(DeadlineExceededError);
    tokenEndpoint.release();
    await expect(first).resolves.toBe('tok-1');
    expect(server.requests).toHaveLength(1);
  });

  it('aborts the request when the caller that started it gives up, though others wait; they ask again', async () => {
    const tokenEndpoint = heldUntilReleased(issuing(3600));
    let received = 0;
    const cutShort: number[] = [];
    const { server, provider } = await setup((request, response) => {
      const index = ++received;
      response.once('close', () => {
        if (!response.writableEnded) cutShort.push(index);
      });
      return tokenEndpoint(request, response);
    });
    const starter = new AbortController();
    const first = provider.getToken(starter.signal).catch((caught: unknown) => caught);
    const second = provider.getToken(live());
    await expect.poll(() => server.requests.length).toBe(1);

    starter.abort();

    await expect(first).resolves.toBeInstanceOf(DeadlineExceededError);
    // A request of a run that ended never outlives it: the other caller's is a new one.
    await expect.poll(() => server.requests.length).toBe(2);
    await expect.poll(() => cutShort).toEqual([1]);
    tokenEndpoint.release();
    await expect(second).resolves.toMatch(/^tok-\d$/);
  });

  it('sends nothing when the signal has already aborted', async () => {
    const { server, provider } = await setup(issuing(3600));

    await expect(provider.getToken(AbortSignal.abort())).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(server.requests).toHaveLength(0);
  });
});
