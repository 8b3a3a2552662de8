/**
 * Each event handled once, on Powertools idempotency persisted in moto's DynamoDB: the kit's
 * handlers called in this process with SQS batches and events built from what the poller
 * publishes. (test/integration/subscriber/example-subscriber.test.ts runs the bundled example
 * subscriber under the Lambda harness on messages moto delivered.)
 */
import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import {
  HandledOnce,
  makeEventHandler,
  makeSqsBatchHandler,
  parseEvent,
  type SubscriberEvent,
  type SubscriberLogger,
} from '../../../functions/subscriber/index.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { delivered, deliveredText, published, rawEvent } from '../../support/published-events.ts';

/** A Lambda context with a real deadline, as the runtime hands one to a handler. */
function lambdaContext(timeoutMs = 30_000): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    functionName: 'subscriber-under-test',
    awsRequestId: randomUUID(),
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as Context;
}

function record(event: BankingEvent, messageId: string = randomUUID()): SQSRecord {
  return {
    messageId,
    receiptHandle: `handle-${messageId}`,
    body: deliveredText(event),
    attributes: { ApproximateReceiveCount: '1' } as SQSRecord['attributes'],
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:transactions',
    awsRegion: 'us-east-1',
  };
}

const batch = (...records: SQSRecord[]): SQSEvent => ({ Records: records });

/** Log lines the kit wrote, as `level message`. */
function recordingLogger(): SubscriberLogger & { readonly lines: string[] } {
  const lines: string[] = [];
  const log = (level: string) => (message: string, attributes: Readonly<Record<string, unknown>>) =>
    lines.push(`${level} ${message} ${JSON.stringify(attributes)}`);
  return { lines, info: log('INFO'), warn: log('WARN'), error: log('ERROR') };
}

/** A promise the test settles itself: no timer decides when a handler finishes. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

describe('handled once, persisted in DynamoDB (moto)', () => {
  let aws: MotoEnvironment;
  let tableName: string;
  let sequence = 0;

  /** Fresh events with ids of their own, so tests sharing the table never share keys. */
  function transactions(count: number): BankingEvent[] {
    return published(
      Array.from({ length: count }, () => {
        sequence += 1;
        return rawEvent(sequence, 'transaction', { amount: sequence * 100 }, randomUUID());
      }),
    );
  }

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    tableName = await aws.createIdempotencyTable();
  });

  afterAll(() => aws?.restore());

  it('runs the handler once for an event delivered in two batches, and says the second was a duplicate', async () => {
    const seen: string[] = [];
    const logger = recordingLogger();
    const handler = makeSqsBatchHandler(
      async (event) => {
        seen.push(event.detail.id ?? '');
      },
      { idempotency: { tableName }, logger },
    );
    const [event] = transactions(1);

    const first = await handler(batch(record(event!)), lambdaContext());
    const again = await handler(batch(record(event!)), lambdaContext());

    expect(first).toEqual({ batchItemFailures: [] });
    expect(again).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual([event!.id]);
    expect(logger.lines).toEqual([
      expect.stringMatching(/^INFO Duplicate delivery: .*"idempotencyKey":"event:[^"]+".*"messageId"/),
    ]);
  });

  it('runs the handler once for two copies in one batch, in sequence order, failing neither', async () => {
    const seen: number[] = [];
    const handler = makeSqsBatchHandler(
      async (event) => {
        seen.push(event.kind === 'transaction' ? event.detail.sequence_number : -1);
      },
      { idempotency: { tableName }, logger: recordingLogger() },
    );
    const [a, b, c] = transactions(3);

    const response = await handler(batch(record(c!), record(a!), record(b!), record(a!)), lambdaContext());

    expect(response).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual([a!, b!, c!].map((event) => event.sequence_number));
  });

  it('reports only the failed record; its next delivery runs the handler again', async () => {
    const [good, flaky] = transactions(2);
    let failures = 1;
    const seen: string[] = [];
    const logger = recordingLogger();
    const handler = makeSqsBatchHandler(
      async (event) => {
        if (event.detail.id === flaky!.id && failures-- > 0) throw new Error('ledger unavailable');
        seen.push(event.detail.id ?? '');
      },
      { idempotency: { tableName }, logger },
    );
    const flakyRecord = record(flaky!);

    const first = await handler(batch(record(good!), flakyRecord), lambdaContext());
    const redelivered = await handler(batch(flakyRecord), lambdaContext());

    expect(first).toEqual({ batchItemFailures: [{ itemIdentifier: flakyRecord.messageId }] });
    expect(redelivered).toEqual({ batchItemFailures: [] });
    expect(seen).toEqual([good!.id, flaky!.id]);
    expect(logger.lines).toEqual([
      expect.stringMatching(/^ERROR Event not handled; .*"message":"ledger unavailable"/),
    ]);
  });

  it('reports a record that is not an event, naming the field, and handles the rest', async () => {
    const [good] = transactions(1);
    const broken = { ...record(good!), messageId: 'broken-1', body: '{"version":"0"}' };
    const logger = recordingLogger();
    const seen: string[] = [];
    const handler = makeSqsBatchHandler(async (event) => void seen.push(event.detail.id ?? ''), {
      idempotency: { tableName },
      logger,
    });

    const response = await handler(batch(record(good!), broken), lambdaContext());

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'broken-1' }] });
    expect(seen).toEqual([good!.id]);
    expect(logger.lines.join('\n')).toMatch(/"code":"EVENT_INVALID","field":"id"/);
  });

  it('fails the whole batch when every record fails, so SQS delivers it all again', async () => {
    const [event] = transactions(1);
    const handler = makeSqsBatchHandler(
      async () => {
        throw new Error('down');
      },
      { idempotency: { tableName }, logger: recordingLogger() },
    );

    await expect(handler(batch(record(event!)), lambdaContext())).rejects.toMatchObject({
      name: 'FullBatchFailureError',
    });
  });

  it('refuses a copy while the first delivery is still being handled elsewhere, then skips it once done', async () => {
    const [event] = transactions(1);
    const release = deferred();
    const started = deferred();
    let runs = 0;
    // The first run holds on until the test releases it; later ones return at once.
    const slow = async (): Promise<void> => {
      runs += 1;
      if (runs > 1) return;
      started.resolve();
      await release.promise;
    };
    // Two execution environments: each its own handler and persistence layer, one table.
    const first = makeSqsBatchHandler(slow, { idempotency: { tableName }, logger: recordingLogger() });
    const secondLogger = recordingLogger();
    const second = makeSqsBatchHandler(slow, { idempotency: { tableName }, logger: secondLogger });
    const copy = record(event!);

    const inFlight = first(batch(record(event!)), lambdaContext());
    await started.promise;
    const concurrent = await second(batch(copy, record(transactions(1)[0]!)), lambdaContext());
    release.resolve();
    await inFlight;
    const later = await second(batch(copy), lambdaContext());

    expect(concurrent).toEqual({ batchItemFailures: [{ itemIdentifier: copy.messageId }] });
    expect(secondLogger.lines[0]).toMatch(/^WARN Event being handled by another invocation right now/);
    expect(later).toEqual({ batchItemFailures: [] });
    expect(runs).toBe(2);
  });

  it('as a Lambda target: returns the stored result for a duplicate without running again', async () => {
    const [event] = transactions(1);
    let runs = 0;
    const handler = makeEventHandler(
      async (received: SubscriberEvent) => {
        runs += 1;
        return { booked: received.detail.id, run: runs };
      },
      { idempotency: { tableName }, logger: recordingLogger() },
    );

    const first = await handler(delivered(event!), lambdaContext());
    const duplicate = await handler(delivered(event!), lambdaContext());

    expect(first).toEqual({ booked: event!.id, run: 1 });
    expect(duplicate).toEqual(first);
    expect(runs).toBe(1);
  });

  it('keeps one COMPLETED record per event, expiring after 14 days by default, keyed under the prefix', async () => {
    const [event] = transactions(1);
    const once = new HandledOnce(async () => 'done', {
      idempotency: { tableName, keyPrefix: 'ledger-subscriber' },
      logger: recordingLogger(),
    });
    once.registerLambdaContext(lambdaContext());
    const before = Math.floor(Date.now() / 1000);

    const outcome = await once.handle(parseEvent(deliveredText(event!)), { lambdaContext: lambdaContext() });
    const after = Math.ceil(Date.now() / 1000);

    const items = await aws.dynamodb.send(new ScanCommand({ TableName: tableName }));
    const ours = (items.Items ?? []).filter((item) => item.id?.S?.startsWith('ledger-subscriber#'));
    expect(outcome).toEqual({ result: 'done', duplicate: false, idempotencyKey: `event:${event!.id}` });
    expect(ours).toHaveLength(1);
    expect(ours[0]?.status?.S).toBe('COMPLETED');
    const expiration = Number(ours[0]?.expiration?.N);
    expect(expiration).toBeGreaterThanOrEqual(before + 14 * 24 * 3600);
    expect(expiration).toBeLessThanOrEqual(after + 14 * 24 * 3600);
  });
});
