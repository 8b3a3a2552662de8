import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { integerUpTo } from '../../../functions/cli/option-parsers.ts';

describe('integerUpTo', () => {
  const upTo16 = integerUpTo(16);

  it('takes a whole number from 1 to the bound', () => {
    expect(upTo16('1')).toBe(1);
    expect(upTo16(' 16 ')).toBe(16);
  });

  it('refuses what is above the bound, below 1 or not a whole number, saying what it expects', () => {
    expect(() => upTo16('17')).toThrow(new InvalidArgumentError('expected a whole number from 1 to 16.'));
    for (const value of ['0', '-2', '2.5', 'four', '', '1e3']) {
      expect(() => upTo16(value), value).toThrow(InvalidArgumentError);
    }
  });
});
