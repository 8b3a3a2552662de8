/**
 * CustomBusPublisher against the custom-bus stand-in (RPC v2 CBOR, SigV4 checked, botocore's input
 * rules, delivery to moto's SQS): grouped by account, each account's status changes and each
 * transaction's lifecycle reach a FIFO subscriber's queue in their own message group, in order;
 * a batch sent again is accepted as DEDUPLICATED and delivers nothing twice.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CustomBusPublisher } from '../../../../functions/adapters/aws/eventbridgev2/custom-bus-publisher.ts';
import type { EventBridgeV2Rpc } from '../../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import type { BankingEvent } from '../../../../functions/core/banking-event.ts';
import { createRandom } from '../../../../functions/simulator/seeded-random.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';
import { type CustomBus, startCustomBus } from '../../../support/custom-bus/index.ts';
import {
  createActiveBus,
  standInRpc,
  subscribeFifoQueue,
} from '../../../support/custom-bus/stand-in-client.ts';
import { makeEvent } from '../../../support/in-memory-ports.ts';
import { drainMessages, sequencesByGroup } from '../../../support/sqs-queues.ts';

let aws: MotoEnvironment;
let bus: CustomBus;
let rpc: EventBridgeV2Rpc;

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), seed: 2_701 });
  rpc = standInRpc(bus);
});

afterAll(async () => {
  await bus?.close();
  aws?.restore();
});

/** 300 events: five accounts' status changes and transactions' PENDING → COMPLETE, interleaved. */
function feed(): BankingEvent[] {
  const random = createRandom(2_701).next;
  const events: BankingEvent[] = [];
  const pending: string[] = [];
  let transactions = 0;
  for (let sequence = 1; sequence <= 300; sequence += 1) {
    const roll = random();
    if (roll < 0.5) {
      const account = `acct-${Math.floor(random() * 5)}`;
      events.push(
        makeEvent(sequence, { type: 'account_status', data: { account_id: account, n: sequence } }),
      );
    } else if (pending.length > 0 && (roll < 0.75 || transactions >= 40)) {
      const id = pending.splice(Math.floor(random() * pending.length), 1)[0]!;
      events.push(
        makeEvent(sequence, { type: 'transaction', data: { transaction_id: id, status: 'COMPLETE' } }),
      );
    } else {
      transactions += 1;
      const id = `tx-${transactions}`;
      pending.push(id);
      events.push(
        makeEvent(sequence, { type: 'transaction', data: { transaction_id: id, status: 'PENDING' } }),
      );
    }
  }
  return events;
}

describe('CustomBusPublisher on the stand-in', () => {
  it("delivers each account's and each transaction's events in order in their own group, and nothing twice", async () => {
    const busArn = await createActiveBus(rpc, { Name: aws.uniqueName('bank') });
    const queueUrl = await subscribeFifoQueue(rpc, aws.sqs, { busArn, uniqueName: aws.uniqueName });
    const publisher = new CustomBusPublisher({
      rpc,
      eventBusArn: busArn,
      source: 'banking.events',
      program: 'retail',
      groupBy: 'account',
    });
    const events = feed();
    const signal = new AbortController().signal;

    const outcomes = [];
    for (let start = 0; start < events.length; start += publisher.limits.maxEntriesPerBatch) {
      outcomes.push(...(await publisher.send(events.slice(start, start + 100), signal)));
    }
    const resent = await publisher.send(events.slice(100, 200), signal);
    await bus.settled();
    const delivered = sequencesByGroup(await drainMessages(aws.sqs, queueUrl));

    const expected = new Map<string, number[]>();
    for (const event of events) {
      const group = publisher.eventGroup(event)!;
      expected.set(group, [...(expected.get(group) ?? []), event.sequence_number]);
    }
    expect(outcomes).toEqual(events.map(() => ({ ok: true })));
    expect(resent).toEqual(events.slice(100, 200).map(() => ({ ok: true })));
    expect([...expected.keys()].filter((group) => group.startsWith('account:'))).toHaveLength(5);
    expect([...expected.keys()].filter((group) => group.startsWith('transaction:')).length).toBeGreaterThan(
      10,
    );
    expect(delivered).toEqual(expected);
  });
});
