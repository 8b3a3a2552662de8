/**
 * The Custom Event Bus's PutEvents body written as CBOR by hand (RFC 8949), as the handler did
 * until the library's codec replaced it: kept for `npm run bench:cbor`, which builds a second
 * handler with this module in place of `functions/adapters/aws/eventbridgev2/put-events-request.ts`
 * (`handCborSwap`) and compares the two side by side. Same bytes as the library's and boto3's
 * (checked by the bench before it measures).
 *
 * One pass to size the body, one to write it, no object graph per entry, the repeated texts
 * (source, detail-types, groups) encoded once.
 */
import type { Plugin } from 'esbuild';
import type { CustomBusEntry } from '../../functions/adapters/aws/eventbridgev2/put-events-request.ts';

export type { CustomBusEntry };

/** An esbuild plugin putting this module in place of the library's encoding wherever the handler imports it. */
export function handCborSwap(): Plugin {
  return {
    name: 'hand-cbor',
    setup(build) {
      build.onResolve({ filter: /\/put-events-request\.ts$/ }, () => ({ path: import.meta.filename }));
    },
  };
}

const MAJOR_UNSIGNED = 0;
const MAJOR_NEGATIVE = 1;
const MAJOR_TEXT = 3;
const MAJOR_ARRAY = 4;
const MAJOR_MAP = 5;
const TIMESTAMP_TAG = 0xc1;
const FLOAT64 = 0xfb;

/** A key, encoded once. */
function key(text: string): Buffer {
  const bytes = Buffer.byteLength(text, 'utf8');
  const out = Buffer.allocUnsafe(headSize(bytes) + bytes);
  out.write(text, writeHead(out, 0, MAJOR_TEXT, bytes), 'utf8');
  return out;
}

const KEYS = {
  EventBusArn: key('EventBusArn'),
  Entries: key('Entries'),
  Source: key('Source'),
  DetailType: key('DetailType'),
  Detail: key('Detail'),
  Time: key('Time'),
  SystemMetadata: key('SystemMetadata'),
  EventGroupId: key('EventGroupId'),
  DeduplicationId: key('DeduplicationId'),
};

/**
 * The CBOR body of `PutEvents` for `entries` on the bus `eventBusArn`.
 *
 * @example
 * const body = encodePutEventsRequest(arn, [{ source: 'banking.events', detailType: 'transaction', detail, time: Date.now(), eventGroupId: 'retail', deduplicationId: event.id }]);
 */
export function encodePutEventsRequest(eventBusArn: string, entries: readonly CustomBusEntry[]): Buffer {
  // The text lengths, measured once: the sizing pass records them, the writing pass reads them.
  // Source, detail-type and group repeat from entry to entry: their encodings come from a cache.
  const lengths: number[] = [];
  const measure = (text: string): number => {
    const bytes = Buffer.byteLength(text, 'utf8');
    lengths.push(bytes);
    return headSize(bytes) + bytes;
  };
  let total =
    1 + KEYS.EventBusArn.length + measure(eventBusArn) + KEYS.Entries.length + headSize(entries.length);
  for (const entry of entries) {
    total +=
      headSize(entryMembers(entry)) +
      KEYS.Source.length +
      repeated(entry.source).length +
      KEYS.DetailType.length +
      repeated(entry.detailType).length +
      KEYS.Detail.length +
      measure(entry.detail);
    if (Number.isFinite(entry.time)) total += KEYS.Time.length + 1 + timeSize(entry.time / 1000);
    const metadata = metadataMembers(entry);
    if (metadata > 0) {
      total += KEYS.SystemMetadata.length + 1;
      if (entry.eventGroupId !== undefined) {
        total += KEYS.EventGroupId.length + repeated(entry.eventGroupId).length;
      }
      if (entry.deduplicationId !== undefined) {
        total += KEYS.DeduplicationId.length + measure(entry.deduplicationId);
      }
    }
  }

  const out = Buffer.allocUnsafe(total);
  let next = 0;
  let at = writeHead(out, 0, MAJOR_MAP, 2);
  const text = (value: string): void => {
    const bytes = lengths[next++]!;
    at = writeHead(out, at, MAJOR_TEXT, bytes);
    at += out.write(value, at, bytes, 'utf8');
  };
  const put = (bytes: Buffer): void => {
    at += bytes.copy(out, at);
  };
  put(KEYS.EventBusArn);
  text(eventBusArn);
  put(KEYS.Entries);
  at = writeHead(out, at, MAJOR_ARRAY, entries.length);
  for (const entry of entries) {
    at = writeHead(out, at, MAJOR_MAP, entryMembers(entry));
    put(KEYS.Source);
    put(repeated(entry.source));
    put(KEYS.DetailType);
    put(repeated(entry.detailType));
    put(KEYS.Detail);
    text(entry.detail);
    if (Number.isFinite(entry.time)) {
      put(KEYS.Time);
      out[at++] = TIMESTAMP_TAG;
      at = writeTime(out, at, entry.time / 1000);
    }
    const metadata = metadataMembers(entry);
    if (metadata > 0) {
      put(KEYS.SystemMetadata);
      at = writeHead(out, at, MAJOR_MAP, metadata);
      if (entry.eventGroupId !== undefined) {
        put(KEYS.EventGroupId);
        put(repeated(entry.eventGroupId));
      }
      if (entry.deduplicationId !== undefined) {
        put(KEYS.DeduplicationId);
        text(entry.deduplicationId);
      }
    }
  }
  return out;
}

/**
 * Encodings of the texts that repeat across entries and requests (the source, the detail-types,
 * the groups of a program or its busiest accounts), bounded: emptied when full.
 */
const REPEATED = new Map<string, Buffer>();
const REPEATED_MAX = 1024;

function repeated(text: string): Buffer {
  let encoded = REPEATED.get(text);
  if (encoded === undefined) {
    if (REPEATED.size >= REPEATED_MAX) REPEATED.clear();
    encoded = key(text);
    REPEATED.set(text, encoded);
  }
  return encoded;
}

function entryMembers(entry: CustomBusEntry): number {
  return 3 + (Number.isFinite(entry.time) ? 1 : 0) + (metadataMembers(entry) > 0 ? 1 : 0);
}

function metadataMembers(entry: CustomBusEntry): number {
  return (entry.eventGroupId === undefined ? 0 : 1) + (entry.deduplicationId === undefined ? 0 : 1);
}

/** Bytes of a head (major type and argument) for `value`. */
function headSize(value: number): number {
  return value < 24 ? 1 : value < 0x100 ? 2 : value < 0x1_0000 ? 3 : value < 0x1_0000_0000 ? 5 : 9;
}

/** Writes the head of `major` with argument `value` at `at`; returns the offset after it. */
function writeHead(out: Buffer, at: number, major: number, value: number): number {
  const type = major << 5;
  if (value < 24) {
    out[at] = type | value;
    return at + 1;
  }
  if (value < 0x100) {
    out[at] = type | 24;
    out[at + 1] = value;
    return at + 2;
  }
  if (value < 0x1_0000) {
    out[at] = type | 25;
    out.writeUInt16BE(value, at + 1);
    return at + 3;
  }
  if (value < 0x1_0000_0000) {
    out[at] = type | 26;
    out.writeUInt32BE(value, at + 1);
    return at + 5;
  }
  out[at] = type | 27;
  out.writeBigUInt64BE(BigInt(value), at + 1);
  return at + 9;
}

/** Bytes of a time's value after its tag: an integer's head, or a float64. */
function timeSize(seconds: number): number {
  if (!Number.isSafeInteger(seconds)) return 9;
  return headSize(seconds < 0 ? -1 - seconds : seconds);
}

function writeTime(out: Buffer, at: number, seconds: number): number {
  if (Number.isSafeInteger(seconds)) {
    return seconds < 0
      ? writeHead(out, at, MAJOR_NEGATIVE, -1 - seconds)
      : writeHead(out, at, MAJOR_UNSIGNED, seconds);
  }
  out[at] = FLOAT64;
  out.writeDoubleBE(seconds, at + 1);
  return at + 9;
}
