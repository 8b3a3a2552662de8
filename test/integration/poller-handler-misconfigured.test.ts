/**
 * A wrong cursor parameter name, end to end: the simulator ignores the unknown parameter and
 * answers from the start of the feed every time. The poller must not mistake that for "caught
 * up": it publishes the first page once, then fails loudly with FEED_CURSOR_IGNORED.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { type RunningSimulator, startSimulator } from '../simulator/banking-simulator.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../support/aws-test-env.ts';
import {
  captureOutput,
  lambdaContext as context,
  loadHandler,
  type PollerHandler,
  simulatorSecret,
} from '../support/handler-harness.ts';

let aws: MotoEnvironment;
let simulator: RunningSimulator;
let queueUrl: string;
let handler: PollerHandler;

beforeAll(async () => {
  captureOutput();
  aws = useMotoEnvironment(inject('motoEndpoint'));
  simulator = await startSimulator({ seed: 12, maxPollHoldMs: 200, unknownTypeRatio: 0 });
  const secretId = await aws.createSecret(simulatorSecret(simulator));
  const bus = await aws.createRoutedBus(['transaction']);
  queueUrl = bus.queueUrls.get('transaction')!;
  handler = await loadHandler({
    SECRET_ID: secretId,
    CHECKPOINT_TABLE: await aws.createCheckpointTable(),
    EVENT_BUS_NAME: bus.busName,
    POLL_LIMIT: '5',
    POLL_CURSOR_PARAM: 'after',
  });
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
