/**
 * How long the custom-bus stand-in keeps an idle connection (`keepAliveTimeoutMs`). undici drops a
 * connection after each answer when the server's `keep-alive: timeout` falls within its 2 s
 * threshold: at the default 1 s every request opens a connection; the benchmark gives the AWS
 * endpoints' minutes so that a drain is not charged a connection per PutEvents.
 */
import { Agent, buildConnector } from 'undici';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { standInRpc } from '../../support/custom-bus/stand-in-client.ts';

let bus: CustomBus | undefined;

afterEach(async () => {
  await bus?.close();
  bus = undefined;
});

/** Connections opened for `calls` signed ListEventBuses calls, one after the other. */
async function connectionsFor(started: CustomBus, calls: number): Promise<number> {
  let connections = 0;
  const connect = buildConnector({});
  const agent = new Agent({
    connect: (options, callback) => {
      connections += 1;
      connect(options, callback);
    },
  });
  const rpc = standInRpc(started, { dispatcher: agent });
  try {
    for (let call = 0; call < calls; call += 1) await rpc.call('ListEventBuses', {});
    return connections;
  } finally {
    await agent.close();
  }
}

describe('custom-bus stand-in connections', () => {
  it('reuses its connections for successive requests when asked to keep idle connections', async () => {
    bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), keepAliveTimeoutMs: 60_000 });

    // undici may open a second one for the call right after the first (the first is not back in
    // its pool yet); from then on they are reused.
    expect(await connectionsFor(bus, 6)).toBeLessThanOrEqual(2);
  });

  it('by default answers with a keep-alive short enough that undici opens a connection per request', async () => {
    bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint') });

    expect(await connectionsFor(bus, 6)).toBe(6);
  });
});
