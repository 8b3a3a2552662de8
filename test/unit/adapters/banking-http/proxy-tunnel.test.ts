import { describe, expect, it } from 'vitest';
import {
  CONNECT_BACKOFF_BASE_MS,
  CONNECT_BACKOFF_CAP_MS,
  ConnectGate,
  connectBackoffMs,
  ProxyTunnelError,
  proxyNameOf,
} from '../../../../functions/adapters/banking-http/proxy-tunnel.ts';

describe('connectBackoffMs', () => {
  it('is nothing after a success, then doubles from the base up to the cap', () => {
    expect(connectBackoffMs(0)).toBe(0);
    expect(connectBackoffMs(1)).toBe(CONNECT_BACKOFF_BASE_MS);
    expect(connectBackoffMs(2)).toBe(2 * CONNECT_BACKOFF_BASE_MS);
    expect(connectBackoffMs(3)).toBe(4 * CONNECT_BACKOFF_BASE_MS);
    expect(connectBackoffMs(1_000)).toBe(CONNECT_BACKOFF_CAP_MS);
  });
});

describe('ConnectGate', () => {
  it('lets attempts run side by side while they succeed', async () => {
    const gate = new ConnectGate();
    let running = 0;
    let most = 0;
    const attempt = async () => {
      running += 1;
      most = Math.max(most, running);
      await Promise.resolve();
      running -= 1;
    };

    await Promise.all([gate.attempt(attempt), gate.attempt(attempt), gate.attempt(attempt)]);

    expect(most).toBe(3);
  });

  it('after a failure, lets attempts through one at a time, each after the backoff', async () => {
    // A clock on which every backoff is over by the next look: what is left to check is the order.
    let now = 0;
    const gate = new ConnectGate(() => {
      now += CONNECT_BACKOFF_CAP_MS;
      return now;
    });
    await gate.attempt(() => Promise.reject(new Error('dropped'))).catch(() => undefined);
    expect(gate.failures).toBe(1);
    let running = 0;
    let most = 0;
    const failing = async () => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      throw new Error('dropped again');
    };

    const results = await Promise.allSettled([
      gate.attempt(failing),
      gate.attempt(failing),
      gate.attempt(failing),
    ]);

    expect(results.every((result) => result.status === 'rejected')).toBe(true);
    expect(most).toBe(1);
    expect(gate.failures).toBe(4);
  });

  it('ends a paced wait when closed, so it keeps nothing alive', async () => {
    const gate = new ConnectGate(() => 0);
    await gate.attempt(() => Promise.reject(new Error('dropped'))).catch(() => undefined);
    let ran = false;
    const waiting = gate.attempt(async () => {
      ran = true;
    });

    gate.close();

    await expect(waiting).rejects.toThrow();
    expect(ran).toBe(false);
  });

  it('forgets the failures after a success', async () => {
    let now = 0;
    const gate = new ConnectGate(() => now);
    await gate.attempt(() => Promise.reject(new Error('dropped'))).catch(() => undefined);
    now = CONNECT_BACKOFF_BASE_MS;

    await gate.attempt(async () => 'tunnel');

    expect(gate.failures).toBe(0);
  });
});

describe('ProxyTunnelError', () => {
  const proxy = proxyNameOf(new URL('http://user:pa55word@proxy.internal:3128'), 'HTTPS_PROXY');

  it('names the proxy by host and port, never its credentials', () => {
    const error = new ProxyTunnelError(proxy, 'bank.example.com:443', { status: 407 });

    expect(error.message).toBe(
      'the egress proxy proxy.internal:3128 (HTTPS_PROXY) answered CONNECT bank.example.com:443 with HTTP 407',
    );
    expect(JSON.stringify(error)).not.toContain('pa55word');
    expect(error.code).not.toBe('UND_ERR_SOCKET');
  });

  it('says how it failed without an answer', () => {
    expect(
      new ProxyTunnelError(proxy, 'bank.example.com:443', {
        failure: 'unreachable',
        failureCode: 'ECONNREFUSED',
      }).message,
    ).toBe('the egress proxy proxy.internal:3128 (HTTPS_PROXY) could not be reached (ECONNREFUSED)');
    expect(proxyNameOf(new URL('http://proxy.internal'), 'https_proxy').address).toBe('proxy.internal:80');
  });
});
