/**
 * The IAM evaluation the operator-permissions test relies on: if it allowed too much, that test
 * would pass whatever the grants said.
 */
import { describe, expect, it } from 'vitest';
import { isAllowed, type PolicyStatement, resolveIntrinsics } from '../../support/iam-policy-evaluation.ts';

const QUEUES = 'arn:aws:sqs:us-east-1:123456789012:bep-tail-*';
const statements: PolicyStatement[] = [
  { Effect: 'Allow', Action: ['sqs:ReceiveMessage', 'sqs:DeleteMessage'], Resource: QUEUES },
  {
    Effect: 'Allow',
    Action: 'events:PutTargets',
    Resource: 'arn:aws:events:us-east-1:123456789012:rule/bus/bep-tail-*',
    Condition: { ArnLike: { 'events:TargetArn': QUEUES } },
  },
  {
    Effect: 'Allow',
    Action: 'events:StartReplay',
    Resource: ['arn:aws:events:us-east-1:123456789012:replay/*'],
  },
];

describe('isAllowed', () => {
  it('matches actions whatever their case, resources by their exact case and wildcards', () => {
    const queue = 'arn:aws:sqs:us-east-1:123456789012:bep-tail-1a2b';

    expect(isAllowed(statements, { action: 'SQS:receivemessage', resources: [queue] })).toBe(true);
    expect(isAllowed(statements, { action: 'sqs:ReceiveMessage', resources: [queue.toUpperCase()] })).toBe(
      false,
    );
    expect(
      isAllowed(statements, {
        action: 'sqs:ReceiveMessage',
        resources: ['arn:aws:sqs:us-east-1:123456789012:other'],
      }),
    ).toBe(false);
    expect(isAllowed(statements, { action: 'sqs:DeleteQueue', resources: [queue] })).toBe(false);
  });

  it('needs every resource of a request allowed', () => {
    const replay = 'arn:aws:events:us-east-1:123456789012:replay/r1';
    const archive = 'arn:aws:events:us-east-1:123456789012:archive/a';

    expect(isAllowed(statements, { action: 'events:StartReplay', resources: [replay] })).toBe(true);
    expect(isAllowed(statements, { action: 'events:StartReplay', resources: [replay, archive] })).toBe(false);
  });

  it('holds a condition against every value the request carries, and fails it when the key is absent', () => {
    const rule = 'arn:aws:events:us-east-1:123456789012:rule/bus/bep-tail-1a2b';
    const target = (...arns: string[]) => ({
      action: 'events:PutTargets',
      resources: [rule],
      conditionKeys: { 'events:TargetArn': arns },
    });

    expect(isAllowed(statements, target('arn:aws:sqs:us-east-1:123456789012:bep-tail-1a2b'))).toBe(true);
    expect(
      isAllowed(
        statements,
        target(
          'arn:aws:sqs:us-east-1:123456789012:bep-tail-1a2b',
          'arn:aws:lambda:us-east-1:123456789012:function:x',
        ),
      ),
    ).toBe(false);
    expect(isAllowed(statements, { action: 'events:PutTargets', resources: [rule] })).toBe(false);
  });
});

describe('resolveIntrinsics', () => {
  it('puts the deployed values in place of bound intrinsics and joins', () => {
    const bindings = new Map([
      ['AWS::Region', 'us-east-1'],
      [JSON.stringify({ 'Fn::GetAtt': ['Table', 'Arn'] }), 'arn:aws:dynamodb:us-east-1:1:table/t'],
    ]);

    expect(
      resolveIntrinsics(
        [
          { 'Fn::GetAtt': ['Table', 'Arn'] },
          { 'Fn::Join': ['', ['arn:aws:sqs:', { Ref: 'AWS::Region' }, ':1:q']] },
        ],
        bindings,
      ),
    ).toEqual(['arn:aws:dynamodb:us-east-1:1:table/t', 'arn:aws:sqs:us-east-1:1:q']);
  });

  it('refuses an intrinsic nothing is bound to, rather than guessing', () => {
    expect(() => resolveIntrinsics({ 'Fn::GetAtt': ['Other', 'Arn'] }, new Map())).toThrow(
      /Nothing deployed/,
    );
    expect(() => resolveIntrinsics({ Ref: 'Other' }, new Map())).toThrow(/Nothing deployed/);
  });
});
