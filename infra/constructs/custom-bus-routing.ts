/**
 * Routing on the Custom Event Bus: each route becomes a subscriber (`AWS::EventsV2::Subscriber`)
 * that filters on the detail-type and delivers to the route's queue, with the route's retry policy
 * and its dead-letter queue as the on-failure destination. The catch-all matches every type no route
 * names, so a type the bank adds later still arrives somewhere. A route with `ordered` gets a FIFO
 * subscriber onto an SQS FIFO queue whose message group is the event's group.
 */
import { Names, Stack, Validations } from 'aws-cdk-lib';
import * as eventsv2 from 'aws-cdk-lib/aws-eventsv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { REPLAY_SUBSCRIBER_PREFIX } from '../../functions/cli/operator-resource-names.ts';
import { ConfigurationError } from '../../functions/core/errors.ts';
import { INVALID_EVENT_TYPE } from '../../functions/core/invalid-event.ts';
import { pascalCase } from './construct-names.ts';
import type { CustomEventBus } from './custom-event-bus.ts';
import { grantKeyThrough } from './encryption-key.ts';
import {
  type EventRouteOptions,
  MAX_EVENT_AGE,
  MAX_RETRY_ATTEMPTS,
  queueSecurity,
  targetBuilder,
  validateRetryPolicy,
  validateRoutes,
} from './event-routing.ts';

export interface CustomBusRoutingProps {
  readonly bus: CustomEventBus;
  /** Subscribers match this `source` only, so other publishers on the bus are left alone. */
  readonly eventSource: string;
  /** Detail-type (lower case) → route. */
  readonly routes: Readonly<Record<string, EventRouteOptions>>;
  /** The catch-all for every detail-type not in `routes` (nor the quarantine's). */
  readonly unrouted: EventRouteOptions;
  /** The quarantine: events published as `invalid_event`. */
  readonly quarantine: EventRouteOptions;
  /**
   * Whether the publisher names an event group (`eventGroupBy` is not `'none'`): an ordered route
   * needs one, its FIFO queue's message group is the event's group.
   */
  readonly eventGroups: boolean;
  /**
   * Receives after which a message on a created queue moves to the route's DLQ.
   *
   * @default 5
   */
  readonly maxReceiveCount?: number;
  /**
   * A customer-managed key for the queues; the delivery roles get its data-key actions through SQS.
   *
   * @default - SQS-managed keys (SSE-SQS)
   */
  readonly encryptionKey?: kms.IKey;
}

/**
 * One subscriber and what hangs off it: a `RouteQueues` whose queue is always there. It declares
 * the members itself rather than extending `RouteQueues`, since narrowing an inherited member is
 * invalid C# (jsii refuses it); TypeScript still takes it wherever a `RouteQueues` goes.
 */
export interface SubscriberRoute {
  /** The detail-type, or `unrouted` for the catch-all. */
  readonly name: string;
  readonly isCatchAll: boolean;
  /** The route of `invalid_event`: events that failed validation. */
  readonly isQuarantine: boolean;
  /** The queue the subscriber delivers to. */
  readonly queue: sqs.Queue;
  /** Deliveries EventBridge gave up on, and messages consumers failed `maxReceiveCount` times. */
  readonly deadLetterQueue: sqs.Queue;
  readonly subscriber: eventsv2.CfnSubscriber;
  /** The role EventBridge assumes to deliver to the queue and the dead-letter queue. */
  readonly deliveryRole: iam.Role;
  /** A FIFO subscriber onto FIFO queues. */
  readonly ordered: boolean;
}

/**
 * The FIFO queue's message group, from the event group the poller published with. The service
 * documents this expression for SQS FIFO targets (`eb-custom-bus-target-sqs`): the group the
 * producer set is `SystemMetadata.EventGroupId`, the fields EventBridge assigns are `aws:`-prefixed.
 */
export const EVENT_GROUP_MESSAGE_GROUP_ID = '{% $events.SystemMetadata.EventGroupId %}';
/** The service documents no limit for a subscriber's name; CloudFormation names stay within 64. */
const SUBSCRIBER_NAME_LENGTH = 64;

export class CustomBusRouting extends Construct {
  /** `EVENT_GROUP_MESSAGE_GROUP_ID`, for every language: a FIFO queue's message group from the event's group. */
  static readonly EVENT_GROUP_MESSAGE_GROUP_ID: string = EVENT_GROUP_MESSAGE_GROUP_ID;

  /** Routed types first, in the order given, then the quarantine, then the catch-all. */
  public readonly routes: SubscriberRoute[];
  public readonly catchAll: SubscriberRoute;
  public readonly quarantine: SubscriberRoute;

  readonly #props: CustomBusRoutingProps;

  constructor(scope: Construct, id: string, props: CustomBusRoutingProps) {
    super(scope, id);
    this.#props = props;
    validateRoutes(props);
    const eventTypes = Object.keys(props.routes);
    const source = props.eventSource;
    const routes = eventTypes.map((eventType) =>
      this.#addRoute(`Route${pascalCase(eventType)}`, eventType, 'type', props.routes[eventType]!, {
        source: [source],
        'detail-type': [eventType],
      }),
    );
    this.quarantine = this.#addRoute('Quarantine', INVALID_EVENT_TYPE, 'quarantine', props.quarantine, {
      source: [source],
      'detail-type': [INVALID_EVENT_TYPE],
    });
    routes.push(this.quarantine);
    this.catchAll = this.#addRoute('Unrouted', 'unrouted', 'catch-all', props.unrouted, {
      source: [source],
      'detail-type': [{ 'anything-but': [...eventTypes, INVALID_EVENT_TYPE] }],
    });
    routes.push(this.catchAll);
    this.routes = routes;
  }

  #addRoute(
    id: string,
    name: string,
    kind: 'type' | 'quarantine' | 'catch-all',
    options: EventRouteOptions,
    pattern: Record<string, unknown>,
  ): SubscriberRoute {
    const { bus, encryptionKey } = this.#props;
    if (targetBuilder(name, options) !== undefined) {
      throw new ConfigurationError(
        `Route "${name}": targets builds rule targets, and the custom bus has no rules; leave targets (and routeTargets) out ` +
          'for a queue, and attach your own subscribers to poller.customBus',
        { route: name },
      );
    }
    const ordered = options.ordered === true;
    if (ordered && !this.#props.eventGroups) {
      throw new ConfigurationError(
        `Route "${name}": ordered needs an event group, and eventGroupBy is 'none'. ` +
          "Set eventGroupBy: 'program' or 'account', or remove ordered",
        { route: name },
      );
    }
    const maxEventAge = options.maxEventAge ?? MAX_EVENT_AGE;
    const retryAttempts = options.retryAttempts ?? MAX_RETRY_ATTEMPTS;
    validateRetryPolicy(name, { maxEventAge, retryAttempts });

    const scope = new Construct(this, id);
    // A FIFO queue is another resource (FifoQueue cannot change in place): its own ids, so switching
    // a route to ordered never tries to turn the standard queue into one.
    const fifo: Partial<sqs.QueueProps> = ordered ? { fifo: true, contentBasedDeduplication: true } : {};
    const deadLetterQueue = new sqs.Queue(scope, ordered ? 'FifoDeadLetterQueue' : 'DeadLetterQueue', {
      ...queueSecurity(encryptionKey),
      ...fifo,
    });
    const queue = new sqs.Queue(scope, ordered ? 'FifoQueue' : 'Queue', {
      ...queueSecurity(encryptionKey),
      ...fifo,
      deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: this.#props.maxReceiveCount ?? 5 },
    });

    const subscriberName = Names.uniqueResourceName(scope, {
      maxLength: SUBSCRIBER_NAME_LENGTH,
      separator: '-',
    });
    const deliveryRole = new iam.Role(scope, 'DeliveryRole', {
      description: `EventBridge delivers the ${name} events of bus ${bus.eventBusName} to their queue`,
      // Only EventBridge, on behalf of this subscriber of this account (its ARN ends in a
      // service-generated id, hence the pattern), or of a point-in-time copy of it that the CLI's
      // archive-replay creates (named bep-replay-…; creating one also needs iam:PassRole on this role).
      assumedBy: new iam.ServicePrincipal('events.amazonaws.com').withConditions({
        StringEquals: { 'aws:SourceAccount': Stack.of(this).account },
        ArnLike: {
          'aws:SourceArn': [subscriberName, `${REPLAY_SUBSCRIBER_PREFIX}*`].map((name) =>
            Stack.of(this).formatArn({
              service: 'events',
              resource: 'subscriber',
              resourceName: `${name}/*`,
            }),
          ),
        },
      }),
    });
    // The delivery and, when it gives up, the dead letter: SendMessage on the two queues, and
    // nothing else (the SQS target needs no more: eb-custom-bus-target-sqs).
    deliveryRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['sqs:SendMessage'],
        resources: [queue.queueArn, deadLetterQueue.queueArn],
      }),
    );
    if (encryptionKey !== undefined) grantKeyThrough(encryptionKey, deliveryRole, 'sqs');
    for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
      Validations.of(deliveryRole).acknowledge({
        id: `${pack}-IAMNoInlinePolicy`,
        reason:
          "CDK's grants write the delivery role's own inline policy: sqs:SendMessage on this route's queue and " +
          'dead-letter queue (and its key through SQS); a managed policy would hold the same statements.',
      });
    }

    const subscriber = new eventsv2.CfnSubscriber(scope, 'Subscriber', {
      name: subscriberName,
      eventBusArn: bus.eventBusArn,
      description: describe(name, kind, this.#props.eventSource),
      type: ordered ? 'FIFO' : 'UNORDERED',
      filterConfiguration: {
        language: 'EVENT_BRIDGE_PATTERN',
        // PutEvents publishes the classic envelope as the event's data: source and detail-type are in it.
        filters: [{ scope: 'DATA', pattern: JSON.stringify(pattern) }],
      },
      invokeConfiguration: {
        targetArn: queue.queueArn,
        roleArn: deliveryRole.roleArn,
        ...(ordered ? { sqsParameters: { messageGroupId: EVENT_GROUP_MESSAGE_GROUP_ID } } : {}),
      },
      // The event as published (the classic envelope), as the classic bus delivers it.
      transformer: { type: 'RAW' },
      retryPolicy: {
        maxEventAgeInSeconds: maxEventAge.toSeconds(),
        maxRetryAttempts: retryAttempts,
        retryStrategy: 'ALL',
      },
      onFailureConfiguration: { arn: deadLetterQueue.queueArn },
    });
    // The role's policy first: a subscriber created before it could not deliver (the role itself
    // is already referenced).
    const policy = deliveryRole.node.tryFindChild('DefaultPolicy');
    if (policy !== undefined) subscriber.node.addDependency(policy);
    return {
      name,
      isCatchAll: kind === 'catch-all',
      isQuarantine: kind === 'quarantine',
      subscriber,
      deliveryRole,
      ordered,
      queue,
      deadLetterQueue,
    };
  }
}

function describe(name: string, kind: 'type' | 'quarantine' | 'catch-all', source: string): string {
  switch (kind) {
    case 'type':
      return `Delivers ${name} events from ${source}`;
    case 'quarantine':
      return `Quarantines events from ${source} that failed validation (${INVALID_EVENT_TYPE})`;
    case 'catch-all':
      return `Catches events from ${source} whose type has no route, so none is lost`;
  }
}
