import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../functions/cli/cli-errors.ts';
import {
  checkDirection,
  checkRetention,
  describeMove,
  parseRewindTarget,
} from '../../../functions/cli/rewind-plan.ts';

function thrown(action: () => unknown): UsageError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }
  throw new Error('nothing was thrown');
}

describe('rewind planning', () => {
  it.each([
    ['1230', { kind: 'sequence', checkpoint: 1230 }],
    ['0', { kind: 'sequence', checkpoint: 0 }],
    ['beginning', { kind: 'sequence', checkpoint: 0 }],
    ['latest', { kind: 'latest' }],
  ])('reads --to %s', (value, target) => {
    expect(parseRewindTarget(value)).toEqual(target);
  });

  it.each(['-1', 'newest', '1.5', ''])('refuses --to %j, saying what it takes', (value) => {
    expect(thrown(() => parseRewindTarget(value)).message).toMatch(
      /--to must be a sequence number, "beginning" or "latest"/,
    );
  });

  it('moves back freely, refuses forward unless allowed, and allows anything on a program without a checkpoint', () => {
    expect(() => checkDirection(100, 40, false)).not.toThrow();
    expect(() => checkDirection(100, 140, true)).not.toThrow();
    expect(() => checkDirection(null, 140, false)).not.toThrow();
    const error = thrown(() => checkDirection(100, 140, false));
    expect(error.message).toBe(
      '--to 140 is beyond the checkpoint 100: that skips events 101..140 instead of publishing them again',
    );
    expect(error.fix).toContain('--allow-forward');
  });

  it('refuses a target past the oldest event the feed still has, naming the lowest allowed', () => {
    expect(() => checkRetention(499, 500)).not.toThrow();
    expect(() => checkRetention(0, 500)).not.toThrow();
    expect(() => checkRetention(10, null)).not.toThrow();
    const error = thrown(() => checkRetention(100, 500));
    expect(error.message).toBe(
      '--to 100 is past the oldest event the banking service still has (500): events 101..499 cannot be published again',
    );
    expect(error.fix).toBe('pass --to 499 or more (or --to beginning for everything it has)');
  });

  it('says what the move does to the next run', () => {
    expect(describeMove('cards', 30, 25)).toBe(
      'Program cards: checkpoint 30 → 25; the next run publishes events 26..30 again (5) and then continues.',
    );
    expect(describeMove('cards', 30, 40)).toBe(
      'Program cards: checkpoint 30 → 40; events 31..40 (10) will never be published.',
    );
    expect(describeMove('cards', null, 7)).toBe(
      'Program cards: checkpoint none → 7; the next run publishes from 8 on.',
    );
    expect(describeMove('cards', 7, 7)).toBe('Program cards: checkpoint 7 → 7: no change.');
  });
});
