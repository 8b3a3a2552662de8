/**
 * The role a Custom Event Bus delivers `tail`'s events through. A subscriber delivers with a role
 * it is given (`InvokeConfiguration.RoleArn`), and `tail` creates its subscriber at run time: the
 * construct creates the role once, so an operator needs only `iam:PassRole` on it, never
 * `iam:CreateRole`. It can send only to `tail`'s queues, and only EventBridge, for `tail`'s
 * subscribers of this account, can assume it.
 */
import { ArnFormat, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { TAIL_RESOURCE_PREFIX } from '../../functions/cli/operator-resource-names.ts';

/** Why the role's patterns are acceptable: its findings are acknowledged with these reasons. */
const REASONS = Object.freeze({
  queues: `tail creates its queue at run time, named ${TAIL_RESOURCE_PREFIX}<random>: the role may send to such queues only.`,
  inlinePolicy:
    "CDK's grants write the role's own inline policy: sqs:SendMessage on tail's queues; a managed policy would hold the same statement.",
});

export function createTailDeliveryRole(scope: Construct, id: string, busName: string): iam.Role {
  const stack = Stack.of(scope);
  const role = new iam.Role(scope, id, {
    description: `EventBridge delivers the events of bus ${busName} to the queue of banking-events-poller tail`,
    // Only EventBridge, on behalf of a tail subscriber of this account (its ARN ends in a
    // service-generated id), as the route roles are conditioned (custom-bus-routing.ts).
    assumedBy: new iam.ServicePrincipal('events.amazonaws.com').withConditions({
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'events',
          resource: 'subscriber',
          resourceName: `${TAIL_RESOURCE_PREFIX}*/*`,
        }),
      },
    }),
  });
  const queues = tailQueueArns(scope);
  // tail's queue has no customer-managed key (SSE-SQS at most): SendMessage is all delivery needs.
  role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: [queues] }));
  Validations.of(role).acknowledge({
    id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:sqs:<AWS::Region>:<AWS::AccountId>:${TAIL_RESOURCE_PREFIX}*]`,
    reason: REASONS.queues,
  });
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
    Validations.of(role).acknowledge({ id: `${pack}-IAMNoInlinePolicy`, reason: REASONS.inlinePolicy });
  }
  return role;
}

/** `tail`'s queues: `arn:…:sqs:REGION:ACCOUNT:bep-tail-*`. */
export function tailQueueArns(scope: Construct): string {
  return Stack.of(scope).formatArn({
    service: 'sqs',
    resource: `${TAIL_RESOURCE_PREFIX}*`,
    arnFormat: ArnFormat.NO_RESOURCE_NAME,
  });
}
