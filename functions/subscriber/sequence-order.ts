/**
 * Sequence order. The bus promises no order, and an SQS standard queue none either: events of a
 * program can arrive in any order, across batches as well as within one. What a subscriber can
 * do cheaply is handle each batch in sequence order, per program; events whose order matters
 * across batches need the subscriber's own record of the last number it applied (a per-program
 * high-water mark) or a FIFO queue behind the bus.
 */
import type { ReceivedEvent } from './subscriber-events.ts';

/** The program and the number an event sits at in its feed (a quarantined one: where the checkpoint placed it). */
export function feedPosition(event: ReceivedEvent): {
  readonly programId: string;
  readonly sequence: number;
} {
  if (event.kind === 'invalid_event') {
    return { programId: event.detail.program_id ?? '', sequence: event.detail.position };
  }
  return { programId: event.detail.program_id, sequence: event.detail.sequence_number };
}

/** Orders events by program, then by sequence number: `events.sort(compareBySequence)`. */
export function compareBySequence(a: ReceivedEvent, b: ReceivedEvent): number {
  const first = feedPosition(a);
  const second = feedPosition(b);
  if (first.programId !== second.programId) return first.programId < second.programId ? -1 : 1;
  return first.sequence - second.sequence;
}
