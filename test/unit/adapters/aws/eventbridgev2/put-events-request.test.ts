/**
 * The Custom Event Bus PutEvents body, held to boto3's own bytes: each golden capture (boto3
 * 1.43.107's eventbridgev2 client, `scripts/capture-eventbridgev2-golden.py`) must come out of our
 * encoder byte for byte, member order, length heads and timestamp encoding included; and the
 * answers botocore encodes must decode to the case's results.
 */
import { cbor, tag } from '@smithy/core/cbor';
import { describe, expect, it } from 'vitest';
import {
  type CustomBusEntry,
  encodePutEventsRequest,
} from '../../../../../functions/adapters/aws/eventbridgev2/put-events-request.ts';
import { goldenCases } from '../../../../support/eventbridgev2-golden.ts';

const cases = goldenCases();

/** The same input as a plain object graph, for @smithy/core's generic encoder. */
function asObject(eventBusArn: string, entries: readonly CustomBusEntry[]): object {
  return {
    EventBusArn: eventBusArn,
    Entries: entries.map((entry) => ({
      Source: entry.source,
      DetailType: entry.detailType,
      Detail: entry.detail,
      ...(Number.isFinite(entry.time) ? { Time: tag({ tag: 1, value: entry.time / 1000 }) } : {}),
      ...(entry.eventGroupId === undefined && entry.deduplicationId === undefined
        ? {}
        : {
            SystemMetadata: {
              ...(entry.eventGroupId === undefined ? {} : { EventGroupId: entry.eventGroupId }),
              ...(entry.deduplicationId === undefined ? {} : { DeduplicationId: entry.deduplicationId }),
            },
          }),
    })),
  };
}

describe('encodePutEventsRequest', () => {
  it('reads three golden cases', () => {
    expect(cases.map((golden) => golden.name)).toEqual([
      'one-entry',
      'unicode-times-and-sizes',
      'no-system-metadata-no-time',
    ]);
  });

  it.each(cases.map((golden) => [golden.name, golden] as const))(
    'writes the bytes boto3 sends for %s',
    (_name, golden) => {
      const ours = encodePutEventsRequest(golden.eventBusArn, golden.entries);

      expect(ours.length).toBe(golden.request.length);
      expect(ours.equals(golden.request)).toBe(true);
    },
  );

  it.each(cases.map((golden) => [golden.name, golden] as const))(
    "writes what @smithy/core's encoder writes for the same object, for %s",
    (_name, golden) => {
      const generic = Buffer.from(cbor.serialize(asObject(golden.eventBusArn, golden.entries)));

      expect(encodePutEventsRequest(golden.eventBusArn, golden.entries).equals(generic)).toBe(true);
    },
  );

  it('encodes times the golden cases do not cover as the generic encoder does', () => {
    const times = [0, -1_000, -1_500, 1_000 * 2 ** 33, Date.parse('2026-11-26T10:00:00.001Z')];
    for (const time of times) {
      const entries = [{ source: 's', detailType: 't', detail: '{}', time }];
      const generic = Buffer.from(cbor.serialize(asObject('arn', entries)));
      expect(encodePutEventsRequest('arn', entries).equals(generic), String(time)).toBe(true);
    }
  });

  it.each(cases.map((golden) => [golden.name, golden] as const))(
    'decodes the answer botocore encodes for %s',
    (_name, golden) => {
      const decoded = cbor.deserialize(golden.response) as { Entries: unknown[]; FailedEntryCount: number };

      expect(decoded.Entries).toEqual(golden.results);
      expect(decoded.FailedEntryCount).toBe(golden.results.filter((result) => 'ErrorCode' in result).length);
    },
  );
});
