/**
 * A rule target for a route's queue when the queue is encrypted with the construct's key.
 * `targets.SqsQueue` drops the rule's `aws:SourceArn` condition from the queue policy for an
 * encrypted queue (to keep its own key grant free of a cycle) and grants the key to every rule of
 * the account; this target keeps the queue policy and the DLQ's to the one rule, and leaves the key
 * to the key-policy statement of `encryption-key.ts`, scoped to the bus's rules.
 */

import type { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';

/** The route's delivery settings (the fields of `RouteTargetOptions`). */
export interface EncryptedQueueTargetOptions {
  readonly deadLetterQueue: sqs.IQueue;
  readonly maxEventAge: Duration;
  readonly retryAttempts: number;
}

export class EncryptedQueueTarget implements events.IRuleTarget {
  constructor(
    private readonly queue: sqs.IQueue,
    private readonly options: EncryptedQueueTargetOptions,
  ) {}

  bind(rule: events.IRule): events.RuleTargetConfig {
    const fromRule = { ArnEquals: { 'aws:SourceArn': events.CfnRule.arnForRule(rule) } };
    for (const queue of [this.queue, this.options.deadLetterQueue]) {
      queue.addToResourcePolicy(
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('events.amazonaws.com')],
          actions: ['sqs:SendMessage'],
          resources: [queue.queueArn],
          conditions: fromRule,
        }),
      );
    }
    return {
      arn: this.queue.queueArn,
      targetResource: this.queue,
      deadLetterConfig: { arn: this.options.deadLetterQueue.queueArn },
      retryPolicy: {
        maximumRetryAttempts: this.options.retryAttempts,
        maximumEventAgeInSeconds: this.options.maxEventAge.toSeconds(),
      },
    };
  }
}
