/**
 * The golden PutEvents captures of `test/fixtures/eventbridgev2/` (boto3's request bodies and
 * botocore-encoded answers, made by `scripts/capture-eventbridgev2-golden.py`), read as cases.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CustomBusEntry } from '../../functions/adapters/aws/eventbridgev2/put-events-request.ts';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'eventbridgev2');

interface CaseEntry {
  readonly Source: string;
  readonly DetailType: string;
  readonly Detail: string;
  readonly Time?: string;
  readonly SystemMetadata?: { readonly EventGroupId?: string; readonly DeduplicationId?: string };
}

export interface GoldenCase {
  readonly name: string;
  readonly eventBusArn: string;
  /** As the publisher prepares them. */
  readonly entries: readonly CustomBusEntry[];
  /** The answer's entries, as the case file gives them. */
  readonly results: readonly Record<string, string>[];
  /** The request body boto3 sent. */
  readonly request: Buffer;
  /** The answer, encoded by botocore's CBOR serializer. */
  readonly response: Buffer;
}

/** `{"pad":"xxx…"}` of exactly `length` characters: what `LONG:<length>` stands for (as in the script). */
export function longDetail(length: number): string {
  return `{"pad":"${'x'.repeat(length - 10)}"}`;
}

export function goldenCases(): GoldenCase[] {
  const file = JSON.parse(readFileSync(join(FIXTURES, 'put-events-cases.json'), 'utf8')) as {
    cases: { name: string; eventBusArn: string; entries: CaseEntry[]; results: Record<string, string>[] }[];
  };
  return file.cases.map((golden) => ({
    name: golden.name,
    eventBusArn: golden.eventBusArn,
    entries: golden.entries.map((entry) => ({
      source: entry.Source,
      detailType: entry.DetailType,
      detail: entry.Detail.startsWith('LONG:') ? longDetail(Number(entry.Detail.slice(5))) : entry.Detail,
      time: entry.Time === undefined ? Number.NaN : Date.parse(entry.Time),
      ...(entry.SystemMetadata?.EventGroupId === undefined
        ? {}
        : { eventGroupId: entry.SystemMetadata.EventGroupId }),
      ...(entry.SystemMetadata?.DeduplicationId === undefined
        ? {}
        : { deduplicationId: entry.SystemMetadata.DeduplicationId }),
    })),
    results: golden.results,
    request: readFileSync(join(FIXTURES, `${golden.name}.request.cbor`)),
    response: readFileSync(join(FIXTURES, `${golden.name}.response.cbor`)),
  }));
}
