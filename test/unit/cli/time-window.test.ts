import { describe, expect, it } from 'vitest';
import { parseInstant, parseWindow } from '../../../functions/cli/time-window.ts';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');

describe('--since and --until', () => {
  it.each([
    ['90s', NOW - 90_000],
    ['30m', NOW - 30 * 60_000],
    ['2h', NOW - 2 * 3_600_000],
    ['7d', NOW - 7 * 86_400_000],
    ['2026-11-22T10:00:00Z', Date.parse('2026-11-22T10:00:00Z')],
    ['2026-11-22T10:00:00.500+02:00', Date.parse('2026-11-22T08:00:00.500Z')],
  ])('reads %s', (value, expected) => {
    expect(parseInstant(value, '--since', NOW)).toBe(expected);
  });

  it.each(['yesterday', '5w', '10', 'Nov 22'])('refuses %j, with an example of each form', (value) => {
    expect(() => parseInstant(value, '--since', NOW)).toThrow(
      /--since must be an ISO 8601 time or a duration ago/,
    );
  });

  it('defaults --until to now and refuses a window in the wrong order or ending in the future', () => {
    expect(parseWindow('1h', undefined, NOW)).toEqual({ since: NOW - 3_600_000, until: NOW });
    expect(() => parseWindow('1h', '2h', NOW)).toThrow(/is not after --since/);
    expect(() => parseWindow('1h', '2026-11-23T00:00:00Z', NOW)).toThrow(/--until is in the future/);
  });
});
