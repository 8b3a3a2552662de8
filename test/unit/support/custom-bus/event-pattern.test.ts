import { describe, expect, it } from 'vitest';
import { compilePattern, UnsupportedPatternError } from '../../../support/custom-bus/event-pattern.ts';

const event = {
  source: 'banking.events',
  'detail-type': 'account_status',
  resources: ['arn:a', 'arn:b'],
  detail: { status: 'OPEN', account_id: 'acc-1', note: null },
};

describe('the stand-in event-pattern matcher', () => {
  it.each([
    ['an exact value', { 'detail-type': ['transaction', 'account_status'] }, true],
    ['a value not listed', { 'detail-type': ['transaction'] }, false],
    ['a prefix', { source: [{ prefix: 'banking.' }] }, true],
    ['a prefix that does not start the value', { source: [{ prefix: 'events' }] }, false],
    ['anything-but the value', { 'detail-type': [{ 'anything-but': ['account_status'] }] }, false],
    [
      'anything-but other values',
      { 'detail-type': [{ 'anything-but': ['transaction', 'invalid_event'] }] },
      true,
    ],
    ['anything-but a prefix', { source: [{ 'anything-but': { prefix: 'aws.' } }] }, true],
    ['a nested field', { detail: { status: ['OPEN'] } }, true],
    ['a nested field with another value', { detail: { status: ['FROZEN'] } }, false],
    ['exists true on a present field', { detail: { account_id: [{ exists: true }] } }, true],
    ['exists false on an absent field', { detail: { transaction_id: [{ exists: false }] } }, true],
    ['exists true on an absent field', { detail: { transaction_id: [{ exists: true }] } }, false],
    ['null as a value', { detail: { note: [null] } }, true],
    ['any element of an array', { resources: ['arn:b'] }, true],
    ['every field (AND)', { source: ['banking.events'], 'detail-type': ['transaction'] }, false],
  ])('matches %s: %j → %s', (_name, pattern, expected) => {
    expect(compilePattern(JSON.stringify(pattern))(event)).toBe(expected);
  });

  it('does not match anything-but on an absent field', () => {
    const match = compilePattern('{"detail":{"transaction_id":[{"anything-but":["x"]}]}}');

    expect(match(event)).toBe(false);
  });

  it.each([
    { detail: { amount: [{ numeric: ['>', 5] }] } },
    { source: [{ suffix: '.events' }] },
    { source: [{ wildcard: 'banking.*' }] },
    { $or: [{ source: ['a'] }, { source: ['b'] }] },
    { source: [{ 'equals-ignore-case': 'BANKING.EVENTS' }] },
  ])('refuses an operator it does not implement: %j', (pattern) => {
    expect(() => compilePattern(JSON.stringify(pattern))).toThrow(UnsupportedPatternError);
  });

  it('refuses a pattern that is not an object of non-empty lists', () => {
    expect(() => compilePattern('[]')).toThrow(UnsupportedPatternError);
    expect(() => compilePattern('{"source":[]}')).toThrow(UnsupportedPatternError);
    expect(() => compilePattern('{"source":"banking.events"}')).toThrow(UnsupportedPatternError);
  });
});
