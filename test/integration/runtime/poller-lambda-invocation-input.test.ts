/**
 * The invocation's event as Lambda delivers it to the shipped bundle: anything but the schedule's
 * `{"program": …}` and the CLI's `{"operatorRequest": …}` is refused with INVOCATION_INVALID,
 * naming the field, before any AWS call (a recorder in front of moto sees none: no lease write,
 * no secret read) and any request to the bank; the error and the log quote none of the input.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AwsCallRecorder } from '../../support/aws-call-recorder.ts';
import { EventText } from '../../support/lambda-runtime/lambda-container.ts';
import { summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(3_300);

/** An access key id and its secret, as a key: the shape a leaked credential has. */
const CREDENTIAL_KEY = 'AKIAIOSFODNN7EXAMPLE:wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const MEGABYTE_NAME = 'p'.repeat(1_000_000);
const DEPTH = 100_000;

/** `{"program": {"a": {"a": … "x" …}}}`, DEPTH objects deep, as JSON text (JSON.stringify cannot write it). */
const deepProgram = new EventText(`{"program":${'{"a":'.repeat(DEPTH)}"x"${'}'.repeat(DEPTH)}}`);

describe('an invocation the function does not take, as Lambda runs it', () => {
  let recorder: AwsCallRecorder;

  beforeAll(async () => {
    recorder = await AwsCallRecorder.start(inject('motoEndpoint'));
  });
  afterAll(() => recorder?.close());

  it.each<[string, unknown, string]>([
    [
      'a misspelt operatorRequest',
      { operatorrequest: { version: 1, kind: 'feed-oldest' } },
      'event.<key "operat…"',
    ],
    [
      'a request hidden under __proto__',
      JSON.parse('{"__proto__": {"operatorRequest": {"version": 1, "kind": "feed-oldest"}}}'),
      'event.__proto__',
    ],
    [
      'constructor as a key',
      JSON.parse('{"program": "default", "constructor": {"name": "x"}}'),
      'event.constructor',
    ],
    ['a program of a million characters', { program: MEGABYTE_NAME }, 'event.program'],
    ['a program nested 100,000 deep', deepProgram, 'event.program.<key "a" of 1 character(s)>'],
    ['a key shaped like a credential', { program: 'default', [CREDENTIAL_KEY]: 'x' }, 'event.<key "AKIAIO…"'],
    [
      'a credential-shaped key in an operator request',
      { operatorRequest: { version: 1, kind: 'feed-oldest', program: 'default', [CREDENTIAL_KEY]: 1 } },
      'operatorRequest.<key "AKIAIO…"',
    ],
  ])(
    '%s: refused with its code naming the field, nothing called, nothing echoed',
    async (_name, event, field) => {
      const s = await scenarios.start({ environment: { AWS_ENDPOINT_URL: recorder.endpoint } });
      s.simulator.generate(3);
      recorder.clear();

      const invocation = await s.invoke(event);
      await recorder.idle();

      const operator = field.startsWith('operatorRequest');
      expect(invocation.outcome).toMatchObject({
        kind: 'error',
        errorType: operator ? 'OperatorRequestError' : 'InvocationInputError',
        errorMessage: expect.stringContaining(field),
      });
      const shown = `${JSON.stringify(invocation.outcome)}\n${invocation.stdout}\n${invocation.stderr}`;
      expect(shown).toContain(operator ? '"code":"OPERATOR_REQUEST_INVALID"' : '"code":"INVOCATION_INVALID"');
      expect(recorder.calls.map((call) => `${call.service}:${call.operation}`)).toEqual([]);
      expect(s.simulator.requests).toEqual([]);
      expect(s.simulator.issuedTokens()).toEqual([]);
      // Of a key the function does not know, at most its first 6 characters; of a value, nothing.
      expect(shown).not.toContain(CREDENTIAL_KEY.slice(6, 20));
      expect(shown).not.toContain('p'.repeat(64));
      expect(shown).not.toContain('"a":{"a"');
      expect(shown.length).toBeLessThan(20_000);
    },
  );

  it("still polls for the schedule's payload, through the same recorder", async () => {
    const s = await scenarios.start({ environment: { AWS_ENDPOINT_URL: recorder.endpoint } });
    s.simulator.generate(3);
    recorder.clear();

    const invocation = await s.invoke({ program: s.program });
    await recorder.idle();

    expect(summaryOf(invocation)).toMatchObject({ published: 3 });
    expect(recorder.count('secretsmanager:GetSecretValue')).toBe(1);
    expect(recorder.count('dynamodb:UpdateItem')).toBeGreaterThan(0);
  });
});
