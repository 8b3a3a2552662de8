/**
 * The Custom Event Bus PutEvents body, held to boto3's own bytes: each golden capture (boto3
 * 1.43.107's eventbridgev2 client, `scripts/capture-eventbridgev2-golden.py`) must come out of
 * the library's codec byte for byte, member order, length heads and timestamp encoding included;
 * and the answers botocore encodes must decode to the case's results.
 */
import { cbor } from '@smithy/core/cbor';
import { describe, expect, it } from 'vitest';
import { encodePutEventsRequest } from '../../../../../functions/adapters/aws/eventbridgev2/put-events-request.ts';
import { goldenCases } from '../../../../support/eventbridgev2-golden.ts';

const cases = goldenCases();

/** The CBOR item after `Time`'s tag 1 (0xc1) in a one-entry body: its first byte, and its value decoded. */
function encodedTime(body: Uint8Array): { head: number; seconds: unknown } {
  const bytes = Buffer.from(body);
  const key = Buffer.from('dTime', 'latin1');
  const at = bytes.indexOf(key) + key.length;
  expect(bytes[at]).toBe(0xc1);
  const decoded = cbor.deserialize(bytes) as { Entries: [{ Time: { tag: number; value: unknown } }] };
  return { head: bytes[at + 1]!, seconds: decoded.Entries[0].Time.value };
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
      const ours = Buffer.from(encodePutEventsRequest(golden.eventBusArn, golden.entries));

      expect(ours.length).toBe(golden.request.length);
      expect(ours.equals(golden.request)).toBe(true);
    },
  );

  it('writes times as tag 1 over epoch seconds: an integer when whole, else a float64', () => {
    const cases = [
      [0, 0x00, 0],
      [-1_000, 0x20, -1],
      [1_000 * 2 ** 33, 0x1b, 2 ** 33],
      [-1_500, 0xfb, -1.5],
      [Date.parse('2026-11-26T10:00:00.001Z'), 0xfb, Date.parse('2026-11-26T10:00:00.001Z') / 1000],
    ] as const;
    for (const [time, head, seconds] of cases) {
      const body = encodePutEventsRequest('arn', [{ source: 's', detailType: 't', detail: '{}', time }]);
      expect(encodedTime(body), String(time)).toEqual({ head, seconds });
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
