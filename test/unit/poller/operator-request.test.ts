import { describe, expect, it } from 'vitest';
import { OperatorRequestError } from '../../../functions/core/errors.ts';
import {
  isOperatorInvocation,
  OPERATOR_REQUEST_KINDS,
  operatorInvocation,
  parseOperatorRequest,
} from '../../../functions/poller/operator-request.ts';
import { expectNoSecretShown } from '../../support/secret-assertions.ts';

const event = (request: Record<string, unknown>) => ({
  operatorRequest: { version: 1, program: 'default', ...request },
});

/** The field an invalid payload is refused for. */
function refusedField(payload: unknown): string {
  try {
    parseOperatorRequest(payload);
  } catch (error) {
    if (error instanceof OperatorRequestError) {
      expect(error.code).toBe('OPERATOR_REQUEST_INVALID');
      expect(error.message).toContain(String(error.context.field));
      return String(error.context.field);
    }
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(payload)}`);
}

describe('isOperatorInvocation', () => {
  it("tells an operator request from the schedule's { program } and other payloads", () => {
    expect(isOperatorInvocation({ operatorRequest: { kind: 'event' } })).toBe(true);
    expect(isOperatorInvocation({ operatorRequest: null })).toBe(true);
    expect(isOperatorInvocation({ program: 'default' })).toBe(false);
    expect(isOperatorInvocation({})).toBe(false);
    expect(isOperatorInvocation(null)).toBe(false);
    expect(isOperatorInvocation(['operatorRequest'])).toBe(false);
    // Inherited keys do not count: only the payload's own.
    expect(isOperatorInvocation(Object.create({ operatorRequest: {} }))).toBe(false);
  });
});

describe('parseOperatorRequest', () => {
  it('reads each kind into its typed request, and round-trips what the CLI sends', () => {
    const requests = [
      { version: 1, kind: 'event', program: 'default', sequence: 42 },
      { version: 1, kind: 'event', program: 'cards', id: 'evt-1' },
      { version: 1, kind: 'replay', program: 'default', from: 5, to: 12, holdMs: 10_000, dryRun: false },
      { version: 1, kind: 'doctor-bank', program: 'default', timeoutMs: 15_000 },
      { version: 1, kind: 'feed-latest', program: 'default', from: null, startedAt: 1_790_000_000_000 },
      { version: 1, kind: 'feed-oldest', program: 'default' },
    ] as const;

    for (const request of requests)
      expect(parseOperatorRequest(operatorInvocation(request))).toEqual(request);
    expect(new Set(requests.map((request) => request.kind))).toEqual(new Set(OPERATOR_REQUEST_KINDS));
  });

  it.each<[string, unknown, string]>([
    ['a request that is not an object', { operatorRequest: 'replay' }, 'operatorRequest'],
    ['another key beside it', { program: 'default', ...event({ kind: 'feed-oldest' }) }, 'event.program'],
    ['an unknown version', event({ version: 2, kind: 'feed-oldest' }), 'operatorRequest.version'],
    ['no kind', event({}), 'operatorRequest.kind'],
    ['an unknown kind', event({ kind: 'checkpoint-set' }), 'operatorRequest.kind'],
    ['a field of another kind', event({ kind: 'feed-oldest', from: 1 }), 'operatorRequest.from'],
    // A key that is not a field name shows by a short prefix, never whole (it could be anything, a secret too).
    [
      'a key that is no name',
      event({ kind: 'feed-oldest', 's3cr/t+=': 1 }),
      'operatorRequest.<key "s3cr?t…" of 8 character(s)>',
    ],
    ['a key of another kind', event({ kind: 'feed-oldest', sequence: 1 }), 'operatorRequest.sequence'],
    [
      'a key beside the request',
      { operatorRequest: { version: 1, kind: 'feed-oldest', program: 'default' }, AKIAIOSFODNN7EXAMPLE: 1 },
      'event.<key "AKIAIO…" of 20 character(s)>',
    ],
    ['a bad program name', event({ kind: 'feed-oldest', program: '../x' }), 'operatorRequest.program'],
    ['both sequence and id', event({ kind: 'event', sequence: 1, id: 'a' }), 'operatorRequest.sequence'],
    ['neither sequence nor id', event({ kind: 'event' }), 'operatorRequest.sequence'],
    ['a fractional sequence', event({ kind: 'event', sequence: 1.5 }), 'operatorRequest.sequence'],
    ['an empty id', event({ kind: 'event', id: '' }), 'operatorRequest.id'],
    [
      'a replay without to',
      event({ kind: 'replay', from: 1, holdMs: 1, dryRun: false }),
      'operatorRequest.to',
    ],
    [
      'a replay backwards',
      event({ kind: 'replay', from: 9, to: 3, holdMs: 1, dryRun: false }),
      'operatorRequest.to',
    ],
    [
      'a replay from 0',
      event({ kind: 'replay', from: 0, to: 3, holdMs: 1, dryRun: false }),
      'operatorRequest.from',
    ],
    [
      'a dry run as text',
      event({ kind: 'replay', from: 1, to: 3, holdMs: 1, dryRun: 'yes' }),
      'operatorRequest.dryRun',
    ],
    [
      'a hold of 0',
      event({ kind: 'replay', from: 1, to: 3, holdMs: 0, dryRun: false }),
      'operatorRequest.holdMs',
    ],
    [
      'a timeout of an hour',
      event({ kind: 'doctor-bank', timeoutMs: 3_600_000 }),
      'operatorRequest.timeoutMs',
    ],
    [
      'a walk without its start time',
      event({ kind: 'feed-latest', from: null }),
      'operatorRequest.startedAt',
    ],
  ])('refuses %s, naming the field', (_name, payload, field) => {
    expect(refusedField(payload)).toBe(field);
  });

  it('suggests the field a misspelling is near, quoting neither the key nor any value', () => {
    const secret = 'AKIAIOSFODNN7EXAMPLE';
    const attempt = () =>
      parseOperatorRequest(event({ kind: 'event', sequnce: 4, [secret]: 'v4lue-not-shown', id: secret }));

    expect(attempt).toThrow(
      /operatorRequest\.<key "sequnc…" of 7 character\(s\)> is not a field of a event request; did you mean sequence\?/,
    );
    try {
      attempt();
    } catch (error) {
      expectNoSecretShown(error, [secret, 'sequnce', 'v4lue-not-shown']);
    }
  });
});
