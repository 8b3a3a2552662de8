/**
 * `archive-replay` and `status` on a Custom Event Bus, the CLI spawned as an operator runs it:
 * the bus's API (EventBridgeV2, RPC v2 CBOR) answered by a scripted loopback server that records
 * every request, so the test checks exactly what the CLI asks the bus to do (and that each request
 * is signed as the SDK signs); everything else (the stack's outputs, the checkpoint table) in moto.
 * The last test replays through the stand-in bus (test/support/custom-bus/), which delivers the
 * retained events to a queue in moto, read back with the subscriber kit.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { tag } from '@smithy/core/cbor';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseEvent } from '../../../functions/subscriber/index.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { cborAnswer, decodedBody, sdkAuthorization } from '../../support/cbor-responders.ts';
import { motoCliEnvironment, runCli } from '../../support/cli-process.ts';
import { startCustomBus } from '../../support/custom-bus/index.ts';
import { createActiveBus, standInRpc } from '../../support/custom-bus/stand-in-client.ts';
import { createOutputsStack } from '../../support/moto-deployment.ts';
import {
  closeAll,
  type RecordedRequest,
  type Responder,
  startScriptedServer,
} from '../../support/scripted-http-server.ts';
import { createQueue } from '../../support/sqs-queues.ts';

const ACCOUNT = '123456789012';
const BUS_ARN = `arn:aws:events:us-east-1:${ACCOUNT}:event-busv2/banking-events/0123456789abcdefghijklmno`;
const subscriberArn = (name: string) =>
  `arn:aws:events:us-east-1:${ACCOUNT}:subscriber/${name}/abcdefghijklmno0123456789`;
const DAY_MS = 86_400_000;

/** A FIFO subscriber of the bus as the construct makes one: a route's queue, WITH_METADATA. */
const TRANSACTIONS = {
  SubscriberArn: subscriberArn('transactions'),
  Name: 'transactions',
  EventBusArn: BUS_ARN,
  InvokeConfiguration: {
    RoleArn: `arn:aws:iam::${ACCOUNT}:role/bus-delivery`,
    TargetArn: `arn:aws:sqs:us-east-1:${ACCOUNT}:transactions.fifo`,
    SqsParameters: { MessageGroupId: '{% $events.SystemMetadata.EventGroupId %}' },
  },
  FilterConfiguration: {
    Filters: [{ Pattern: JSON.stringify({ 'detail-type': ['transaction'] }), Scope: 'DATA' }],
  },
  Type: 'FIFO',
  StartingPosition: 'LATEST',
  Transformer: { Type: 'WITH_METADATA' },
  RetryPolicy: { MaxRetryAttempts: 5, MaxEventAgeInSeconds: 300 },
  OnFailureConfiguration: { Arn: `arn:aws:sqs:us-east-1:${ACCOUNT}:transactions-dlq` },
  State: 'RUNNING',
  CreationTime: new Date('2026-11-01T00:00:00Z'),
};

/** The bus's API: its answers by operation, every request recorded. */
function busApi(retentionStart: Date): Responder {
  return (request, response) => {
    const operation = request.url.split('/').pop();
    const body = decodedBody(request) as Record<string, unknown>;
    const answers: Record<string, unknown> = {
      DescribeEventBus: {
        EventBusArn: BUS_ARN,
        Name: 'banking-events',
        StorageConfiguration: {
          RetentionPeriodInDays: 14,
          RetentionWindowStartTime: tag({ tag: 1, value: retentionStart.getTime() / 1000 }),
        },
        State: 'ACTIVE',
      },
      ListSubscribers: {
        Subscribers: [
          { Name: 'transactions', SubscriberArn: TRANSACTIONS.SubscriberArn, EventBusArn: BUS_ARN },
          {
            Name: 'bep-replay-20261101000000-abcd-1',
            SubscriberArn: subscriberArn('old'),
            EventBusArn: BUS_ARN,
          },
        ],
      },
      DescribeSubscriber: { ...TRANSACTIONS, CreationTime: tag({ tag: 1, value: 1_793_491_200 }) },
      CreateSubscriber: { SubscriberArn: subscriberArn(String(body.Name)), Name: body.Name },
    };
    const answer = answers[operation ?? ''];
    if (answer === undefined) {
      cborAnswer(400, { __type: 'InvalidInputException', Message: `unexpected ${operation}` })(
        request,
        response,
      );
      return;
    }
    cborAnswer(200, answer)(request, response);
  };
}

const operationOf = (request: RecordedRequest) => request.url.split('/').pop();

describe('the CLI on a Custom Event Bus', () => {
  let aws: MotoEnvironment;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(() => closeAll());

  const cli = (args: readonly string[], busEndpoint: string) =>
    runCli(args, {
      env: { ...motoCliEnvironment(inject('motoEndpoint')), AWS_ENDPOINT_URL_EVENTBRIDGEV2: busEndpoint },
    });

  it('archive-replay copies each subscriber of the bus as a point-in-time subscriber over the window', async () => {
    const now = Date.now();
    const bus = await startScriptedServer(busApi(new Date(now - 14 * DAY_MS)));
    const since = new Date(now - 2 * DAY_MS);
    const until = new Date(now - DAY_MS);

    const result = await cli(
      [
        'archive-replay',
        '--event-bus',
        BUS_ARN,
        '--since',
        since.toISOString(),
        '--until',
        until.toISOString(),
        '--json',
      ],
      bus.baseUrl,
    );

    expect(result.code, result.stderr).toBe(0);
    const creates = bus.requests.filter((request) => operationOf(request) === 'CreateSubscriber');
    expect(creates).toHaveLength(1); // the earlier replay copy is not copied again
    const created = decodedBody(creates[0]!) as Record<string, unknown>;
    expect(created).toMatchObject({
      Name: expect.stringMatching(/^bep-replay-\d{14}-[0-9a-f]{4}-1$/),
      EventBusArn: BUS_ARN,
      InvokeConfiguration: TRANSACTIONS.InvokeConfiguration,
      FilterConfiguration: TRANSACTIONS.FilterConfiguration,
      Type: 'FIFO',
      RetryPolicy: TRANSACTIONS.RetryPolicy,
      OnFailureConfiguration: TRANSACTIONS.OnFailureConfiguration,
      Transformer: { Type: 'WITH_METADATA' },
      StartingPosition: 'POINT_IN_TIME',
      PointInTimeConfiguration: {
        PointType: 'TIMESTAMP',
        StartingPoint: expect.objectContaining({ tag: 1, value: since.getTime() / 1000 }),
        EndPoint: expect.objectContaining({ tag: 1, value: until.getTime() / 1000 }),
      },
      State: 'RUNNING',
    });
    expect(created).not.toHaveProperty('CreationTime');
    expect(JSON.parse(result.stdout)).toMatchObject({
      eventBus: BUS_ARN,
      retentionPeriodInDays: 14,
      subscribers: [
        { name: created.Name, copyOf: 'transactions', targetArn: TRANSACTIONS.InvokeConfiguration.TargetArn },
      ],
    });
    expect(result.stderr).toContain(
      `aws eventsv2 delete-subscriber --subscriber-arn ${subscriberArn(String(created.Name))}`,
    );
    for (const request of bus.requests) {
      expect(request.headers.authorization).toBe(
        await sdkAuthorization(request, {
          service: 'events',
          region: 'us-east-1',
          credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
        }),
      );
    }
  });

  it('archive-replay refuses a window older than the retention, a classic flag, and an unknown subscriber, creating nothing', async () => {
    const now = Date.now();
    const bus = await startScriptedServer(busApi(new Date(now - 3 * DAY_MS)));
    const base = ['archive-replay', '--event-bus', BUS_ARN];

    const tooOld = await cli([...base, '--since', '5d'], bus.baseUrl);
    const withRule = await cli([...base, '--since', '1d', '--rule', 'my-rule'], bus.baseUrl);
    const unknown = await cli([...base, '--since', '1d', '--subscriber', 'ledger'], bus.baseUrl);

    expect([tooOld.code, withRule.code, unknown.code]).toEqual([2, 2, 2]);
    expect(tooOld.stderr).toMatch(/before the bus's retention window, which starts at/);
    expect(withRule.stderr).toMatch(/--rule is for a classic bus/);
    expect(unknown.stderr).toMatch(/Subscriber ledger does not exist .*\(the bus has: transactions/);
    expect(bus.requests.map(operationOf)).not.toContain('CreateSubscriber');
  });

  it("status shows the retention window of the stack's custom bus", async () => {
    const retentionStart = new Date('2026-11-12T10:00:00Z');
    const bus = await startScriptedServer(busApi(retentionStart));
    const tableName = await aws.createCheckpointTable();
    const stackName = `CliCustomBus-${randomUUID().slice(0, 8)}`;
    const outputs = {
      Programs: 'default',
      CheckpointTableName: tableName,
      EventBusKind: 'custom',
      EventBusName: 'banking-events',
      EventBusArn: BUS_ARN,
    };
    await createOutputsStack(stackName, outputs);

    const text = await cli(['--stack', stackName, 'status'], bus.baseUrl);
    const json = await cli(['--stack', stackName, 'status', '--json'], bus.baseUrl);

    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/retention\s+│ 14 day\(s\)/);
    expect(text.stdout).toContain('2026-11-12T10:00:00.000Z');
    expect(JSON.parse(json.stdout).bus).toEqual({
      eventBusArn: BUS_ARN,
      retentionPeriodInDays: 14,
      retentionWindowStartTime: '2026-11-12T10:00:00.000Z',
    });
    expect(decodedBody(bus.requests[0]!)).toEqual({ EventBusArn: BUS_ARN });
  });

  it('replay --local is refused on a Custom Event Bus before anything is read: the function replays, with its event groups', async () => {
    const bus = await startScriptedServer(busApi(new Date()));
    const stateFile = path.join(mkdtempSync(path.join(tmpdir(), 'bep-replay-')), 'state.json');

    // A secret that does not exist: reading it first would fail otherwise.
    const result = await cli(
      [
        'replay',
        '--local',
        '--event-bus',
        BUS_ARN,
        '--secret-id',
        'no-such-secret',
        '--from',
        '1',
        '--to',
        '5',
        '--state-file',
        stateFile,
      ],
      bus.baseUrl,
    );

    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(
      /replay --local publishes from this machine, and the Custom Event Bus arn:aws:events:\S+ keeps each event group in order/,
    );
    expect(result.stderr).toMatch(/leave --local out/);
    expect(bus.requests).toEqual([]);
    expect(existsSync(stateFile)).toBe(false);
  });

  it('archive-replay through the stand-in bus: the window comes to the same queue again, as a REPLAY', async () => {
    // The stand-in's clock half an hour behind: the whole window lies in the operator's past.
    const bus = await startCustomBus({
      motoEndpoint: inject('motoEndpoint'),
      startTime: Date.now() - 30 * 60_000,
    });
    try {
      const rpc = standInRpc(bus);
      const busArn = await createActiveBus(rpc, {
        Name: aws.uniqueName('banking-events'),
        StorageConfiguration: { RetentionPeriodInDays: 14 },
      });
      const queue = await createQueue(aws.sqs, aws.uniqueName('transactions'));
      await rpc.call('CreateSubscriber', {
        Name: 'transactions',
        EventBusArn: busArn,
        InvokeConfiguration: { RoleArn: `arn:aws:iam::${ACCOUNT}:role/bus-delivery`, TargetArn: queue.arn },
        FilterConfiguration: {
          Filters: [{ Pattern: JSON.stringify({ 'detail-type': ['transaction'] }), Scope: 'DATA' }],
        },
        Transformer: { Type: 'WITH_METADATA' },
        StartingPosition: 'LATEST',
      });
      const start = bus.now();
      const detail = (sequence: number) =>
        JSON.stringify({
          id: `evt-${sequence}`,
          program_id: 'program-1',
          sequence_number: sequence,
          created_dt: '2026-11-26T10:00:00Z',
          type: 'transaction',
          data: { transaction_id: 'tx-1', status: sequence === 1 ? 'PENDING' : 'COMPLETE' },
        });
      await rpc.call('PutEvents', {
        EventBusArn: busArn,
        Entries: [1, 2].map((sequence) => ({
          Source: 'banking.events',
          DetailType: 'transaction',
          Detail: detail(sequence),
          SystemMetadata: { EventGroupId: 'program-1', DeduplicationId: `evt-${sequence}` },
        })),
      });
      await bus.settled();
      // A standard queue keeps no order: read back by id.
      const byId = (bodies: string[]) =>
        bodies
          .map((body) => parseEvent(body))
          .sort((a, b) => String(a.detail.id).localeCompare(String(b.detail.id)));
      const live = byId(await aws.drainQueueBodies(queue.url));
      await bus.advanceClock(60_000);

      const result = await cli(
        [
          'archive-replay',
          '--event-bus',
          busArn,
          '--since',
          new Date(start).toISOString(),
          '--until',
          new Date(start + 30_000).toISOString(),
          '--subscriber',
          'transactions',
        ],
        bus.endpoint,
      );
      await bus.advanceClock(0);
      const replayed = byId(await aws.drainQueueBodies(queue.url));

      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(
        /started by 1 subscriber\(s\):\n {2}bep-replay-\d{14}-[0-9a-f]{4}-1 \(a copy of transactions/,
      );
      expect(live.map((event) => [event.detail.id, event.busDeliveryType])).toEqual([
        ['evt-1', 'LIVE'],
        ['evt-2', 'LIVE'],
      ]);
      expect(replayed.map((event) => [event.detail.id, event.busEventGroup, event.busDeliveryType])).toEqual([
        ['evt-1', 'program-1', 'REPLAY'],
        ['evt-2', 'program-1', 'REPLAY'],
      ]);
      expect(replayed.map((event) => event.busSequenceNumber)).toEqual(
        live.map((event) => event.busSequenceNumber),
      );
    } finally {
      await bus.close();
    }
  });
});
