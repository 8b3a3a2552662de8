/**
 * An egress proxy that misbehaves, against the shipped bundle under the Lambda runtime harness:
 * one that holds CONNECT without a word, one that drops it, one that answers 407. The bank is the
 * simulator behind a TLS front (`https://localhost`, its CA in the secret), reached only through
 * the proxy (`HTTPS_PROXY`, with a user and password that must never show).
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONNECT_BACKOFF_CAP_MS } from '../../../functions/adapters/banking-http/proxy-tunnel.ts';
import { type ConnectAnswer, ConnectProxy, maxConnectsWithin } from '../../support/connect-proxy.ts';
import { type PollerScenario, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';
import { type IssuedCertificate, TestPki } from '../../support/test-pki.ts';
import { TlsFront } from '../../support/tls-front.ts';

const scenarios = usePollerScenarios(2_900);
const PROXY_USER = 'egress-user';
const PROXY_PASSWORD = 'pr0xy-pa55word';
const TIMEOUT_MS = 5_000;

let pki: TestPki;
let caCertificate: string;
let serverCertificate: IssuedCertificate;
const started: Array<{ close(): Promise<void> }> = [];

beforeAll(() => {
  pki = TestPki.create();
  const ca = pki.authority('Test Bank CA');
  caCertificate = ca.certificate;
  serverCertificate = ca.issue({ commonName: 'localhost', usage: 'server' });
});
afterEach(async () => {
  for (const server of started.splice(0).reverse()) await server.close();
});
afterAll(() => pki.close());

/** A scenario whose secret names the simulator behind a TLS front, reached through a proxy answering `answer`. */
async function behindProxy(answer: ConnectAnswer): Promise<{ s: PollerScenario; proxy: ConnectProxy }> {
  const proxy = await ConnectProxy.start({ answer });
  started.push(proxy);
  const proxyUrl = new URL(proxy.url);
  proxyUrl.username = PROXY_USER;
  proxyUrl.password = PROXY_PASSWORD;
  const s = await scenarios.start({ timeoutMs: TIMEOUT_MS, environment: { HTTPS_PROXY: proxyUrl.href } });
  const front = await TlsFront.start({ target: s.simulator.url, server: serverCertificate });
  started.push(front);
  const program = s.simulator.programs[0]!;
  await scenarios.aws.secretsManager.send(
    new PutSecretValueCommand({
      SecretId: s.secretId,
      SecretString: JSON.stringify({
        base_url: front.url,
        client_id: program.clientId,
        client_secret: program.clientSecret,
        ca_certificate: caCertificate,
      }),
    }),
  );
  return { s, proxy };
}

function expectNoProxyCredentials(output: string): void {
  expect(output).not.toContain(PROXY_PASSWORD);
  expect(output).not.toContain(encodeURIComponent(PROXY_PASSWORD));
  expect(output).not.toContain(Buffer.from(`${PROXY_USER}:${PROXY_PASSWORD}`).toString('base64'));
}

describe('a proxy that never answers CONNECT', () => {
  it('ends the invocation in its budget, closes the stuck tunnel, and the warm next one publishes everything', async () => {
    const { s, proxy } = await behindProxy('hold');
    const events = s.simulator.generate(3);

    const first = await s.invoke();

    // The handler answered (no timeout, no event loop left to empty) with nothing published.
    expect(summaryOf(first)).toMatchObject({ published: 0, checkpoint: null });
    expect(proxy.connects).toBeGreaterThan(0);
    // The request stuck waiting for its tunnel did not stay behind in the frozen container.
    await proxy.heldClosed();

    proxy.answer = 'tunnel';
    const second = await s.invoke();

    expect(second.coldStart).toBe(false);
    expect(summaryOf(second)).toMatchObject({ published: 3, checkpoint: events.at(-1)!.sequence_number });
    expect(await s.deliveredIds()).toEqual(events.map((event) => event.id));
    expectNoProxyCredentials(s.lambda.output);
  });
});

describe('a proxy that drops every CONNECT', () => {
  it('fails the invocation in its budget naming the proxy, with a bounded number of CONNECTs', async () => {
    const { s, proxy } = await behindProxy('drop');
    s.simulator.generate(2);

    const invocation = await s.invoke();

    expect(invocation.outcome).toMatchObject({ kind: 'error', errorType: 'UpstreamHttpError' });
    const message = invocation.outcome.kind === 'error' ? invocation.outcome.errorMessage : '';
    const address = new URL(proxy.url).host;
    expect(message).toContain(`egress proxy ${address} (HTTPS_PROXY)`);
    expect(message).toContain('closed the connection without answering CONNECT');
    // One attempt, then each after the backoff of the gate: the invocation's budget bounds them.
    expect(proxy.connects).toBeGreaterThan(0);
    expect(proxy.connects).toBeLessThanOrEqual(maxConnectsWithin(TIMEOUT_MS));
    expect(maxConnectsWithin(TIMEOUT_MS)).toBeLessThan(TIMEOUT_MS / CONNECT_BACKOFF_CAP_MS + 10);
    expect(await s.checkpoint()).toBeNull();
    expectNoProxyCredentials(s.lambda.output);
  });
});

describe('a proxy that answers 407', () => {
  it('fails the invocation naming the proxy and its 407, not retryable, credentials unseen', async () => {
    const { s, proxy } = await behindProxy({ status: 407 });
    s.simulator.generate(2);

    const invocation = await s.invoke();

    expect(invocation.outcome).toMatchObject({ kind: 'error', errorType: 'UpstreamHttpError' });
    const message = invocation.outcome.kind === 'error' ? invocation.outcome.errorMessage : '';
    expect(message).toContain(`egress proxy ${new URL(proxy.url).host} (HTTPS_PROXY)`);
    expect(message).toContain('HTTP 407');
    expect(message).toContain('not retryable');
    expect(message).not.toContain('UND_ERR_ABORTED');
    // The token was asked for ahead of the lease and once more by the first poll: nothing retried.
    expect(proxy.connects).toBeLessThanOrEqual(2);
    expect(s.simulator.requests).toEqual([]);
    expectNoProxyCredentials(s.lambda.output);
  });
});
