/**
 * A wrong cursor parameter name, end to end: the simulator ignores the unknown parameter and
 * answers from the start of the feed every time. The poller must not mistake that for "caught
 * up": it publishes the first page once, then fails loudly with FEED_CURSOR_IGNORED.
 */
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { PollerResult } from '../../functions/poller/handler.ts';
import { type RunningSimulator, startSimulator } from '../simulator/banking-simulator.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../support/aws-test-env.ts';

let aws: MotoEnvironment;
let simulator: RunningSimulator;
let queueUrl: string;
let handler: (event: unknown, context: Context) => Promise<PollerResult>;

function context(): Context {
  const deadline = Date.now() + 4_000;
  return {
    awsRequestId: `misconfigured-${Math.random()}`,
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as unknown as Context;
}

beforeAll(async () => {
  for (const stream of [process.stdout, process.stderr]) vi.spyOn(stream, 'write').mockReturnValue(true);
  aws = useMotoEnvironment(inject('motoEndpoint'));
  simulator = await startSimulator({ seed: 12, maxPollHoldMs: 200, unknownTypeRatio: 0 });
  const program = simulator.programs[0]!;
  const secretId = await aws.createSecret(
    JSON.stringify({
      base_url: simulator.url,
      client_id: program.clientId,
      client_secret: program.clientSecret,
    }),
  );
  const bus = await aws.createRoutedBus(['transaction']);
  queueUrl = bus.queueUrls.get('transaction')!;
  Object.assign(process.env, {
    SECRET_ID: secretId,
    CHECKPOINT_TABLE: await aws.createCheckpointTable(),
    EVENT_BUS_NAME: bus.busName,
    MIN_POLL_WINDOW_MS: '500',
    POLL_LIMIT: '5',
    POLL_CURSOR_PARAM: 'after',
  });
  vi.resetModules();
  ({ handler } = await import('../../functions/poller/handler.ts'));
});

afterAll(async () => {
  vi.restoreAllMocks();
  await simulator?.close();
  aws?.restore();
});

describe('a cursor parameter the banking service does not know', () => {
  it('publishes the first page once, then fails with FEED_CURSOR_IGNORED instead of looking caught up', async () => {
    const events = simulator.generate(12, { type: 'transaction' });

    const first = await handler({}, context());

    expect(first).toMatchObject({ published: 5, checkpoint: events[4]!.sequence_number });
    expect(first.pollErrors).toBeGreaterThan(0);
    expect(simulator.requests.filter((r) => r.path === '/events').length).toBeLessThan(20);
    await expect(handler({}, context())).rejects.toMatchObject({ code: 'FEED_CURSOR_IGNORED' });
    const delivered = await aws.drainQueue(queueUrl);
    expect(delivered.map((m) => (m.detail as { id: string }).id)).toEqual(
      events.slice(0, 5).map((e) => e.id),
    );
  });
});
