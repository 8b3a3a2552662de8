/**
 * The claim-check pattern for events too large for the bus: the event's full text goes to object
 * storage, and a small *pointer* event takes its place on the bus, with the same detail-type (so
 * routing still works) and the event's id, program, sequence number and time, plus where the
 * body is. Consumers that find `detail.claim_check` fetch the body from there.
 *
 * Pointer detail:
 *
 * ```json
 * {"id": "…", "program_id": "…", "sequence_number": 1234, "created_dt": "…", "type": "transaction",
 *  "claim_check": {"bucket": "…", "key": "<program_id>/1234-<id>.json", "size_bytes": 1048577, "sha256": "<hex>"}}
 * ```
 *
 * The object holds exactly the detail the event would have had on the bus. The pointer of an
 * `invalid_event` also keeps its `fingerprint` and the failing `field`, so a quarantine consumer can
 * tell broken copies apart without fetching them.
 */
import { createHash } from 'node:crypto';
import type { BankingEvent } from './banking-event.ts';
import type { ClaimCheckLocation } from './ports.ts';

/**
 * Largest PutEvents entry the poller sends by default; larger events go through the claim check.
 * EventBridge raised its entry (and request) cap from 256 KB to 1 MB (1 MiB, 1,048,576 bytes) on
 * 2026-01-29 (AWS Compute Blog, "More room to build: serverless services now support payloads up
 * to 1 MB"). The bus then delivers each event wrapped in its envelope (id, time, account, region,
 * source, detail-type) to targets whose own cap is 1 MiB (SQS, asynchronous Lambda): 1,000,000
 * leaves 48 KiB of room for that envelope, so every event published is also deliverable.
 */
export const DEFAULT_MAX_ENTRY_BYTES = 1_000_000;
/** The bus's own cap on a PutEvents entry and request (1 MiB); the setting may not exceed it. */
export const PUT_EVENTS_MAX_BYTES = 1_048_576;
/** The old cap; the smallest setting that makes sense (below it, ordinary events would be claim-checked). */
export const MIN_MAX_ENTRY_BYTES = 1_024;

/** Where an event's body is stored: per program, by sequence number and id, so a re-publish overwrites it. */
export function claimCheckKey(event: BankingEvent): string {
  const program = event.program_id === '' ? 'unknown-program' : encodeURIComponent(event.program_id);
  return `${program}/${event.sequence_number}-${encodeURIComponent(event.id)}.json`;
}

/** The pointer event published in place of `event`, whose detail is stored at `location`. */
export function claimCheckPointer(event: BankingEvent, location: ClaimCheckLocation): BankingEvent {
  const claimCheck = {
    bucket: location.bucket,
    key: location.key,
    size_bytes: Buffer.byteLength(event.detail, 'utf8'),
    sha256: createHash('sha256').update(event.detail, 'utf8').digest('hex'),
  };
  const detail = JSON.stringify({
    id: event.id,
    program_id: event.program_id,
    sequence_number: event.sequence_number,
    created_dt: event.created_dt,
    type: event.type,
    ...(event.invalid === undefined
      ? {}
      : { fingerprint: event.invalid.fingerprint, field: event.invalid.field }),
    claim_check: claimCheck,
  });
  return { ...event, detail };
}

/**
 * Whether the bus refused an entry (or a whole request) for its size: EventBridge answers with a
 * validation error whose message speaks of the size. Our own estimate of an entry's size can
 * disagree with the bus's (a region still at the old cap, a limit set above it), and such an
 * entry goes through the claim check too.
 */
export function isSizeRefusal(errorCode: string, errorMessage: string): boolean {
  if (/throttl|internal|unavailable/i.test(errorCode)) return false;
  return /too large|too big|\bsize\b|exceed|over the limit/i.test(errorMessage);
}
