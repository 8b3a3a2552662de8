/**
 * The Custom Event Bus (`eventBusKind: 'custom'`): the bus keeps every event for its retention
 * period and replays from it (no archive), and delivers through a subscriber per route (no rules);
 * `tail` delivers through a role the construct creates. Everything the construct asks of its bus
 * (`poller-bus.ts`), answered for this kind.
 */
import { CfnOutput, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import {
  REPLAY_SUBSCRIBER_PREFIX,
  TAIL_RESOURCE_PREFIX,
} from '../../functions/cli/operator-resource-names.ts';
import { STACK_OUTPUTS } from '../../functions/cli/stack-outputs.ts';
import { ConfigurationError } from '../../functions/core/errors.ts';
import { SCHEMA_EVENT_TYPES } from '../../functions/event-schema/event-json-schema.ts';
import { CustomBusRouting, type SubscriberRoute } from './custom-bus-routing.ts';
import { CustomEventBus } from './custom-event-bus.ts';
import type { KeyServiceUses } from './encryption-key.ts';
import { EventSchemas } from './event-schemas.ts';
import { acknowledgeWildcards, OPERATOR_WILDCARDS } from './operator-grants.ts';
import type {
  BusEnvironment,
  PollerBusInputs,
  PollerBusMembers,
  PollerBusStrategy,
  SourceGuard,
} from './poller-bus.ts';
import { CustomBusSourceGuard } from './poller-source-guard.ts';
import { settingDuration } from './setting-props.ts';
import { createTailDeliveryRole, tailQueueArns } from './tail-delivery-role.ts';

export class CustomPollerBus implements PollerBusStrategy {
  readonly customBus: CustomEventBus;
  readonly schemas: EventSchemas;
  readonly subscriberRouting: CustomBusRouting;
  /** The role the bus delivers the CLI's `tail` through (its subscriber is created at run time). */
  readonly tailDeliveryRole: iam.Role;
  readonly reportsBrokenOrder = true;
  readonly #retentionDays: number;
  readonly #scope: Construct;

  constructor(scope: Construct, { props, resolved }: PollerBusInputs) {
    if (props.existingEventBus !== undefined) {
      throw new ConfigurationError(
        "BankingEventsPoller: existingEventBus is a classic bus; eventBusKind 'custom' creates its own Custom Event Bus. Leave one out",
        { prop: 'existingEventBus' },
      );
    }
    this.#scope = scope;
    const { encryptionKey, settings } = resolved;
    const { eventSource } = settings;
    this.#retentionDays = settings.busRetentionDays;
    // The custom bus keeps every event for its retention period and replays from it: no archive,
    // no rules (subscribers instead).
    this.customBus = new CustomEventBus(scope, 'CustomEventBus', {
      eventBusName: settings.eventBusName,
      retention: settingDuration('busRetentionDays', settings.busRetentionDays),
      encryptionKey,
      description: `Every event from ${eventSource}, kept for replay`,
    });
    // The registry documents the event types, whichever bus carries them (it discovers nothing).
    this.schemas = new EventSchemas(scope, 'Schemas', {
      eventSource,
      eventTypes: [...SCHEMA_EVENT_TYPES],
      registryName: props.schemaRegistryName,
    });
    this.subscriberRouting = new CustomBusRouting(scope, 'Routing', {
      bus: this.customBus,
      eventSource,
      routes: resolved.routes,
      unrouted: resolved.unrouted,
      quarantine: resolved.quarantine,
      eventGroups: settings.eventGroupBy !== 'none',
      encryptionKey,
    });
    this.tailDeliveryRole = createTailDeliveryRole(scope, 'TailDeliveryRole', this.customBus.eventBusName);
  }

  get eventBusName(): string {
    return this.customBus.eventBusName;
  }

  get eventBusArn(): string {
    return this.customBus.eventBusArn;
  }

  get members(): PollerBusMembers {
    return {
      customBus: this.customBus,
      subscriberRouting: this.subscriberRouting,
      tailDeliveryRole: this.tailDeliveryRole,
    };
  }

  get routes(): SubscriberRoute[] {
    return this.subscriberRouting.routes;
  }

  functionEnvironment(): BusEnvironment {
    // Always named by its ARN: the Custom Event Bus's API takes nothing else.
    return { EVENT_BUS_NAME: this.customBus.eventBusArn, EVENT_BUS_KIND: 'custom' };
  }

  grantFunctionPublish(role: iam.IGrantable): void {
    this.customBus.grantPutEvents(role);
  }

  guardSource(eventSource: string, poller: iam.IGrantable): SourceGuard {
    return new CustomBusSourceGuard(this.customBus, eventSource, poller);
  }

  grantPublish(grantee: iam.IGrantable): iam.Grant {
    return this.customBus.grantPutEvents(grantee);
  }

  keyServiceUses(): Pick<KeyServiceUses, 'customBus'> {
    return {
      customBus: { name: this.customBus.eventBusName, arnPattern: this.customBus.eventBusArnPattern },
    };
  }

  addOutputs(scope: Construct): void {
    // The kind first: the CLI reads the bus's outputs by it (a custom bus has no archive).
    new CfnOutput(scope, STACK_OUTPUTS.eventBusKind, {
      value: 'custom',
      description: 'EventBridge Custom Event Bus',
    });
    new CfnOutput(scope, STACK_OUTPUTS.eventBusName, {
      value: this.customBus.eventBusName,
      description: 'Subscribe here (aws eventsv2 create-subscriber)',
    });
    new CfnOutput(scope, STACK_OUTPUTS.eventBusArn, {
      value: this.customBus.eventBusArn,
      description: 'The custom bus (event-busv2): PutEvents, subscribers and replays name it',
    });
    new CfnOutput(scope, STACK_OUTPUTS.busRetentionDays, {
      value: String(this.#retentionDays),
      description: 'How far back a subscriber can start (replay from the bus)',
    });
    new CfnOutput(scope, STACK_OUTPUTS.tailDeliveryRole, {
      value: this.tailDeliveryRole.roleArn,
      description:
        "The role the bus delivers tail's events through (tail reads it; grantOperatorTail may pass it)",
    });
  }

  /**
   * The bus (its state and retention window), its subscribers listed, and the construct's
   * subscribers described (doctor checks they run). IAM checks `DescribeEventBus` and
   * `ListSubscribers` (scoped to the bus) against the bus, and `DescribeSubscriber` against the
   * subscriber (docs: eb-custom-bus-permissions).
   */
  grantOperatorRead(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: ['events:DescribeEventBus', 'events:ListSubscribers'],
      resourceArns: [this.customBus.eventBusArn],
    }).combine(
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['events:DescribeSubscriber'],
        resourceArns: this.routes.map((route) => route.subscriber.attrSubscriberArn),
      }),
    );
  }

  /**
   * A subscriber named `bep-tail-…` (created on the bus, hence both resources for
   * `CreateSubscriber`), delivering through the construct's tail delivery role (the only role it
   * may pass), and the queue (no queue policy: the subscriber delivers with its role).
   */
  grantOperatorTail(grantee: iam.IGrantable): iam.Grant {
    const queues = tailQueueArns(this.#scope);
    const subscribers = subscriberArns(this.#scope, TAIL_RESOURCE_PREFIX);
    const busArn = this.customBus.eventBusArn;
    const grants = [
      iam.Grant.addToPrincipal({ grantee, actions: ['events:DescribeEventBus'], resourceArns: [busArn] }),
      iam.Grant.addToPrincipal({
        grantee,
        // TagQueue: CreateQueue with tags (tail tags its queue "created-by") needs it too.
        actions: [
          'sqs:CreateQueue',
          'sqs:TagQueue',
          'sqs:GetQueueAttributes',
          'sqs:ReceiveMessage',
          'sqs:DeleteMessage',
          'sqs:DeleteQueue',
        ],
        resourceArns: [queues],
      }),
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['events:CreateSubscriber'],
        resourceArns: [busArn, subscribers],
      }),
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['events:DeleteSubscriber'],
        resourceArns: [subscribers],
      }),
      grantPassToEventBridge([this.tailDeliveryRole.roleArn], grantee),
    ];
    acknowledgeWildcards(grantee, [
      [queues, OPERATOR_WILDCARDS.tailQueues],
      [subscribers, OPERATOR_WILDCARDS.tailSubscribers],
    ]);
    return grants.reduce((all, grant) => all.combine(grant));
  }

  /**
   * `archive-replay` from the bus's retention: reads the retention window, lists and describes the
   * construct's subscribers, and creates point-in-time copies named `bep-replay-…` that deliver
   * through the copied subscribers' roles (the only roles it may pass).
   */
  grantOperatorRecovery(grantee: iam.IGrantable): iam.Grant {
    const replays = subscriberArns(this.#scope, REPLAY_SUBSCRIBER_PREFIX);
    const grants = [
      this.grantOperatorRead(grantee),
      iam.Grant.addToPrincipal({
        grantee,
        actions: ['events:CreateSubscriber'],
        resourceArns: [this.customBus.eventBusArn, replays],
      }),
      grantPassToEventBridge(
        this.routes.map((route) => route.deliveryRole.roleArn),
        grantee,
      ),
    ];
    acknowledgeWildcards(grantee, [[replays, OPERATOR_WILDCARDS.replaySubscribers]]);
    return grants.reduce((all, grant) => all.combine(grant));
  }
}

/** Subscribers named `<prefix>…`: `arn:…:events:REGION:ACCOUNT:subscriber/<prefix>*\/*` (the id is the service's). */
function subscriberArns(scope: Construct, prefix: string): string {
  return Stack.of(scope).formatArn({
    service: 'events',
    resource: 'subscriber',
    resourceName: `${prefix}*/*`,
  });
}

/**
 * `iam:PassRole` on `roles`, to EventBridge only: a subscriber names the role it delivers through,
 * and creating one passes it.
 */
function grantPassToEventBridge(roleArns: readonly string[], grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['iam:PassRole'],
    resourceArns: [...roleArns],
    conditions: { StringEquals: { 'iam:PassedToService': 'events.amazonaws.com' } },
  });
}
