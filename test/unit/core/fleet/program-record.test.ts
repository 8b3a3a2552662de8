import { describe, expect, it } from 'vitest';
import { ProgramRecordInvalidError } from '../../../../functions/core/errors.ts';
import {
  PROGRAM_RECORD_BOUNDS,
  parseProgramRecord,
  parseProgramRecordInput,
} from '../../../../functions/core/fleet/program-record.ts';

const valid = {
  name: 'cards',
  secretId: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:bep/Prod/cards-AbCdEf',
  state: 'active',
  owner: 'operator',
  settings: { pollLimit: 50, feedMode: 'stream' },
  revision: 3,
};

/** The error `action` throws, which must be a `ProgramRecordInvalidError`. */
function refusal(action: () => unknown): ProgramRecordInvalidError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ProgramRecordInvalidError);
    return error as ProgramRecordInvalidError;
  }
  throw new Error('accepted');
}

describe('parseProgramRecord', () => {
  it('reads a record, frozen, its settings too', () => {
    const record = parseProgramRecord(valid, 'programs.json[0]');

    expect(record).toEqual(valid);
    expect(Object.isFrozen(record)).toBe(true);
    expect(Object.isFrozen(record.settings)).toBe(true);
  });

  it('reads a record without settings as one with none', () => {
    const { settings: _, ...bare } = valid;

    expect(parseProgramRecord(bare, 'item').settings).toEqual({});
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['a state it does not know', { state: 'stopped' }, 'state'],
    ['an owner it does not know', { owner: 'cdk' }, 'owner'],
    ['an empty secretId', { secretId: '' }, 'secretId'],
    ['a secretId with a newline', { secretId: 'bep/Prod/cards\nx' }, 'secretId'],
    ['a secretId too long', { secretId: 'a'.repeat(PROGRAM_RECORD_BOUNDS.maxSecretIdChars + 1) }, 'secretId'],
    ['a revision of 0', { revision: 0 }, 'revision'],
    ['a revision as text', { revision: '3' }, 'revision'],
    ['settings that are a list', { settings: ['pollLimit'] }, 'settings'],
    ['a setting whose name is no name', { settings: { 'poll-limit': 5 } }, 'settings'],
    ['a setting named __proto__', { settings: JSON.parse('{"__proto__": {"polluted": 1}}') }, 'settings'],
    ['a setting whose value is an object', { settings: { pollLimit: { n: 5 } } }, 'settings.pollLimit'],
    [
      'a setting whose value is not finite',
      { settings: { pollLimit: Number.POSITIVE_INFINITY } },
      'settings.pollLimit',
    ],
    [
      'a setting value too long',
      { settings: { pollCursorParam: 'x'.repeat(257) } },
      'settings.pollCursorParam',
    ],
    ['a key that is no field', { secretArn: 'x' }, '(a key)'],
  ])('refuses %s, naming the record and the field', (_name, change, field) => {
    const error = refusal(() => parseProgramRecord({ ...valid, ...change }, 'programs table item "cards"'));

    expect(error.context).toMatchObject({ where: 'programs table item "cards"', program: 'cards', field });
    expect(error.message).toContain('program cards');
  });

  it('refuses more settings than a record may hold', () => {
    const settings = Object.fromEntries(
      Array.from({ length: PROGRAM_RECORD_BOUNDS.maxSettings + 1 }, (_, i) => [`s${i}`, i]),
    );

    expect(refusal(() => parseProgramRecord({ ...valid, settings }, 'item')).context.field).toBe('settings');
  });

  it('refuses a name that is no program name without quoting it', () => {
    const error = refusal(() =>
      parseProgramRecord({ ...valid, name: `cards ${'x'.repeat(10_000)}` }, 'item'),
    );

    expect(error.context.field).toBe('name');
    expect(error.message.length).toBeLessThan(200);
  });

  it('quotes no value of a field it refuses', () => {
    const error = refusal(() => parseProgramRecord({ ...valid, secretId: 'super secret value\n' }, 'item'));

    expect(error.message).not.toContain('super secret');
  });

  it.each([null, [], 'cards', 42])('refuses an item that is not an object: %j', (raw) => {
    expect(refusal(() => parseProgramRecord(raw, 'item')).context.where).toBe('item');
  });
});

describe('parseProgramRecordInput', () => {
  it('reads what a writer gives: the record without its revision, which it refuses', () => {
    const { revision: _, ...input } = valid;

    expect(parseProgramRecordInput(input, 'input')).toEqual(input);
    expect(refusal(() => parseProgramRecordInput(valid, 'input')).context.field).toBe('(a key)');
  });
});
