/**
 * The example subscriber as Lambda runs it, end to end through moto: the shipped poller publishes
 * the simulator's events to a bus carrying the stack's own rules (the subscriber's, the
 * quarantine's, the catch-all's, event patterns read from the synthesized template); the bundled
 * example subscriber, under the runtime-faithful harness, receives SQS batches built from the
 * messages moto delivered to its queue, as the event source mapping would hand them over.
 * Idempotency records live in moto's DynamoDB, claim-check bodies in moto's S3.
 */
import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { CreateEventBusCommand } from '@aws-sdk/client-eventbridge';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import type { RawEvent } from '../../../functions/simulator/raw-event.ts';
import { parseEvent } from '../../../functions/subscriber/index.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type Invocation, LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { pollerLambda, simulatorSecret, summaryOf } from '../../support/poller-lambda.ts';
import { SqsEventSourceStandIn } from '../../support/sqs-event-source.ts';

type Queue = 'subscriber' | 'quarantine' | 'unrouted';

interface LogLine {
  readonly level: string;
  readonly message: string;
  readonly [field: string]: unknown;
}

let aws: MotoEnvironment;
let s3: S3Client;
let simulator: RunningSimulator;
let poller: LambdaContainer;
let subscriber: LambdaContainer;
let bucket: string;
let checkpointTable: string;
let program: string;
const queues = new Map<Queue, SqsEventSourceStandIn>();

/** Every event of `source` the stack's rule for `queue` matches lands in a queue of its own. */
async function ruleIntoQueue(busName: string, queue: Queue, eventPattern: unknown): Promise<void> {
  const { url } = await aws.routeToQueue(busName, eventPattern, queue);
  queues.set(queue, new SqsEventSourceStandIn(aws.sqs, url));
}

beforeAll(async () => {
  const endpoint = inject('motoEndpoint');
  const deployment = inject('subscriberDeployment');
  aws = useMotoEnvironment(endpoint);
  s3 = new S3Client({});
  bucket = aws.uniqueName('claims');
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  checkpointTable = await aws.createCheckpointTable();
  const idempotencyTable = await aws.createIdempotencyTable();
  const busName = aws.uniqueName('bus');
  await aws.eventBridge.send(new CreateEventBusCommand({ Name: busName }));
  for (const queue of ['subscriber', 'quarantine', 'unrouted'] as const) {
    await ruleIntoQueue(busName, queue, deployment.eventPatterns[queue]);
  }

  simulator = await startSimulator({ seed: 900, maxPollHoldMs: 300, unknownTypeRatio: 0 });
  program = aws.uniqueName('program');
  poller = pollerLambda({
    artifact: inject('pollerArtifact'),
    motoEndpoint: endpoint,
    secretId: await aws.createSecret(simulatorSecret(simulator)),
    checkpointTable,
    eventBusName: busName,
    timeoutMs: 4_000,
    // Events over 4 KiB go through the claim check, so a test needs no megabyte payloads.
    environment: { DEFAULT_PROGRAM: program, CLAIM_CHECK_BUCKET: bucket, MAX_EVENT_ENTRY_BYTES: '4096' },
  });
  const { artifact } = deployment;
  subscriber = new LambdaContainer({
    codeDir: artifact.codeDir,
    functionName: 'example-subscriber',
    memoryMb: artifact.memoryMb,
    timeoutMs: artifact.timeoutSeconds * 1_000,
    environment: {
      ...artifact.environment,
      IDEMPOTENCY_TABLE: idempotencyTable,
      CLAIM_CHECK_BUCKET: bucket,
      AWS_REGION: 'us-east-1',
      AWS_DEFAULT_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_ENDPOINT_URL: endpoint,
    },
  });
});

afterAll(async () => {
  await subscriber?.close();
  await poller?.close();
  await simulator?.close();
  s3?.destroy();
  aws?.restore();
});

/** One run of the shipped poller; resolves once what it published has reached the queues. */
async function publish(): Promise<number> {
  return summaryOf(await poller.invoke({})).published;
}

interface Delivery {
  readonly invocation: Invocation;
  readonly failed: string[];
  readonly logs: LogLine[];
  readonly messageIds: string[];
}

/** Hands the next batch of `queue` to the subscriber as the event source mapping would, and settles it. */
async function deliver(queue: Queue): Promise<Delivery> {
  const source = queues.get(queue)!;
  const batch = await source.receive();
  const invocation = await subscriber.invoke(batch);
  const failed = await source.settle(batch, invocation);
  await source.redeliverFailed(batch, failed);
  return {
    invocation,
    failed,
    logs: logLines(invocation),
    messageIds: batch.Records.map((record) => record.messageId),
  };
}

/** The Powertools log lines of an invocation (warnings and errors go to stderr). */
function logLines(invocation: Invocation): LogLine[] {
  return `${invocation.stdout}\n${invocation.stderr}`
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"level"'))
    .map((line) => JSON.parse(line) as LogLine);
}

const handled = (delivery: Delivery): LogLine[] =>
  delivery.logs.filter((line) => line.message === 'Transaction handled');

describe('the example subscriber, as Lambda runs it, on what the shipped poller publishes', () => {
  let transactions: RawEvent[];

  it('receives the transactions from its queue, and only those, in sequence order', async () => {
    transactions = simulator.generate(6, { type: 'transaction' });
    simulator.generate(3, { type: 'account_status' });

    expect(await publish()).toBe(9);
    const delivery = await deliver('subscriber');

    expect(delivery.invocation.outcome).toEqual({ kind: 'response', result: { batchItemFailures: [] } });
    expect(delivery.messageIds).toHaveLength(6);
    expect(handled(delivery).map((line) => line.eventId)).toEqual(transactions.map((event) => event.id));
    expect(handled(delivery)[0]).toMatchObject({
      service: 'example-subscriber',
      sequenceNumber: transactions[0]!.sequence_number,
      amount: transactions[0]!.data.amount,
      claimChecked: false,
    });
    expect((await deliver('subscriber')).messageIds).toEqual([]);
  });

  it('handles a duplicate delivery once: the same events published again after a rewind', async () => {
    // What `banking-events-poller rewind --to beginning` writes: the next run publishes everything again.
    await aws.dynamodb.send(
      new UpdateItemCommand({
        TableName: checkpointTable,
        Key: { pk: { S: `program#${program}` } },
        UpdateExpression: 'SET checkpoint = :zero',
        ExpressionAttributeValues: { ':zero': { N: '0' } },
      }),
    );

    expect(await publish()).toBe(9);
    const delivery = await deliver('subscriber');

    expect(delivery.messageIds).toHaveLength(6);
    expect(delivery.failed).toEqual([]);
    expect(handled(delivery)).toEqual([]);
    expect(
      delivery.logs
        .filter((line) => line.message.startsWith('Duplicate delivery'))
        .map((line) => line.idempotencyKey),
    ).toEqual(transactions.map((event) => `event:${event.id}`));
  });

  it('reads a claim-checked event whole from S3, and refuses a tampered body until it is right again', async () => {
    const whole = simulator.append({
      type: 'TRANSACTION',
      data: { transaction_id: 'tx-large', amount: 123_456, type: 'inbound', note: 'n'.repeat(6_000) },
    });
    const tampered = simulator.append({
      type: 'TRANSACTION',
      data: { transaction_id: 'tx-tampered', amount: 500, type: 'outbound', note: 't'.repeat(6_000) },
    });
    expect(await publish()).toBe(2);
    const key = `${tampered.program_id}/${tampered.sequence_number}-${tampered.id}.json`;
    const original = await (
      await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
    ).Body!.transformToString();
    const forged = original.replace('"amount":500', '"amount":900');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: forged }));

    const first = await deliver('subscriber');

    expect(first.messageIds).toHaveLength(2);
    expect(first.failed).toHaveLength(1);
    expect(handled(first)).toEqual([
      expect.objectContaining({ eventId: whole.id, claimChecked: true, noteLength: 6_000, amount: 123_456 }),
    ]);
    expect(first.logs).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        messageId: first.failed[0],
        eventId: tampered.id,
        error: expect.objectContaining({ code: 'CLAIM_CHECK_MISMATCH' }),
      }),
    );

    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: original }));
    const again = await deliver('subscriber');

    expect(again.messageIds).toEqual(first.failed);
    expect(again.failed).toEqual([]);
    expect(handled(again)).toEqual([
      expect.objectContaining({ eventId: tampered.id, claimChecked: true, amount: 500 }),
    ]);
  });

  it('sends an invalid_event to the quarantine queue, where the kit reads it as quarantined', async () => {
    const broken = simulator.append({
      type: 'TRANSACTION',
      created_dt: 'not a time',
      data: { transaction_id: 'tx-broken', amount: 1 },
    });

    expect(await publish()).toBe(1);
    const subscriberDelivery = await deliver('subscriber');
    const quarantine = await queues.get('quarantine')!.receive();

    expect(subscriberDelivery.messageIds).toEqual([]);
    expect(quarantine.Records).toHaveLength(1);
    const event = parseEvent(quarantine.Records[0]!);
    expect(event).toMatchObject({
      kind: 'invalid_event',
      detailType: 'invalid_event',
      detail: {
        id: broken.id,
        sequence_number: broken.sequence_number,
        error: { code: 'PAYLOAD_INVALID', field: expect.stringMatching(/\.created_dt$/) },
        raw: { id: broken.id, created_dt: 'not a time' },
      },
    });
    // Handed to the subscriber anyway (a rule wider than meant), it is passed over, not failed.
    const invocation = await subscriber.invoke(quarantine);
    expect(invocation.outcome).toEqual({ kind: 'response', result: { batchItemFailures: [] } });
    expect(logLines(invocation)).toContainEqual(
      expect.objectContaining({
        level: 'WARN',
        message: expect.stringMatching(/belongs to the quarantine queue/),
      }),
    );
  });

  it('passes an event of an unknown type on as unknown, not as an error', async () => {
    const unknown = simulator.append({ type: 'CARD_LIMIT_CHANGED', data: { card_id: 'card-9', limit: 500 } });

    expect(await publish()).toBe(1);
    const unrouted = await queues.get('unrouted')!.receive();
    expect(unrouted.Records).toHaveLength(1);
    const invocation = await subscriber.invoke(unrouted);

    expect(invocation.outcome).toEqual({ kind: 'response', result: { batchItemFailures: [] } });
    expect(logLines(invocation)).toContainEqual(
      expect.objectContaining({
        message: expect.stringMatching(/type this subscriber does not know/),
        detailType: 'card_limit_changed',
        eventId: unknown.id,
      }),
    );
  });

  it('refuses an amount beyond 2^53 by name, rather than handle a rounded one', async () => {
    const big = simulator.append({
      type: 'TRANSACTION',
      dataText: '{"transaction_id":"tx-big","amount":9007199254740993,"type":"inbound"}',
    });
    const fine = simulator.generate(1, { type: 'transaction' });

    expect(await publish()).toBe(2);
    const delivery = await deliver('subscriber');

    expect(delivery.failed).toHaveLength(1);
    expect(handled(delivery).map((line) => line.eventId)).toEqual([fine[0]!.id]);
    expect(delivery.logs).toContainEqual(
      expect.objectContaining({
        level: 'ERROR',
        messageId: delivery.failed[0],
        error: expect.objectContaining({
          code: 'EVENT_UNSAFE_INTEGER',
          field: 'detail.data.amount',
          context: expect.objectContaining({ eventId: big.id }),
        }),
      }),
    );
  });
});
