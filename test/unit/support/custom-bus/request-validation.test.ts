import { tag } from '@smithy/core/cbor';
import { describe, expect, it } from 'vitest';
import { loadRequestModel, requestProblems } from '../../../support/custom-bus/request-validation.ts';

const model = loadRequestModel();
const busArn = 'arn:aws:events:us-east-1:123456789012:event-busv2/orders/abcdefghijklmnopqrstuvwxy';
const entry = { Source: 'banking.events', DetailType: 'transaction', Detail: '{}' };

describe("the stand-in's request check against the model", () => {
  it('accepts a request that fits', () => {
    const input = {
      EventBusArn: busArn,
      Entries: [
        { ...entry, Time: tag({ tag: 1, value: 1_790_000_000 }), SystemMetadata: { EventGroupId: 'g' } },
      ],
    };

    expect(requestProblems(model, 'PutEvents', input)).toEqual([]);
  });

  it.each([
    ['a missing required member', { Entries: [entry] }, 'PutEvents.EventBusArn: required'],
    [
      'an unknown member',
      { EventBusArn: busArn, Entries: [{ ...entry, Detial: '{}' }] },
      'PutEvents.Entries[0].Detial: not a member',
    ],
    [
      'too many entries',
      { EventBusArn: busArn, Entries: Array.from({ length: 101 }, () => entry) },
      'above the maximum 100',
    ],
    [
      'a string too long',
      { EventBusArn: busArn, Entries: [{ ...entry, DetailType: 'x'.repeat(129) }] },
      'DetailType: length 129',
    ],
    [
      'an ARN off the pattern',
      { EventBusArn: 'arn:aws:events:us-east-1:123456789012:event-bus/orders', Entries: [entry] },
      'does not match',
    ],
    [
      'a timestamp as text',
      { EventBusArn: busArn, Entries: [{ ...entry, Time: '2026-11-26T12:00:00Z' }] },
      'expected a timestamp',
    ],
    [
      'a value off the enum',
      { EventBusArn: busArn, Entries: [entry], DeduplicationConfiguration: { DeduplicationType: 'BY_ID' } },
      'is not one of',
    ],
  ])('names %s', (_name, input, problem) => {
    expect(requestProblems(model, 'PutEvents', input).join('\n')).toContain(problem);
  });
});
