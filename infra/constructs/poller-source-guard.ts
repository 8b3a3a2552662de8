/**
 * The bus's resource policy that keeps the poller's `source` to the poller: subscribers trust
 * `source: banking.events`, so nobody else in the account may put an event with it, whatever
 * their own IAM policies allow. An explicit Deny in a resource policy wins over any Allow.
 */
import { Lazy, Stack } from 'aws-cdk-lib';
import type * as events from 'aws-cdk-lib/aws-events';
import * as eventsv2 from 'aws-cdk-lib/aws-eventsv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import { ConfigurationError } from '../../functions/core/errors.ts';
import type { CustomEventBus } from './custom-event-bus.ts';

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

/**
 * The same Deny on the Custom Event Bus, as its resource policy (`AWS::EventsV2::ResourcePolicy`):
 * its PutEvents supplies `events:source` too. Written as the service stores it (a single action,
 * resource or principal as a scalar), so a stack update shows no drift.
 */
export class CustomBusSourceGuard {
  readonly #publishers: string[] = [];
  public readonly resource: eventsv2.CfnResourcePolicy;

  constructor(bus: CustomEventBus, source: string, poller: iam.IGrantable) {
    this.allow(poller);
    this.resource = new eventsv2.CfnResourcePolicy(bus, 'Policy', {
      eventBusArn: bus.eventBusArn,
      policyDocument: Lazy.any({
        produce: () => {
          const publishers = [...new Set(this.#publishers)];
          return {
            Version: '2012-10-17',
            Statement: [
              {
                Sid: POLLER_SOURCE_STATEMENT_ID,
                Effect: 'Deny',
                Principal: '*',
                Action: 'events:PutEvents',
                Resource: bus.eventBusArn,
                Condition: {
                  'ForAnyValue:StringEquals': { 'events:source': source },
                  ArnNotEquals: { 'aws:PrincipalArn': publishers.length === 1 ? publishers[0] : publishers },
                },
              },
            ],
          };
        },
      }),
    });
    // The principals must exist when the policy is written: the poller's role first.
    const role = poller.grantPrincipal;
    if (role instanceof iam.Role && Stack.of(role) === Stack.of(bus)) this.resource.node.addDependency(role);
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
