/**
 * `run` through the built bin, under a 256 MiB heap, against a bank or a proxy that misbehaves on
 * loopback: a token request never answered, a stream asking for an absurd reconnection delay, a
 * proxy that drops CONNECT or answers 407, a token that is not a bearer token. Each run ends by
 * itself (the process exits: nothing left waiting keeps it alive), names what went wrong, prints
 * no secret, and makes a bounded number of requests.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_SERVER_RETRY_MS } from '../../../functions/core/stream/stream-connection.ts';
import { type CliResult, startCli } from '../../support/cli-process.ts';
import { type ConnectAnswer, ConnectProxy, maxConnectsWithin } from '../../support/connect-proxy.ts';
import { closeAll, json, type Responder, startScriptedServer } from '../../support/scripted-http-server.ts';

const CLIENT_SECRET = 'cli-client-s3cret';
const PROXY_PASSWORD = 'pr0xy-pa55word';
const DURATION_SECONDS = 3;
/** The CLI's wait before the next cycle after one that gave up at once (run-command.ts). */
const FIRST_CYCLE_PAUSE_MS = 2_000;

let dir: string;
const proxies: ConnectProxy[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bep-run-misbehaving-'));
});
afterEach(async () => {
  for (const proxy of proxies.splice(0)) await proxy.close();
  await closeAll();
  await rm(dir, { recursive: true, force: true });
});

/** `run` for `DURATION_SECONDS` against `baseUrl`, under a 256 MiB heap. */
async function runAgainst(
  baseUrl: string,
  args: readonly string[] = [],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<CliResult & { elapsedMs: number }> {
  const startedAt = Date.now();
  const cli = startCli(
    [
      'run',
      '--duration',
      String(DURATION_SECONDS),
      '--checkpoint-file',
      join(dir, 'checkpoint.json'),
      ...args,
    ],
    {
      cwd: dir,
      nodeArgs: ['--max-old-space-size=256'],
      env: {
        BANKING_BASE_URL: baseUrl,
        BANKING_CLIENT_ID: 'cli-client',
        BANKING_CLIENT_SECRET: CLIENT_SECRET,
        HTTPS_PROXY: undefined,
        https_proxy: undefined,
        NO_PROXY: undefined,
        no_proxy: undefined,
        ...env,
      },
    },
  );
  const result = await cli.result;
  return { ...result, elapsedMs: Date.now() - startedAt };
}

const tokenAnswer = (answer: Record<string, unknown>): Responder =>
  json(200, { token_type: 'Bearer', expires_in: 3600, ...answer });

async function proxyAnswering(answer: ConnectAnswer): Promise<{ proxy: ConnectProxy; url: string }> {
  const proxy = await ConnectProxy.start({ answer });
  proxies.push(proxy);
  const url = new URL(proxy.url);
  url.username = 'egress-user';
  url.password = PROXY_PASSWORD;
  return { proxy, url: url.href };
}

function expectNothingSecret(result: CliResult): void {
  const printed = `${result.stdout}\n${result.stderr}`;
  expect(printed).not.toContain(CLIENT_SECRET);
  expect(printed).not.toContain(PROXY_PASSWORD);
}

describe('run against a token endpoint that never answers', () => {
  it('stops at its duration and exits: the unanswered request does not keep the process alive', async () => {
    const bank = await startScriptedServer(json(200, { data: [] }), {
      routes: { '/oauth2/token': () => {} },
    });

    const result = await runAgainst(bank.baseUrl);

    expect(result.code).toBe(0);
    expect(result.stderr).toContain('[poller] stopped at checkpoint none');
    expect(bank.requests.map((request) => request.url)).toEqual(['/oauth2/token']);
    expectNothingSecret(result);
  });
});

describe('run against a stream that asks for retry: 999999999, then ends', () => {
  it('opens a bounded number of connections and exits', async () => {
    const bank = await startScriptedServer(
      (_request, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end('retry: 999999999\n\n');
      },
      { routes: { '/oauth2/token': tokenAnswer({ access_token: 'stream-token' }) } },
    );

    const result = await runAgainst(bank.baseUrl, ['--feed-mode', 'stream']);

    expect(result.code).toBe(0);
    const streams = bank.requests.filter((request) => request.url.startsWith('/events/stream')).length;
    // Two connections are at least the honoured retry (at most MAX_SERVER_RETRY_MS) apart within a
    // cycle, and at least the CLI's pause apart across cycles that gave up.
    const minimumGapMs = Math.min(MAX_SERVER_RETRY_MS, FIRST_CYCLE_PAUSE_MS);
    expect(streams).toBeGreaterThan(0);
    expect(streams).toBeLessThanOrEqual(1 + Math.floor(result.elapsedMs / minimumGapMs));
    expectNothingSecret(result);
  });
});

describe('run through a proxy that misbehaves', () => {
  it('a proxy dropping every CONNECT: a bounded number of CONNECTs, the proxy named, and the process exits', async () => {
    const { proxy, url } = await proxyAnswering('drop');

    const result = await runAgainst('https://localhost:9', [], { HTTPS_PROXY: url });

    expect(result.code).toBe(0);
    expect(proxy.connects).toBeGreaterThan(0);
    expect(proxy.connects).toBeLessThanOrEqual(maxConnectsWithin(result.elapsedMs));
    expect(result.stderr).toContain(
      `the egress proxy ${new URL(proxy.url).host} (HTTPS_PROXY) closed the connection`,
    );
    expectNothingSecret(result);
  });

  it('a proxy answering 407: the proxy and its 407 named, its credentials not shown', async () => {
    const { proxy, url } = await proxyAnswering({ status: 407 });

    const result = await runAgainst('https://localhost:9', [], { HTTPS_PROXY: url });

    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `the egress proxy ${new URL(proxy.url).host} (HTTPS_PROXY) answered CONNECT`,
    );
    expect(result.stderr).toContain('HTTP 407');
    expect(result.stderr).not.toContain('UND_ERR_ABORTED');
    expect(proxy.connects).toBeLessThanOrEqual(maxConnectsWithin(result.elapsedMs));
    expectNothingSecret(result);
  });

  it('a proxy refusing connections: the proxy named as unreachable, its credentials not shown', async () => {
    // A loopback port nothing listens on any more.
    const listener = createServer();
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as { port: number };
    await new Promise<void>((resolve) => listener.close(() => resolve()));

    const result = await runAgainst('https://localhost:9', [], {
      HTTPS_PROXY: `http://egress-user:${PROXY_PASSWORD}@127.0.0.1:${port}`,
    });

    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `the egress proxy 127.0.0.1:${port} (HTTPS_PROXY) could not be reached (ECONNREFUSED)`,
    );
    expectNothingSecret(result);
  });
});

describe('run against a token endpoint issuing a token that is not a bearer token', () => {
  it('stops with the field named once, never sending the token', async () => {
    const token = 'tok3n\r\nX-Injected: yes';
    const bank = await startScriptedServer(json(200, { data: [] }), {
      routes: { '/oauth2/token': tokenAnswer({ access_token: token }) },
    });

    const result = await runAgainst(bank.baseUrl);

    expect(result.code).not.toBe(0);
    expect(result.stderr.match(/access_token is not a bearer token/g) ?? []).toHaveLength(1);
    expect(new Set(bank.requests.map((request) => request.url))).toEqual(new Set(['/oauth2/token']));
    expect(`${result.stdout}${result.stderr}`).not.toContain('X-Injected');
    expectNothingSecret(result);
  });
});
