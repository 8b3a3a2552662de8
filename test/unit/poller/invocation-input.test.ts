import { describe, expect, it } from 'vitest';
import { InvocationInputError } from '../../../functions/core/errors.ts';
import {
  checkInvocationBounds,
  INVOCATION_BOUNDS,
  keyLabel,
  parseScheduledInvocation,
} from '../../../functions/poller/invocation-input.ts';
import { expectNoSecretShown } from '../../support/secret-assertions.ts';

const KNOWN = new Set(['program', 'secretId', 'operatorRequest', 'version', 'kind', 'id']);
const CREDENTIAL_KEY = 'AKIAIOSFODNN7EXAMPLEwJalrXUtnFEMI/K7MDENG/bPxRfiCY';

/** The error `action` throws, which must be an `InvocationInputError`. */
function refusal(action: () => unknown): InvocationInputError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(InvocationInputError);
    const refused = error as InvocationInputError;
    expect(refused.code).toBe('INVOCATION_INVALID');
    expect(refused.message).toContain(String(refused.context.field));
    return refused;
  }
  throw new Error('accepted');
}

/** `{"program": {"a": {"a": …}}}`, `depth` objects deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = 'x';
  for (let level = 0; level < depth; level += 1) value = { a: value };
  return { program: value };
}

describe('parseScheduledInvocation', () => {
  it("reads the schedule's payload, an empty event, and an older payload's secretId", () => {
    expect(parseScheduledInvocation({ program: 'cards' })).toEqual({ program: 'cards' });
    expect(parseScheduledInvocation({})).toEqual({});
    expect(parseScheduledInvocation({ program: 'cards', secretId: 'arn:secret:c' })).toEqual({
      program: 'cards',
      secretId: 'arn:secret:c',
    });
  });

  it.each<[string, unknown, string]>([
    ['a misspelt operator request', { operatorrequest: {} }, 'event.<key "operat…" of 15 character(s)>'],
    ['another key beside program', { program: 'cards', limit: 5 }, 'event.<key "limit" of 5 character(s)>'],
    ['a program that is no name', { program: 'a b' }, 'event.program'],
    ['a program that is a number', { program: 42 }, 'event.program'],
    ['an empty secretId', { secretId: ' ' }, 'event.secretId'],
    ['an array', ['program'], 'event'],
    ['null', null, 'event'],
    ['a string', 'program', 'event'],
  ])('refuses %s, naming the field', (_name, event, field) => {
    expect(refusal(() => parseScheduledInvocation(event)).context.field).toBe(field);
  });

  it('suggests the key a misspelling is near, without quoting the misspelling', () => {
    const error = refusal(() => parseScheduledInvocation({ operatorrequest: {} }));

    expect(error.message).toContain('did you mean operatorRequest?');
    expect(error.message).not.toContain('operatorrequest');
  });

  it('shows a million-character program name by its length alone', () => {
    const name = 'p'.repeat(1_000_000);

    const error = refusal(() => parseScheduledInvocation({ program: name }));

    expect(error.message).toContain('a string of 1000000 character(s)');
    expect(error.message.length).toBeLessThan(300);
  });
});

describe('checkInvocationBounds', () => {
  it("lets the schedule's payload and an operator request through", () => {
    expect(() => checkInvocationBounds({ program: 'cards' }, KNOWN)).not.toThrow();
    expect(() =>
      checkInvocationBounds(
        { operatorRequest: { version: 1, kind: 'event', program: 'cards', id: 'evt-1' } },
        KNOWN,
      ),
    ).not.toThrow();
  });

  it.each<[string, unknown, string]>([
    ['__proto__ as an own key', JSON.parse('{"__proto__": {"operatorRequest": {}}}'), 'event.__proto__'],
    [
      'constructor inside a request',
      JSON.parse('{"operatorRequest": {"constructor": 1}}'),
      'event.operatorRequest.constructor',
    ],
    ['prototype', JSON.parse('{"prototype": 1}'), 'event.prototype'],
    [
      'a string over the bound',
      { program: 'p'.repeat(INVOCATION_BOUNDS.maxStringChars + 1) },
      'event.program',
    ],
    ['too many keys', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i])), 'event'],
    ['too many items', { program: Array.from({ length: 101 }, () => 1) }, 'event.program'],
    [
      'a program nested 100,000 deep',
      nested(100_000),
      'event.program.<key "a" of 1 character(s)>.<key "a" of 1 character(s)>',
    ],
  ])('refuses %s, naming the field', (_name, event, field) => {
    expect(refusal(() => checkInvocationBounds(event, KNOWN)).context.field).toBe(field);
  });

  it('walks a deep value without recursion, stopping at the bound', () => {
    // Deeper than any stack: a recursive walk (or JSON.stringify) throws RangeError here.
    const deep = nested(1_000_000);

    expect(() => checkInvocationBounds(deep, KNOWN)).toThrow(InvocationInputError);
  });

  it('never shows more of an unknown key than a short prefix, nor any value', () => {
    const value = 'v4lue-that-must-not-show';
    const event = { operatorRequest: { version: 1, [CREDENTIAL_KEY]: { a: { b: value } } } };

    const error = refusal(() => checkInvocationBounds(event, KNOWN));

    expect(error.context.field).toBe(
      'event.operatorRequest.<key "AKIAIO…" of 50 character(s)>.<key "a" of 1 character(s)>',
    );
    expectNoSecretShown(error, [CREDENTIAL_KEY.slice(6), value]);
  });
});

describe('keyLabel', () => {
  it('names a known key whole and any other by at most 6 characters of letters, digits and _', () => {
    expect(keyLabel('program', KNOWN)).toBe('program');
    expect(keyLabel('s3cr/t+=')).toBe('<key "s3cr?t…" of 8 character(s)>');
    expect(keyLabel('"\\n<>')).toBe('<key "??n??" of 5 character(s)>');
  });
});
