import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConfigurationError } from '../../functions/core/errors.ts';
import { INVALID_EVENT_TYPE } from '../../functions/core/invalid-event.ts';
import { pascalCase } from './construct-names.ts';
import { EncryptedQueueTarget } from './encrypted-queue-target.ts';

/**
 * What every target of a route must be built with: the route's dead-letter queue and its retry
 * policy. Pass it on unchanged, e.g. `(options) => [new targets.LambdaFunction(fn, options)]`.
 */
export interface RouteTargetOptions {
  readonly deadLetterQueue: sqs.IQueue;
  readonly maxEventAge: Duration;
  readonly retryAttempts: number;
}

/**
 * Builds a route's rule targets: the form of `EventRouteOptions.targets` that every CDK language can
 * implement (Python `@jsii.implements(IRouteTargets)`, Java `implements IRouteTargets`).
 */
export interface IRouteTargets {
  /**
   * The targets of the route's rule (Lambda, Step Functions, API destination…), each built with
   * `options`: the route's dead-letter queue and retry policy. A target built without them is
   * rejected at synth time.
   */
  bind(options: RouteTargetOptions): events.IRuleTarget[];
}

/** How events of one type (or the unrouted ones) are delivered. */
export interface EventRouteOptions {
  /**
   * Builds the rule's targets (Lambda, Step Functions, API destination…) from the options the
   * route created; a target built without them is rejected at synth time. A function, for
   * TypeScript; every language has `routeTargets`. Not with `routeTargets`.
   *
   * @default - one SQS queue (SSE-SQS, TLS only) that redrives to the route's DLQ
   *
   * @jsii ignore
   */
  readonly targets?: (options: RouteTargetOptions) => events.IRuleTarget[];
  /**
   * Builds the rule's targets, as `targets` does, through an object's `bind(options)`: the form
   * every CDK language can give. Not with `targets`.
   *
   * @default - one SQS queue (SSE-SQS, TLS only) that redrives to the route's DLQ
   */
  readonly routeTargets?: IRouteTargets;
  /**
   * How long EventBridge keeps retrying a delivery before it goes to the DLQ.
   *
   * @default Duration.hours(24)
   */
  readonly maxEventAge?: Duration;
  /**
   * How many times EventBridge retries a delivery before it goes to the DLQ.
   *
   * @default 185
   */
  readonly retryAttempts?: number;
  /**
   * Custom bus only (`eventBusKind: 'custom'`): deliver the route's events in order within their
   * event group (`eventGroupBy`), through a FIFO subscriber onto an SQS FIFO queue (and a FIFO
   * dead-letter queue). Not with `targets`.
   *
   * @default false
   */
  readonly ordered?: boolean;
}

export interface EventRoutingProps {
  readonly eventBus: events.IEventBus;
  /** Rules match this `source` only, so other publishers on a shared bus are left alone. */
  readonly eventSource: string;
  /** Detail-type (lower case) → route. */
  readonly routes: Readonly<Record<string, EventRouteOptions>>;
  /** The catch-all for every detail-type not in `routes` (nor the quarantine's). */
  readonly unrouted: EventRouteOptions;
  /**
   * The quarantine: events that failed validation, published with the detail-type
   * `invalid_event`. A route of its own, so they never mix with the unrouted ones.
   *
   * @default - no quarantine route (they reach the catch-all)
   */
  readonly quarantine?: EventRouteOptions;
  /**
   * Receives after which a message on a created queue moves to the route's DLQ.
   *
   * @default 5
   */
  readonly maxReceiveCount?: number;
  /**
   * A customer-managed key for the queues and DLQs the routes create. Its policy must let
   * EventBridge use it for the bus's rules (`BankingEventsPoller` adds that statement).
   *
   * @default - SQS-managed keys (SSE-SQS)
   */
  readonly encryptionKey?: kms.IKey;
}

/** What every route has, whichever kind of bus delivers it: its name and its queues. */
export interface RouteQueues {
  /** The detail-type, or `unrouted` for the catch-all. */
  readonly name: string;
  readonly isCatchAll: boolean;
  /** The route of `invalid_event`: events that failed validation. */
  readonly isQuarantine: boolean;
  /** The queue the route created; `undefined` when the caller supplied its own targets. */
  readonly queue: sqs.Queue | undefined;
  /** Deliveries EventBridge gave up on, and messages consumers failed `maxReceiveCount` times. */
  readonly deadLetterQueue: sqs.Queue;
}

/** One rule and what hangs off it. */
export interface Route extends RouteQueues {
  readonly rule: events.Rule;
}

const EVENT_TYPE_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const MIN_EVENT_AGE = Duration.minutes(1);
/** The delivery defaults of a route, the longest either kind of bus keeps retrying. */
export const MAX_EVENT_AGE = Duration.hours(24);
export const MAX_RETRY_ATTEMPTS = 185;
/** The longest SQS allows: a consumer outage of up to two weeks loses nothing. */
const QUEUE_RETENTION = Duration.days(14);
/** SQS's largest message (1 MiB), as large as an event the bus delivers. */
const MAX_MESSAGE_BYTES = 1_048_576;

/**
 * Type-based routing on the bus: one rule per routed detail-type and a catch-all rule
 * (`anything-but` the routed types) so a type the upstream adds later is never dropped silently.
 * Every target gets a DLQ and an explicit retry policy.
 */
export class EventRouting extends Construct {
  /** Routed types first, in the order given, then the quarantine (if any), then the catch-all. */
  public readonly routes: Route[];
  public readonly catchAll: Route;
  public readonly quarantine: Route | undefined;

  private readonly maxReceiveCount: number;
  private readonly encryptionKey: kms.IKey | undefined;

  constructor(scope: Construct, id: string, props: EventRoutingProps) {
    super(scope, id);
    this.maxReceiveCount = props.maxReceiveCount ?? 5;
    this.encryptionKey = props.encryptionKey;

    const eventTypes = Object.keys(props.routes);
    validateRoutes(props);
    for (const [name, options] of [
      ...Object.entries(props.routes),
      [INVALID_EVENT_TYPE, props.quarantine] as const,
      ['unrouted', props.unrouted] as const,
    ]) {
      if (options?.ordered === true) {
        throw new ConfigurationError(
          `Route "${name}": ordered applies to eventBusKind 'custom' only; the classic bus delivers unordered. ` +
            "Set eventBusKind: 'custom' or remove ordered",
          { route: name },
        );
      }
    }

    const routes: Route[] = [];
    for (const eventType of eventTypes) {
      const options = props.routes[eventType]!;
      routes.push(
        this.addRoute(`Route${pascalCase(eventType)}`, eventType, 'type', options, {
          eventBus: props.eventBus,
          description: `Routes ${eventType} events from ${props.eventSource}`,
          eventPattern: { source: [props.eventSource], detailType: [eventType] },
        }),
      );
    }
    const claimed = [...eventTypes];
    if (props.quarantine !== undefined) {
      this.quarantine = this.addRoute('Quarantine', INVALID_EVENT_TYPE, 'quarantine', props.quarantine, {
        eventBus: props.eventBus,
        description: `Quarantines events from ${props.eventSource} that failed validation (${INVALID_EVENT_TYPE})`,
        eventPattern: { source: [props.eventSource], detailType: [INVALID_EVENT_TYPE] },
      });
      routes.push(this.quarantine);
      claimed.push(INVALID_EVENT_TYPE);
    }
    this.catchAll = this.addRoute('Unrouted', 'unrouted', 'catch-all', props.unrouted, {
      eventBus: props.eventBus,
      description: `Catches events from ${props.eventSource} whose type has no route, so none is lost`,
      eventPattern:
        claimed.length === 0
          ? { source: [props.eventSource] }
          : { source: [props.eventSource], detailType: events.Match.anythingBut(...claimed) },
    });
    routes.push(this.catchAll);
    this.routes = routes;
  }

  private addRoute(
    id: string,
    name: string,
    kind: 'type' | 'quarantine' | 'catch-all',
    options: EventRouteOptions,
    ruleProps: events.RuleProps,
  ): Route {
    const scope = new Construct(this, id);
    const deadLetterQueue = new sqs.Queue(scope, 'DeadLetterQueue', queueSecurity(this.encryptionKey));
    const targetOptions: RouteTargetOptions = {
      deadLetterQueue,
      maxEventAge: options.maxEventAge ?? MAX_EVENT_AGE,
      retryAttempts: options.retryAttempts ?? MAX_RETRY_ATTEMPTS,
    };
    validateRetryPolicy(name, targetOptions);

    const rule = new events.Rule(scope, 'Rule', ruleProps);
    let queue: sqs.Queue | undefined;
    let ruleTargets: events.IRuleTarget[];
    const buildTargets = targetBuilder(name, options);
    if (buildTargets === undefined) {
      queue = new sqs.Queue(scope, 'Queue', {
        ...queueSecurity(this.encryptionKey),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: this.maxReceiveCount },
      });
      ruleTargets = [
        this.encryptionKey === undefined
          ? new targets.SqsQueue(queue, targetOptions)
          : new EncryptedQueueTarget(queue, targetOptions),
      ];
    } else {
      ruleTargets = buildTargets(targetOptions);
      if (ruleTargets.length === 0) {
        throw new ConfigurationError(
          `Route "${name}": targets() returned no target; return at least one, or leave targets out for a queue`,
          { route: name },
        );
      }
      Validations.of(deadLetterQueue).acknowledge({
        id: 'AwsSolutions-SQS3',
        reason:
          'This queue is the dead-letter queue of EventBridge rule targets; cdk-nag only recognises ' +
          'DLQs named in an SQS redrive policy or a Lambda DeadLetterConfig.',
      });
    }
    for (const target of ruleTargets) rule.addTarget(target);
    rule.node.addValidation({ validate: () => missingDeliverySettings(rule, name) });
    return {
      name,
      isCatchAll: kind === 'catch-all',
      isQuarantine: kind === 'quarantine',
      rule,
      queue,
      deadLetterQueue,
    };
  }
}

/**
 * Encrypted at rest with SQS-managed keys (EventBridge and Scheduler can write to those) or the
 * given customer-managed key, TLS only, and as large a message as SQS takes: the bus delivers
 * events of up to 1 MiB (the claim check keeps every entry under that with room for the envelope),
 * and the queue's default of 256 KiB would refuse the larger ones, in the DLQ too.
 */
export function queueSecurity(encryptionKey?: kms.IKey): sqs.QueueProps {
  return {
    ...(encryptionKey === undefined
      ? { encryption: sqs.QueueEncryption.SQS_MANAGED }
      : { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: encryptionKey }),
    enforceSSL: true,
    retentionPeriod: QUEUE_RETENTION,
    maxMessageSizeBytes: MAX_MESSAGE_BYTES,
  };
}

/**
 * What builds a route's targets: `targets` or `routeTargets.bind`; `undefined` for the route's queue.
 *
 * @throws ConfigurationError when both are given
 */
export function targetBuilder(
  name: string,
  options: EventRouteOptions,
): ((options: RouteTargetOptions) => events.IRuleTarget[]) | undefined {
  const { targets: build, routeTargets } = options;
  if (build !== undefined && routeTargets !== undefined) {
    throw new ConfigurationError(
      `Route "${name}": targets and routeTargets both build the rule's targets; give one of them`,
      { route: name },
    );
  }
  return (
    build ?? (routeTargets === undefined ? undefined : (targetOptions) => routeTargets.bind(targetOptions))
  );
}

/** The routes' own rules, for either kind of bus: their types, and the quarantine's type kept to it. */
export function validateRoutes(props: Pick<EventRoutingProps, 'routes' | 'quarantine'>): void {
  const eventTypes = Object.keys(props.routes);
  validateEventTypes(eventTypes);
  if (props.quarantine !== undefined && eventTypes.includes(INVALID_EVENT_TYPE)) {
    throw new ConfigurationError(
      `Route "${INVALID_EVENT_TYPE}": that detail-type is the quarantine's; configure it with the quarantine option`,
      { route: INVALID_EVENT_TYPE },
    );
  }
}

function validateEventTypes(eventTypes: readonly string[]): void {
  const ids = new Map<string, string>();
  for (const eventType of eventTypes) {
    if (!EVENT_TYPE_PATTERN.test(eventType)) {
      throw new ConfigurationError(
        `Route "${eventType}": an event type is the lower-case detail-type the poller publishes ` +
          '(letters, digits, ".", "_" or "-", starting with a letter or digit, at most 128 characters)',
        { route: eventType },
      );
    }
    const id = pascalCase(eventType);
    const other = ids.get(id);
    if (other !== undefined) {
      throw new ConfigurationError(
        `Routes "${other}" and "${eventType}" differ only in punctuation; keep one`,
        {
          route: eventType,
        },
      );
    }
    ids.set(id, eventType);
  }
}

export function validateRetryPolicy(
  name: string,
  options: Pick<RouteTargetOptions, 'maxEventAge' | 'retryAttempts'>,
): void {
  const age = options.maxEventAge.toSeconds();
  if (age < MIN_EVENT_AGE.toSeconds() || age > MAX_EVENT_AGE.toSeconds()) {
    throw new ConfigurationError(`Route "${name}": maxEventAge must be between 1 minute and 24 hours`, {
      route: name,
      maxEventAgeSeconds: age,
    });
  }
  const attempts = options.retryAttempts;
  if (!Number.isInteger(attempts) || attempts < 0 || attempts > MAX_RETRY_ATTEMPTS) {
    throw new ConfigurationError(`Route "${name}": retryAttempts must be an integer from 0 to 185`, {
      route: name,
      retryAttempts: attempts,
    });
  }
}

/** Synth-time check that a caller-built target did not drop the DLQ or the retry policy. */
function missingDeliverySettings(rule: events.Rule, name: string): string[] {
  const cfnRule = rule.node.defaultChild as events.CfnRule;
  const rendered = Stack.of(rule).resolve(cfnRule.targets) as
    | Array<{ id?: string; deadLetterConfig?: unknown; retryPolicy?: unknown }>
    | undefined;
  return (rendered ?? [])
    .filter((target) => target.deadLetterConfig === undefined || target.retryPolicy === undefined)
    .map(
      (target) =>
        `Route "${name}": target ${target.id ?? '?'} has no dead-letter queue or retry policy; ` +
        'build it with the RouteTargetOptions passed to targets()',
    );
}
