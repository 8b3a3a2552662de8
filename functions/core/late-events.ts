/**
 * Events a page holds at or below the cursor: counted, and kept only when they fill a number the
 * feed skipped (never published); the others were published before and are only logged.
 */
import type { BankingEvent } from './banking-event.ts';
import { selectLateEvents } from './event-model.ts';
import type { CycleLogger, MetricsSink } from './ports.ts';

/** What `pickLateEvents` needs to report and choose. */
export interface LateEventContext {
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  readonly recordedGaps?: { includes(sequence: number): boolean };
}

/**
 * Counts every event at or below the cursor (`LateEvents`) and keeps those in a recorded gap:
 * they were never published. The others were, and are only logged.
 */
export function pickLateEvents(
  { metrics, logger, recordedGaps }: LateEventContext,
  events: readonly BankingEvent[],
  after: number | null,
): BankingEvent[] {
  const late = selectLateEvents(events, after);
  if (late.length === 0) return late;
  metrics.add('LateEvents', 'Count', late.length);
  const wanted = late.filter((event) => recordedGaps?.includes(event.sequence_number) === true);
  for (const event of wanted) {
    logger.warn('An event arrived late for a skipped sequence number; publishing it', {
      eventId: event.id,
      sequenceNumber: event.sequence_number,
      cursor: after,
    });
  }
  const again = late.filter((event) => !wanted.includes(event));
  if (again.length > 0) {
    // One line a page: a feed that ignores the cursor sends whole pages again.
    logger.info('Events at or below the cursor came again; they were published before', {
      count: again.length,
      events: again.slice(0, 5).map((event) => ({ id: event.id, sequence_number: event.sequence_number })),
      cursor: after,
    });
  }
  return wanted;
}
