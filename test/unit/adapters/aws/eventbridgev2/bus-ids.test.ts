/**
 * The Custom Event Bus's ids: a group or a de-duplication key longer than the bus takes (128
 * characters) is sent as a hash of it, keeping its kind, the same way every time.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  boundedBusId,
  MAX_BUS_ID_LENGTH,
} from '../../../../../functions/adapters/aws/eventbridgev2/bus-ids.ts';
import { CustomBusPublisher } from '../../../../../functions/adapters/aws/eventbridgev2/custom-bus-publisher.ts';
import { makeEvent } from '../../../../support/in-memory-ports.ts';

const ARN = 'arn:aws:events:eu-west-1:123456789012:event-busv2/bank-events/abcdefghijklmnopqrstuvwxy';

describe('boundedBusId', () => {
  it('keeps an id of up to 128 characters and hashes a longer one, keeping its kind', () => {
    expect(boundedBusId(`account:${'a'.repeat(119)}`)).toBe(`account:${'a'.repeat(119)}`);
    expect(boundedBusId(`account:${'a'.repeat(121)}`)).toMatch(/^account:sha256:[0-9a-f]{64}$/);
    expect(boundedBusId('x'.repeat(129))).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("names a long account's group by its hash, the same way every time", () => {
    const longId = 'a'.repeat(200);
    const event = makeEvent(7, { type: 'account_status', data: { account_id: longId } });
    const publisher = new CustomBusPublisher({
      eventBusArn: ARN,
      source: 'banking.events',
      program: 'retail',
      groupBy: 'account',
    });

    const group = publisher.eventGroup(event);

    expect(group).toBe(`account:sha256:${createHash('sha256').update(`account:${longId}`).digest('hex')}`);
    expect(group!.length).toBeLessThanOrEqual(MAX_BUS_ID_LENGTH);
    expect(publisher.eventGroup({ ...event })).toBe(group);
  });
});
