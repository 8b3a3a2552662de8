import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from '../../../../functions/adapters/banking-http/retry-after.ts';

const NOW = Date.parse('2025-03-04T10:00:00Z');

describe('parseRetryAfter', () => {
  it('reads delta-seconds as milliseconds', () => {
    expect(parseRetryAfter('7', NOW)).toBe(7000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
  });

  it('reads an IMF-fixdate as the time left until it', () => {
    expect(parseRetryAfter('Tue, 04 Mar 2025 10:00:05 GMT', NOW)).toBe(5000);
  });

  it('reads the obsolete RFC 850 date form', () => {
    expect(parseRetryAfter('Tuesday, 04-Mar-25 10:00:30 GMT', NOW)).toBe(30_000);
  });

  it('gives 0 for a date already past', () => {
    expect(parseRetryAfter('Tue, 04 Mar 2025 09:59:00 GMT', NOW)).toBe(0);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['negative', '-5'],
    ['fractional', '1.5'],
    ['junk', 'soon'],
    ['a number with junk', '5 seconds'],
    ['a bare date without weekday', '2025-03-04T10:00:05Z'],
    ['two different values', ['1', '2']],
  ])('gives undefined when %s', (_label, header) => {
    expect(parseRetryAfter(header, NOW)).toBeUndefined();
  });

  it('accepts a header that arrived once as a one-element array', () => {
    expect(parseRetryAfter(['3'], NOW)).toBe(3000);
  });
});
