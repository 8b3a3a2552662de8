/**
 * The bus the poller publishes to, as one strategy per kind (`eventBusKind`): the classic bus
 * (`classic-poller-bus.ts`: rules, an archive) or the Custom Event Bus (`custom-poller-bus.ts`:
 * subscribers, its own retention). The construct chooses one, once (`poller-bus-kinds.ts`), and asks
 * it everything that differs between the kinds: what it creates, what the function publishes with,
 * the bus policy, the key policy, the operator grants' bus statements, the stack outputs. A new
 * question is a method here and in each kind; nothing else branches on the kind.
 */
import type * as events from 'aws-cdk-lib/aws-events';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import type { SettingValue } from '../../functions/settings/settings.ts';
import type { CustomBusRouting } from './custom-bus-routing.ts';
import type { CustomEventBus } from './custom-event-bus.ts';
import type { KeyServiceUses } from './encryption-key.ts';
import type { EventRouting, RouteQueues } from './event-routing.ts';
import type { EventSchemas } from './event-schemas.ts';
import type { BankingEventsPollerProps } from './poller-props.ts';
import type { ResolvedPollerProps } from './poller-props-resolution.ts';

/** `classic` or `custom`, as the settings table declares them. */
export type EventBusKind = SettingValue<'eventBusKind'>;

/**
 * The bus the poller publishes to, whichever kind (`BankingEventsPoller.bus`): what both kinds have.
 * The kind's own parts are the construct's `eventBus`, `archive` and `routing` (classic) or
 * `customBus`, `subscriberRouting` and `tailDeliveryRole` (custom).
 */
export interface IPollerBus {
  /** The bus's name. */
  readonly eventBusName: string;
  /**
   * The bus's ARN: what PutEvents and policies name (a Custom Event Bus's ends in its
   * service-generated id).
   */
  readonly eventBusArn: string;
  /**
   * Adds to `scope` (a stack) the outputs the operator CLI's `--stack` reads about the bus: its
   * name (`EventBusName`) and ARN (`EventBusArn`), and its kind's own: `ArchiveName` on the classic
   * bus; `EventBusKind`, `BusRetentionDays` and `TailDeliveryRoleArn` on the Custom Event Bus.
   * Once per stack.
   */
  addOutputs(scope: Construct): void;
}

/** The construct's public members that belong to one kind; the other kind's are left out. */
export interface PollerBusMembers {
  readonly eventBus?: events.IEventBus;
  readonly archive?: events.Archive;
  readonly routing?: EventRouting;
  readonly customBus?: CustomEventBus;
  readonly subscriberRouting?: CustomBusRouting;
  readonly tailDeliveryRole?: iam.Role;
}

/** What the function's environment says about the bus. */
export interface BusEnvironment {
  readonly EVENT_BUS_NAME: string;
  /** Left out (`undefined`) where the handler's default kind applies. */
  readonly EVENT_BUS_KIND: string | undefined;
}

/** The bus policy that keeps the poller's source to the poller. */
export interface SourceGuard {
  /** Exempts `grantee`'s principal from the Deny. */
  allow(grantee: iam.IGrantable): void;
}

/** What each kind is built from. */
export interface PollerBusInputs {
  readonly props: BankingEventsPollerProps;
  readonly resolved: ResolvedPollerProps;
}

/**
 * One kind of bus, built in the construct's scope: its constructor creates the bus, the schema
 * registry and the routing, in that order (the order the template lists them in). Everything else
 * the construct, the function, the key and the operator grants need of the bus, it answers.
 */
export interface PollerBusStrategy extends IPollerBus {
  /** The construct's members of this kind. */
  readonly members: PollerBusMembers;
  readonly schemas: EventSchemas;
  /** Every route's queues: routed types, the quarantine, the catch-all. */
  readonly routes: RouteQueues[];
  /** The handler counts `OrderBroken` (a group's order broken at the bus): alarms and dashboard show it. */
  readonly reportsBrokenOrder: boolean;
  /** The bus the function publishes to, as its environment names it. */
  functionEnvironment(): BusEnvironment;
  /** `events:PutEvents` on the bus for the function's role. */
  grantFunctionPublish(role: iam.IGrantable): void;
  /** The bus policy keeping `eventSource` to the poller's role; none on a bus the construct did not create. */
  guardSource(eventSource: string, poller: iam.IGrantable): SourceGuard | undefined;
  /** `events:PutEvents` on the bus for `grantee` (`allowPublishAsPoller`'s Allow). */
  grantPublish(grantee: iam.IGrantable): iam.Grant;
  /** What EventBridge does with `encryptionKey` for this bus (`admitKeyServices`). */
  keyServiceUses(): Pick<KeyServiceUses, 'bus' | 'customBus'>;
  /** `status` and `doctor`: describing the bus (and what it delivers through). */
  grantOperatorRead(grantee: iam.IGrantable): iam.Grant;
  /** `tail`: its temporary queue and what feeds it from the bus; every statement but the stack's. */
  grantOperatorTail(grantee: iam.IGrantable): iam.Grant;
  /** `archive-replay`: replaying from the bus's archive or retention. */
  grantOperatorRecovery(grantee: iam.IGrantable): iam.Grant;
}

/** How a kind is built: `new (scope, inputs)`. */
export type PollerBusKind = new (scope: Construct, inputs: PollerBusInputs) => PollerBusStrategy;
