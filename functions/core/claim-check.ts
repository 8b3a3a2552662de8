/**
 * The claim-check pattern for events too large for the bus (larger than its publisher's
 * `limits.maxEntryBytes`, or refused for their size): the event's full text goes to object
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
