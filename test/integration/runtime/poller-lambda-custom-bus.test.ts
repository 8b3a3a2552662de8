/**
 * The shipped function with `EVENT_BUS_KIND=custom`, run as Lambda runs it, against the custom-bus
 * stand-in (test/support/custom-bus: RPC v2 CBOR, SigV4 checked, delivery to moto's SQS): the
 * simulator's events reach a FIFO subscriber's SQS FIFO queue in sequence order, each once; a
 * re-run after a rewind within the 5-minute window is answered DEDUPLICATED and delivers nothing
 * twice; the operator's replay publishes through the same bus, de-duplicated likewise until the
 * window has passed; grouped by account, each account's and each transaction's events arrive in
 * their own message group, in order.
 */
import { cbor } from '@smithy/core/cbor';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import type { EventBridgeV2Rpc } from '../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { type CustomBus, DEDUPLICATION_WINDOW_MS, startCustomBus } from '../../support/custom-bus/index.ts';
import { createActiveBus, standInRpc, subscribeFifoQueue } from '../../support/custom-bus/stand-in-client.ts';
import { summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';
import { detailsOf, drainMessages, sequencesByGroup } from '../../support/sqs-queues.ts';

const scenarios = usePollerScenarios(2_700);

let bus: CustomBus;
let rpc: EventBridgeV2Rpc;

beforeAll(async () => {
  bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), seed: 27 });
  rpc = standInRpc(bus);
});

afterAll(async () => {
  await bus?.close();
});

/** A bus, ACTIVE, with a FIFO subscriber delivering RAW to a new SQS FIFO queue, grouped as published. */
async function busWithFifoQueue(): Promise<{ busArn: string; queueUrl: string }> {
  const { aws } = scenarios;
  const busArn = await createActiveBus(rpc, { Name: aws.uniqueName('bank') });
  return { busArn, queueUrl: await subscribeFifoQueue(rpc, aws.sqs, { busArn, uniqueName: aws.uniqueName }) };
}

/** The delivered envelopes' details, in the order the FIFO queue hands them out. */
async function drainDetails(queueUrl: string): Promise<{ id: string; sequence_number: number }[]> {
  return detailsOf(await drainMessages(scenarios.aws.sqs, queueUrl));
}

/** The success codes the stand-in answered PutEvents with, from `from` on. */
function successCodes(from: number): string[] {
  return bus.exchanges
    .slice(from)
    .filter((exchange) => exchange.operation === 'PutEvents' && exchange.status === 200)
    .flatMap((exchange) =>
      (cbor.deserialize(exchange.responseBody) as { Entries: { SuccessCode?: string }[] }).Entries.map(
        (entry) => entry.SuccessCode ?? 'none',
      ),
    );
}

describe('the deployed function on a Custom Event Bus', () => {
  it('delivers the feed to a FIFO queue in sequence order, once, and a re-run after a rewind is de-duplicated', async () => {
    const { busArn, queueUrl } = await busWithFifoQueue();
    const s = await scenarios.start({
      timeoutMs: 8_000,
      environment: {
        EVENT_BUS_KIND: 'custom',
        EVENT_BUS_NAME: busArn,
        EVENT_GROUP_BY: 'program',
        AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint,
      },
    });
    const events = s.simulator.generate(150);
    const before = bus.exchanges.length;

    const first = await s.invoke();
    await bus.settled();
    const delivered = await drainDetails(queueUrl);

    expect(summaryOf(first)).toMatchObject({ status: 'completed', published: 150 });
    expect(delivered.map((detail) => detail.id)).toEqual(events.map((event) => event.id));
    expect(successCodes(before)).toEqual(events.map(() => 'PUBLISHED'));
    // 150 events in two requests: up to 100 entries each.
    const requests = bus.exchanges.slice(before).filter((exchange) => exchange.operation === 'PutEvents');
    expect(requests.map((exchange) => (exchange.input!.Entries as unknown[]).length)).toEqual([100, 50]);

    // Rewind 40 events, as `rewind` does, within the bus's 5-minute window (its clock stands still).
    const checkpoint = events.at(-1)!.sequence_number;
    const rewindTo = events[109]!.sequence_number;
    const store = new DynamoDbCheckpointStore({
      client: scenarios.aws.dynamodb,
      tableName: scenarios.checkpointTable,
      program: s.program,
    });
    await expect(store.moveCheckpoint({ to: rewindTo, expected: checkpoint })).resolves.toMatchObject({
      moved: true,
    });
    const again = bus.exchanges.length;

    const rerun = await s.invoke();
    await bus.settled();

    expect(summaryOf(rerun)).toMatchObject({ status: 'completed', published: 40, checkpoint });
    expect(successCodes(again)).toEqual(events.slice(110).map(() => 'DEDUPLICATED'));
    expect(await drainDetails(queueUrl)).toEqual([]);
    expect(await s.checkpoint()).toBe(checkpoint);
  });

  it('replays a range through the same bus: de-duplicated within the window, delivered again once it passed', async () => {
    const { busArn, queueUrl } = await busWithFifoQueue();
    const s = await scenarios.start({
      environment: {
        EVENT_BUS_KIND: 'custom',
        EVENT_BUS_NAME: busArn,
        AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint,
      },
    });
    const events = s.simulator.generate(6);
    const replay = () =>
      s.invoke({
        operatorRequest: {
          version: 1,
          kind: 'replay',
          program: s.program,
          from: 2,
          to: 4,
          holdMs: 1000,
          dryRun: false,
        },
      });
    await s.invoke();
    await bus.settled();
    expect((await drainDetails(queueUrl)).map((detail) => detail.id)).toEqual(
      events.map((event) => event.id),
    );

    const within = await replay();
    await bus.settled();
    const duplicates = await drainDetails(queueUrl);
    await bus.advanceClock(DEDUPLICATION_WINDOW_MS);
    const after = await replay();
    await bus.settled();
    const redelivered = await drainDetails(queueUrl);

    expect(within.outcome).toMatchObject({
      kind: 'response',
      result: { kind: 'replay', published: 3, through: 4 },
    });
    expect(duplicates).toEqual([]);
    expect(after.outcome).toMatchObject({
      kind: 'response',
      result: { kind: 'replay', published: 3, through: 4 },
    });
    expect(redelivered.map((detail) => detail.id)).toEqual(events.slice(1, 4).map((event) => event.id));
    expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number);
  });

  it("grouped by account, delivers each account's and each transaction's events in order, in their own group", async () => {
    const { busArn, queueUrl } = await busWithFifoQueue();
    const s = await scenarios.start({
      timeoutMs: 8_000,
      environment: {
        EVENT_BUS_KIND: 'custom',
        EVENT_BUS_NAME: busArn,
        EVENT_GROUP_BY: 'account',
        AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint,
      },
    });
    const events = s.simulator.generate(200);
    const expected = new Map<string, number[]>();
    for (const event of events) {
      const data = event.data as { account_id?: string; transaction_id?: string };
      const type = event.type.toLowerCase();
      const group =
        type === 'account_status' && data.account_id !== undefined
          ? `account:${data.account_id}`
          : type === 'transaction' && data.transaction_id !== undefined
            ? `transaction:${data.transaction_id}`
            : s.program;
      expected.set(group, [...(expected.get(group) ?? []), event.sequence_number]);
    }

    const run = await s.invoke();
    await bus.settled();
    const delivered = await drainByGroup(queueUrl);

    expect(summaryOf(run)).toMatchObject({ status: 'completed', published: 200 });
    expect(expected.size).toBeGreaterThan(10);
    expect(delivered).toEqual(expected);
  });
});

/** Sequence numbers delivered, by SQS message group, in the order the FIFO queue hands them out. */
async function drainByGroup(queueUrl: string): Promise<Map<string, number[]>> {
  return sequencesByGroup(await drainMessages(scenarios.aws.sqs, queueUrl));
}
