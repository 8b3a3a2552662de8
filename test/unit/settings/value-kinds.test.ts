import { describe, expect, it } from 'vitest';
import {
  flag,
  integer,
  oneOf,
  rateExpression,
  startPosition,
  text,
} from '../../../functions/settings/value-kinds.ts';

describe('integer', () => {
  const kind = integer({ min: 1, max: 1000 });

  it.each([
    [100, 100],
    ['100', 100],
    [' 42 ', 42],
    [1, 1],
    [1000, 1000],
  ])('reads %j as %j', (raw, value) => {
    expect(kind.read(raw)).toBe(value);
  });

  it.each([0, 1001, '1e3', '0x10', '10.5', 10.5, '', 'ten', true, null, Number.NaN, 2 ** 53])(
    'refuses %j',
    (raw) => {
      expect(kind.read(raw)).toBeUndefined();
    },
  );

  it('says what it expects, with or without an upper bound', () => {
    expect(kind.expected).toBe('an integer from 1 to 1000');
    expect(integer({ min: 60 }).expected).toBe('an integer, 60 or more');
    expect(integer({ min: 60 }).read(10 ** 9)).toBe(10 ** 9);
  });
});

describe('oneOf', () => {
  it('reads words, and numbers from their digits', () => {
    expect(oneOf(['poll', 'stream']).read(' stream ')).toBe('stream');
    expect(oneOf([1, 3, 5]).read('3')).toBe(3);
    expect(oneOf([1, 3, 5]).read(3)).toBe(3);
  });

  it('refuses anything else, naming the values', () => {
    expect(oneOf(['poll', 'stream']).read('sse')).toBeUndefined();
    expect(oneOf([1, 3, 5]).read(4)).toBeUndefined();
    expect(oneOf(['poll', 'stream']).expected).toBe('"poll" or "stream"');
    expect(oneOf([1, 3, 5], 'periods').expected).toBe('one of 1, 3, 5 (periods)');
  });
});

describe('text and flag', () => {
  it('reads text matching its pattern only', () => {
    const kind = text(/^[a-z]+$/, 'lower-case letters');

    expect(kind.read('abc')).toBe('abc');
    expect(kind.read('ab c')).toBeUndefined();
    expect(kind.read(12)).toBeUndefined();
  });

  it.each([
    [true, true],
    ['true', true],
    [false, false],
    ['false', false],
    ['yes', undefined],
    [1, undefined],
  ])('reads the flag %j as %j', (raw, value) => {
    expect(flag().read(raw)).toBe(value);
  });
});

describe('startPosition', () => {
  it.each([
    ['beginning', 'beginning'],
    ['latest', 'latest'],
    ['1200', 1200],
    [1200, 1200],
  ])('reads %j as %j', (raw, value) => {
    expect(startPosition().read(raw)).toBe(value);
  });

  it.each(['earliest', 0, '0', -1, 'first'])('refuses %j', (raw) => {
    expect(startPosition().read(raw)).toBeUndefined();
  });
});

describe('rateExpression', () => {
  const kind = rateExpression(integer({ min: 1, max: 14, unit: 'minutes' }));

  it('reads minutes with the unit agreeing with their number, and writes them back', () => {
    expect(kind.read('rate(1 minute)')).toBe(1);
    expect(kind.read('rate(5 minutes)')).toBe(5);
    expect(kind.format(1)).toBe('rate(1 minute)');
    expect(kind.format(5)).toBe('rate(5 minutes)');
  });

  it.each([
    'rate(1 minutes)',
    'rate(2 minute)',
    'rate(15 minutes)',
    'rate(30 seconds)',
    'cron(* * * * ? *)',
    5,
  ])('refuses %j', (raw) => {
    expect(kind.read(raw)).toBeUndefined();
  });
});
