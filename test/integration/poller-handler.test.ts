/**
 * The real handler end to end: the simulator over HTTP as the banking service, moto's server for
 * Secrets Manager, DynamoDB and EventBridge (rules on detail-type → SQS queues).
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PutRuleCommand, PutTargetsCommand } from '@aws-sdk/client-eventbridge';
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { PollerResult } from '../../functions/poller/handler.ts';
import { type RunningSimulator, startSimulator } from '../simulator/banking-simulator.ts';
import { type DeliveredEvent, type MotoEnvironment, useMotoEnvironment } from '../support/aws-test-env.ts';
import {
  captureOutput,
  lambdaContext as context,
  loadHandler,
  type PollerHandler,
  simulatorSecret,
} from '../support/handler-harness.ts';

let aws: MotoEnvironment;
let simulator: RunningSimulator;
let queues: Map<string, string>;
let tableName: string;
let secretId: string;
let handler: PollerHandler;
/** What the handler wrote to stdout and stderr (EMF metrics, logs): kept for assertions, out of the test output. */
let stdout: string[] = [];

/** A catch-all rule as the construct builds it: any type not routed elsewhere. */
async function addCatchAll(busName: string, routed: readonly string[]): Promise<string> {
  const queue = await aws.sqs.send(new CreateQueueCommand({ QueueName: aws.uniqueName('unrouted') }));
  const attributes = await aws.sqs.send(
    new GetQueueAttributesCommand({ QueueUrl: queue.QueueUrl!, AttributeNames: ['QueueArn'] }),
  );
  const rule = aws.uniqueName('catch-all');
  await aws.eventBridge.send(
    new PutRuleCommand({
      Name: rule,
      EventBusName: busName,
      EventPattern: JSON.stringify({ 'detail-type': [{ 'anything-but': [...routed] }] }),
    }),
  );
  await aws.eventBridge.send(
    new PutTargetsCommand({
      Rule: rule,
      EventBusName: busName,
      Targets: [{ Id: 'queue', Arn: attributes.Attributes!.QueueArn! }],
    }),
  );
  return queue.QueueUrl!;
}

async function drainAll(): Promise<Map<string, DeliveredEvent[]>> {
  const delivered = new Map<string, DeliveredEvent[]>();
  for (const [type, url] of queues) delivered.set(type, await aws.drainQueue(url));
  return delivered;
}

async function storedCheckpoint(program = 'default'): Promise<number | null> {
  const item = await aws.dynamodb.send(
    new GetItemCommand({
      TableName: tableName,
      Key: { pk: { S: `program#${program}` } },
      ConsistentRead: true,
    }),
  );
  const value = item.Item?.checkpoint?.N;
  return value === undefined ? null : Number(value);
}

/** Runs the handler until it reports nothing new, as successive schedule ticks would. */
async function drainFeed(payload: Record<string, string> = {}): Promise<PollerResult[]> {
  const results: PollerResult[] = [];
  for (let tick = 0; tick < 10; tick += 1) {
    const result = await handler(payload, context());
    results.push(result);
    if (result.published === 0) break;
  }
  return results;
}

beforeAll(async () => {
  stdout = captureOutput();
  aws = useMotoEnvironment(inject('motoEndpoint'));
  simulator = await startSimulator({ seed: 7, maxPollHoldMs: 300, unknownTypeRatio: 0 });
  tableName = await aws.createCheckpointTable();
  secretId = await aws.createSecret(simulatorSecret(simulator));
  const routed = ['account_status', 'transaction'];
  const bus = await aws.createRoutedBus(routed);
  queues = new Map(bus.queueUrls);
  queues.set('unrouted', await addCatchAll(bus.busName, routed));
  handler = await loadHandler({
    SECRET_ID: secretId,
    CHECKPOINT_TABLE: tableName,
    EVENT_BUS_NAME: bus.busName,
    POLL_LIMIT: '25',
    POWERTOOLS_LOG_LEVEL: 'ERROR',
  });
});

afterAll(async () => {
  vi.restoreAllMocks();
  await simulator?.close();
  aws?.restore();
});

describe('poller handler against the simulator and moto', () => {
  it('delivers every event exactly once to the queue of its type, unknown types to the catch-all', async () => {
    const known = simulator.generate(40);
    const unknown = simulator.append({ type: 'CARD_STATUS', data: { card_id: 'card-1', status: 'ACTIVE' } });
    const tail = simulator.generate(5);
    const all = [...known, unknown, ...tail];

    const results = await drainFeed();

    const total = results.reduce((sum, r) => sum + r.published, 0);
    expect(total).toBe(all.length);
    expect(results.at(-1)?.checkpoint).toBe(all.at(-1)!.sequence_number);
    expect(await storedCheckpoint()).toBe(all.at(-1)!.sequence_number);

    const delivered = await drainAll();
    for (const [type, events] of delivered) {
      for (const message of events) {
        expect(message.source).toBe('banking.events');
        expect(message['detail-type']).toBe(type === 'unrouted' ? 'card_status' : type);
      }
    }
    const ids = [...delivered.values()].flat().map((m) => (m.detail as { id: string }).id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids)).toEqual(new Set(all.map((e) => e.id)));
    expect(delivered.get('unrouted')!.map((m) => (m.detail as { id: string }).id)).toEqual([unknown.id]);

    const detail = delivered.get('transaction')![0]!.detail as Record<string, unknown>;
    expect(typeof detail.sequence_number).toBe('number');
    expect(detail.type).toBe('transaction');
  });

  it('publishes nothing new on the next invocation', async () => {
    const before = await storedCheckpoint();

    const result = await handler({}, context());

    expect(result).toMatchObject({ status: 'completed', published: 0, checkpoint: before });
    expect([...(await drainAll()).values()].flat()).toHaveLength(0);
  });

  it('survives a burst of 500, 503 and 429 responses, honouring Retry-After', async () => {
    const start = await storedCheckpoint();
    const events = simulator.generate(30);
    simulator.faults.failNext(1, 500, { path: '/events' });
    simulator.faults.failNext(1, 503, { path: '/events', retryAfter: '1' });
    simulator.faults.failNext(1, 429, { path: '/events', retryAfter: '0' });
    const began = Date.now();

    const results = await drainFeed();

    expect(results.reduce((sum, r) => sum + r.published, 0)).toBe(30);
    expect(results[0]!.pollErrors).toBe(3);
    expect(Date.now() - began).toBeGreaterThanOrEqual(1_000);
    expect(await storedCheckpoint()).toBe(start! + 30);
    const ids = [...(await drainAll()).values()].flat().map((m) => (m.detail as { id: string }).id);
    expect(ids.sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('survives a token revoked in the middle of an invocation', async () => {
    const start = await storedCheckpoint();
    simulator.generate(5);
    const tokensBefore = simulator.stats.tokensIssued;
    const running = handler({}, context(6_000));
    // Once the first page is published the poller is long-polling with a cached token: revoke it.
    await vi.waitFor(async () => expect(await storedCheckpoint()).toBe(start! + 5), { timeout: 4_000 });
    simulator.faults.revokeTokens();
    const late = simulator.generate(7);

    const result = await running;

    expect(result.published).toBe(12);
    expect(result.checkpoint).toBe(late.at(-1)!.sequence_number);
    expect(simulator.stats.tokensIssued).toBeGreaterThan(tokensBefore);
    expect(simulator.requests.some((r) => r.path === '/events' && r.status === 401)).toBe(true);
    expect([...(await drainAll()).values()].flat()).toHaveLength(12);
  });

  it('does not move the checkpoint on a malformed body, says what was wrong, and still flushes metrics', async () => {
    const before = await storedCheckpoint();
    simulator.generate(2);
    simulator.faults.malformedNext(1, 'bad-schema');
    stdout.length = 0;

    await expect(handler({}, context())).rejects.toThrow(/GET \/events \(HTTP 200\): .*must be/);

    expect(await storedCheckpoint()).toBe(before);
    const emf = stdout.filter((line) => line.includes('"_aws"')).map((line) => JSON.parse(line));
    expect(emf).toContainEqual(expect.objectContaining({ Program: 'default', PollRequests: 1 }));
    const result = await handler({}, context());
    expect(result.published).toBe(2);
    await drainAll();
  });

  it('refuses a second invocation while the first holds the lease', async () => {
    simulator.generate(1);
    const first = handler({}, context(4_000));
    await vi.waitFor(async () => {
      const item = await aws.dynamodb.send(
        new GetItemCommand({
          TableName: tableName,
          Key: { pk: { S: 'program#default' } },
          ConsistentRead: true,
        }),
      );
      expect(item.Item?.lease_owner).toBeDefined();
    });

    const second = await handler({}, context(4_000));

    expect(second).toMatchObject({ status: 'lease-busy', published: 0 });
    expect((await first).status).toBe('completed');
    await drainAll();
  });

  it('never wrote the client secret or a bearer token to its logs or metrics', () => {
    const output = stdout.join('');
    expect(output.length).toBeGreaterThan(0);
    expect(output).not.toContain(simulator.programs[0]!.clientSecret);
    expect(output).not.toMatch(/Bearer\s+\S/);
    const tokens = simulator.issuedTokens();
    expect(tokens.length).toBeGreaterThan(1);
    for (const token of tokens) expect(output).not.toContain(token);
    for (const request of simulator.requests)
      expect(JSON.stringify(request.query)).not.toMatch(/token|secret/i);
  });

  it('keeps separate checkpoints per program named by the schedule payload', async () => {
    const checkpointBefore = await storedCheckpoint();

    const results = await drainFeed({ program: 'second-program', secretId });

    // A program with no checkpoint yet starts from the beginning of the feed; the first keeps its own.
    expect(results[0]).toMatchObject({ program: 'second-program', startCheckpoint: null });
    expect(results.reduce((sum, r) => sum + r.published, 0)).toBe(simulator.events().length);
    expect(await storedCheckpoint()).toBe(checkpointBefore);
    expect(await storedCheckpoint('second-program')).toBe(simulator.events().at(-1)!.sequence_number);
    await expect(handler({ program: 'x', secretId: 'not-granted' }, context())).rejects.toThrow(
      /not one of this function's secrets/,
    );
    await drainAll();
  });

  // Last on purpose: afterwards the secret points at another simulator.
  it('re-reads a rotated secret after a 401 and continues against the new credentials', async () => {
    const checkpoint = (await storedCheckpoint())!;
    const rotated = await startSimulator({ seed: 8, maxPollHoldMs: 300, unknownTypeRatio: 0 });
    try {
      rotated.generate(checkpoint + 4);
      const program = rotated.programs[0]!;
      await aws.secretsManager.send(
        new PutSecretValueCommand({
          SecretId: secretId,
          SecretString: JSON.stringify({
            base_url: rotated.url,
            client_id: program.clientId,
            client_secret: program.clientSecret,
          }),
        }),
      );
      // The old credentials are still cached (5 min TTL): only the 401 makes the poller re-read.
      simulator.faults.revokeTokens();

      const result = await handler({}, context());

      expect(result.published).toBe(4);
      expect(result.checkpoint).toBe(checkpoint + 4);
      expect(rotated.stats.tokensIssued).toBe(1);
      expect(JSON.stringify(result)).not.toContain(program.clientSecret);
      expect(stdout.join('')).not.toContain(program.clientSecret);
      await drainAll();
    } finally {
      await rotated.close();
    }
  });
});
