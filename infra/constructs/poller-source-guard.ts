/**
 * The bus's resource policy that keeps the poller's `source` to the poller: subscribers trust
 * `source: banking.events`, so nobody else in the account may put an event with it, whatever
 * their own IAM policies allow. An explicit Deny in a resource policy wins over any Allow.
 */
import { Lazy } from 'aws-cdk-lib';
import type * as events from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import { ConfigurationError } from '../../functions/core/errors.ts';

/** The statement's id on the bus (CDK prefixes it with `cdk-`); also names its EventBusPolicy. */
export const POLLER_SOURCE_STATEMENT_ID = 'OnlyThePollerPublishesItsSource';

/**
 * Adds to `bus` a statement denying `events:PutEvents` of an entry with `source` to every
 * principal whose ARN is not among the publishers (the poller's role first, then each principal
 * given to `allow`, e.g. an operator's recovery role). The list is read at synth, so principals
 * allowed after construction are in it.
 *
 * Archive replay is not concerned: EventBridge itself delivers replayed events to the bus's
 * rules (`events:StartReplay` on the archive), no principal calls PutEvents.
 */
export class PollerSourceGuard {
  readonly #publishers: string[] = [];

  constructor(bus: events.EventBus, source: string, poller: iam.IGrantable) {
    this.allow(poller);
    bus.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: POLLER_SOURCE_STATEMENT_ID,
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['events:PutEvents'],
        resources: [bus.eventBusArn],
        conditions: {
          // `events:source` holds the source of every entry of the request: one of ours is enough.
          'ForAnyValue:StringEquals': { 'events:source': [source] },
          // For a role session, aws:PrincipalArn is the role's ARN, not the session's.
          ArnNotEquals: { 'aws:PrincipalArn': Lazy.list({ produce: () => [...new Set(this.#publishers)] }) },
        },
      }),
    );
  }

  /** Exempts `grantee`'s principal (a role, a user or an ARN principal) from the Deny. */
  allow(grantee: iam.IGrantable): void {
    this.#publishers.push(...principalArnsOf(grantee.grantPrincipal));
  }
}

/** The IAM ARNs that `aws:PrincipalArn` shows for `principal`; refused at synth when it has none. */
export function principalArnsOf(principal: iam.IPrincipal): string[] {
  const json = principal.policyFragment.principalJson.AWS ?? [];
  if (json.length === 0) {
    throw new ConfigurationError(
      `BankingEventsPoller: allowPublishAsPoller needs an IAM principal with an ARN (a role, a user, an ArnPrincipal); got ${principal}`,
      { prop: 'allowPublishAsPoller' },
    );
  }
  return json;
}
