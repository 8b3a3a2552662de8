import { describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { ReusedIdWatch } from '../../../../functions/core/cycle/reused-id-watch.ts';
import { parsePollResponse } from '../../../../functions/core/event-model.ts';
import { makeEvent, RecordingLogger, RecordingMetrics } from '../../../support/in-memory-ports.ts';

function setup(capacity?: number) {
  const metrics = new RecordingMetrics();
  const logger = new RecordingLogger();
  return { metrics, logger, watch: new ReusedIdWatch({ metrics, logger }, capacity) };
}

describe('ReusedIdWatch', () => {
  it('counts and logs, with both numbers, an id given to a second number, in one page or a later one', () => {
    const { metrics, logger, watch } = setup();

    watch.observe([
      makeEvent(5, { id: 'shared' }),
      makeEvent(6, { id: 'other' }),
      makeEvent(7, { id: 'shared' }),
    ]);
    watch.observe([makeEvent(9, { id: 'shared' })]);

    expect(metrics.sum('DuplicateEventIds')).toBe(2);
    expect(logger.lines.map((line) => line.attributes)).toEqual([
      { eventId: 'shared', firstSequenceNumber: 5, sequenceNumber: 7 },
      { eventId: 'shared', firstSequenceNumber: 5, sequenceNumber: 9 },
    ]);
  });

  it('does not count the same event seen again at its own number, nor quarantined events', () => {
    const { metrics, watch } = setup();
    const text = '{"data":[{"id":"x","sequence_number":1},{"id":"x","sequence_number":2}]}';
    const quarantined = parsePollResponse(
      { text, value: JSON.parse(text) },
      { source: 'GET /events' },
      CLASSIC_BUS_ENTRY_RULES,
    ).events;

    watch.observe([makeEvent(3, { id: 'same' })]);
    watch.observe([makeEvent(3, { id: 'same' }), ...quarantined]);

    expect(metrics.values).toEqual([]);
  });

  it('remembers the newest ids only, up to its capacity', () => {
    const { metrics, watch } = setup(2);

    watch.observe([makeEvent(1, { id: 'a' }), makeEvent(2, { id: 'b' }), makeEvent(3, { id: 'c' })]);
    watch.observe([makeEvent(4, { id: 'a' }), makeEvent(5, { id: 'c' })]);

    // 'a' was let go for 'c': only the reuse of 'c' is seen.
    expect(metrics.sum('DuplicateEventIds')).toBe(1);
  });
});
