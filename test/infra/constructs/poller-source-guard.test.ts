/**
 * The bus that only the poller may speak for: the resource policy the construct puts on the bus it
 * creates, the principals `allowPublishAsPoller` exempts, and nothing on an existing bus.
 *
 * moto cannot check the policy's logic: its EventBridge PutEvents never reads the bus policy
 * (moto/events/models.py `put_events`), and its IAM policy engine, used only for S3 bucket
 * policies and role trust policies, evaluates `StringEquals` alone and treats a Deny whose
 * condition does not hold as a Deny (moto/iam/access_control.py `IAMPolicyStatement`). So these
 * are assertions on the statement as CloudFormation receives it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/errors.ts';
import { BankingEventsPoller, type BankingEventsPollerProps } from '../../../infra/constructs/index.ts';
import { cdkJsonContext, logicalIdOf, REPO_ROOT } from '../support/poller-app-fixture.ts';

const SHARED_BUS_ARN = 'arn:aws:events:eu-west-1:123456789012:event-bus/shared';

function newStack(): Stack {
  const app = new App({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] } });
  return new Stack(app, 'Host', { env: { account: '123456789012', region: 'eu-west-1' } });
}

function synth(
  props: BankingEventsPollerProps | ((stack: Stack) => BankingEventsPollerProps) = {},
  configure?: (stack: Stack, poller: BankingEventsPoller) => void,
) {
  const stack = newStack();
  const poller = new BankingEventsPoller(stack, 'Poller', typeof props === 'function' ? props(stack) : props);
  configure?.(stack, poller);
  return { stack, poller, template: Template.fromStack(stack) };
}

type Statement = {
  Effect: string;
  Principal: unknown;
  Action: unknown;
  Resource: unknown;
  Condition: Record<string, Record<string, unknown[]>>;
};

function busStatements(template: Template): Statement[] {
  return Object.values(template.findResources('AWS::Events::EventBusPolicy')).map(
    (resource) => (resource as { Properties: { Statement: Statement } }).Properties.Statement,
  );
}

describe('the bus the construct creates', () => {
  it('denies PutEvents with the poller source to every principal but the function role', () => {
    const { stack, poller, template } = synth({ eventSource: 'acme.banking' });
    const busId = logicalIdOf(stack, poller.eventBus as events.EventBus);
    const roleId = logicalIdOf(stack, poller.pollerFunction.role as iam.Role);

    const statements = busStatements(template);

    expect(statements).toEqual([
      expect.objectContaining({
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Action: 'events:PutEvents',
        Resource: { 'Fn::GetAtt': [busId, 'Arn'] },
        Condition: {
          'ForAnyValue:StringEquals': { 'events:source': ['acme.banking'] },
          ArnNotEquals: { 'aws:PrincipalArn': [{ 'Fn::GetAtt': [roleId, 'Arn'] }] },
        },
      }),
    ]);
    template.hasResourceProperties('AWS::Events::EventBusPolicy', { EventBusName: { Ref: busId } });
  });

  it('exempts each principal given to allowPublishAsPoller, also after construction, and grants it PutEvents', () => {
    const { stack, poller, template } = synth({}, (stack, poller) => {
      const oncall = new iam.Role(stack, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() });
      poller.allowPublishAsPoller(oncall);
      poller.allowPublishAsPoller(iam.Role.fromRoleName(stack, 'Recovery', 'ops/recovery'));
      poller.allowPublishAsPoller(new iam.ArnPrincipal('arn:aws:iam::123456789012:user/break-glass'));
    });
    const roleId = logicalIdOf(stack, poller.pollerFunction.role as iam.Role);
    const oncallId = logicalIdOf(stack, stack.node.findChild('Oncall') as iam.Role);

    const [statement] = busStatements(template);

    expect(statement?.Condition.ArnNotEquals?.['aws:PrincipalArn']).toEqual([
      { 'Fn::GetAtt': [roleId, 'Arn'] },
      { 'Fn::GetAtt': [oncallId, 'Arn'] },
      'arn:aws:iam::123456789012:role/ops/recovery',
      'arn:aws:iam::123456789012:user/break-glass',
    ]);
    template.hasResourceProperties('AWS::IAM::Policy', {
      Roles: [{ Ref: oncallId }],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Action: 'events:PutEvents', Effect: 'Allow' })]),
      },
    });
  });

  it('refuses a principal without an IAM ARN, naming the method', () => {
    const { poller } = synth();

    expect(() => poller.allowPublishAsPoller(new iam.ServicePrincipal('lambda.amazonaws.com'))).toThrow(
      ConfigurationError,
    );
  });
});

describe('an existing bus', () => {
  it('gets no policy from the construct (its owner adds the statement); allowPublishAsPoller still grants PutEvents', () => {
    const { template } = synth(
      (stack) => ({ existingEventBus: events.EventBus.fromEventBusArn(stack, 'Shared', SHARED_BUS_ARN) }),
      (stack, poller) => {
        poller.allowPublishAsPoller(
          new iam.Role(stack, 'Oncall', { assumedBy: new iam.AccountRootPrincipal() }),
        );
      },
    );

    template.resourceCountIs('AWS::Events::EventBusPolicy', 0);
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Action: 'events:PutEvents',
            Resource: SHARED_BUS_ARN,
          }),
        ]),
      },
      Roles: [{ Ref: Match.stringLikeRegexp('^Oncall') }],
    });
  });
});

describe('the statement docs/security.md gives for an existing bus', () => {
  it('is the one the construct puts on the bus it creates, placeholders aside', () => {
    const deployDoc = readFileSync(path.join(REPO_ROOT, 'docs/security.md'), 'utf8');
    const block = /```json\n(\{\n\s+"Sid": "OnlyThePollerPublishesItsSource"[\s\S]*?)```/.exec(
      deployDoc,
    )?.[1];
    const documented = JSON.parse(block ?? 'null') as Statement & { Sid: string };
    const [synthesized] = busStatements(synth().template);

    expect(documented).toMatchObject({
      Effect: synthesized?.Effect,
      Principal: synthesized?.Principal,
      Action: synthesized?.Action,
    });
    expect(Object.keys(documented.Condition).sort()).toEqual(
      Object.keys(synthesized?.Condition ?? {}).sort(),
    );
    expect(documented.Condition['ForAnyValue:StringEquals']).toEqual(
      synthesized?.Condition['ForAnyValue:StringEquals'],
    );
    expect(Object.keys(documented.Condition.ArnNotEquals ?? {})).toEqual(['aws:PrincipalArn']);
  });
});
