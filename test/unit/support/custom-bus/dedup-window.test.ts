import { describe, expect, it } from 'vitest';
import { DEDUPLICATION_WINDOW_MS, DeduplicationWindow } from '../../../support/custom-bus/dedup-window.ts';

const scope = { accountId: '123456789012', busArn: 'arn:bus', eventGroupId: 'g1', key: 'evt-1' };
const accepted = { eventId: 'id-1', sequenceNumber: '1', acceptedAt: 1_000 };

describe('the stand-in de-duplication window', () => {
  it('finds the earlier entry until 5 minutes after it was accepted', () => {
    const window = new DeduplicationWindow();
    window.remember(scope, accepted);

    expect(window.find(scope, 1_000 + DEDUPLICATION_WINDOW_MS - 1)).toEqual(accepted);
    expect(window.find(scope, 1_000 + DEDUPLICATION_WINDOW_MS)).toBeUndefined();
  });

  it.each([
    ['another group', { eventGroupId: 'g2' }],
    ['no group', { eventGroupId: undefined }],
    ['another account', { accountId: '210987654321' }],
    ['another bus', { busArn: 'arn:other-bus' }],
    ['another key', { key: 'evt-2' }],
  ])('treats an entry from %s as a different event', (_name, change) => {
    const window = new DeduplicationWindow();
    window.remember(scope, accepted);

    expect(window.find({ ...scope, ...change }, 2_000)).toBeUndefined();
  });

  it('de-duplicates ungrouped entries among themselves', () => {
    const window = new DeduplicationWindow();
    const ungrouped = { ...scope, eventGroupId: undefined };
    window.remember(ungrouped, accepted);

    expect(window.find(ungrouped, 2_000)).toEqual(accepted);
  });
});
