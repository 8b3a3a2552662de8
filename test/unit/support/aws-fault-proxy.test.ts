/**
 * The AWS fault proxy's timeline for a PutEvents the client gave up on before the bus answered
 * (the function's answer timeout on a slow bus): the acceptance that comes after the client left
 * is flagged `unanswered`, after the `client-gave-up` mark; an answered one is not. A scripted
 * loopback server stands in for the bus, holding its answer until the test releases it.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AwsFaultProxy } from '../../support/aws-fault-proxy.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A bus that accepts every entry, answering only once `release` is called. */
async function heldBus(): Promise<{ endpoint: string; arrived: Promise<void>; release: () => void }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived!: () => void;
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const { Entries } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Entries: unknown[] };
      arrived();
      await released;
      res
        .writeHead(200, { 'content-type': 'application/x-amz-json-1.1' })
        .end(
          JSON.stringify({ FailedEntryCount: 0, Entries: Entries.map((_, i) => ({ EventId: `e-${i}` })) }),
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrived: arrival,
    release,
  };
}

async function startProxy(endpoint: string): Promise<AwsFaultProxy> {
  const proxy = await AwsFaultProxy.start(endpoint);
  cleanups.push(() => proxy.close());
  return proxy;
}

function putEvents(proxy: AwsFaultProxy, signal?: AbortSignal): Promise<Response> {
  return fetch(proxy.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
    body: JSON.stringify({
      Entries: [
        { Source: 's', DetailType: 't', Detail: '{"id":"a","sequence_number":1}', EventBusName: 'b' },
      ],
    }),
    ...(signal === undefined ? {} : { signal }),
  });
}

const shape = (proxy: AwsFaultProxy) =>
  proxy.timeline.map((entry) =>
    entry.kind === 'accepted'
      ? { kind: entry.kind, unanswered: entry.unanswered ?? false }
      : { kind: entry.kind, ...(entry.kind === 'mark' ? { label: entry.label } : {}) },
  );

describe('AwsFaultProxy timeline', () => {
  it('flags an acceptance that came after the client gave up on the request', async () => {
    const bus = await heldBus();
    const proxy = await startProxy(bus.endpoint);
    const abandon = new AbortController();
    const sent = putEvents(proxy, abandon.signal).catch(() => 'abandoned');
    await bus.arrived;
    abandon.abort();
    expect(await sent).toBe('abandoned');
    // The proxy sees the client leave (the mark) before the bus answers.
    while (!proxy.timeline.some((entry) => entry.kind === 'mark')) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    bus.release();
    await proxy.idle();
    expect(shape(proxy)).toEqual([
      { kind: 'put-events-requested' },
      { kind: 'mark', label: 'client-gave-up' },
      { kind: 'accepted', unanswered: true },
    ]);
  });

  it('does not flag an acceptance whose answer the client read', async () => {
    const bus = await heldBus();
    const proxy = await startProxy(bus.endpoint);
    const sent = putEvents(proxy);
    await bus.arrived;
    bus.release();
    expect((await sent).status).toBe(200);
    await proxy.idle();
    expect(shape(proxy)).toEqual([{ kind: 'put-events-requested' }, { kind: 'accepted', unanswered: false }]);
  });
});
