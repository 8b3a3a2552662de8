/**
 * The operator commands on a Custom Event Bus (`operator-bus.ts`), through its API
 * (`custom-bus-operations.ts`): `tail` feeds its queue through a temporary subscriber, `doctor`
 * checks the bus is ACTIVE, its retention and the stack's subscribers, `archive-replay` replays from
 * the bus's retention with point-in-time copies of its subscribers, `status` shows the retention
 * window. The bus has no write probe and no `replay --local`.
 */
import { CUSTOM_BUS_ENTRY_RULES } from '../adapters/aws/eventbridge-entry-rules.ts';
import { failed, ok, skipped } from '../adapters/banking-http/bank-checks.ts';
import type { BusEntryRules } from '../core/bus-entry-rules.ts';
import type { EventPublisher } from '../core/ports.ts';
import { UsageError } from './cli-errors.ts';
import type { CommandContext } from './command-context.ts';
import {
  type BusRetention,
  createTemporarySubscriber,
  deleteSubscriber,
  describeRetention,
  isRoleArn,
  listSubscribers,
  REPLAY_SUBSCRIBER_PREFIX,
  type SubscriberSummary,
  startRetentionReplay,
} from './custom-bus-operations.ts';
import type { Deployment } from './deployment.ts';
import type { CheckResult } from './doctor-report.ts';
import type { ArchiveReplayOptions, BusStatus, OperatorBus, QueueFeed, TailOptions } from './operator-bus.ts';
import { defaultReplayName, TAIL_RESOURCE_PREFIX } from './operator-resource-names.ts';
import { toJson } from './output-format.ts';
import { STACK_OUTPUTS } from './stack-outputs.ts';

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class CustomOperatorBus implements OperatorBus {
  readonly entryRules: BusEntryRules = CUSTOM_BUS_ENTRY_RULES;
  readonly #deployment: Deployment;

  constructor(deployment: Deployment) {
    this.#deployment = deployment;
  }

  async tailFeed(
    context: CommandContext,
    options: TailOptions,
  ): Promise<{ feed: QueueFeed; busShown: string }> {
    const eventBusArn = this.#deployment.eventBusArn;
    const roleArn = deliveryRoleOf(options, this.#deployment.output(STACK_OUTPUTS.tailDeliveryRole));
    const bus = await describeRetention(context.aws.eventBridgeV2, eventBusArn);
    if (bus.state !== undefined && bus.state !== 'ACTIVE') {
      throw new UsageError(
        `Event bus ${eventBusArn} is ${bus.state}${bus.stateReason === undefined ? '' : ` (${bus.stateReason})`}, not ACTIVE: it takes no subscriber`,
        'run doctor to see what is wrong with the bus',
      );
    }
    return {
      feed: new SubscriberFeed(context, eventBusArn, options.name, roleArn),
      busShown: bus.name ?? eventBusArn,
    };
  }

  /**
   * The bus exists and is ACTIVE (else its state and `StateReason`), its retention (a warning when
   * it is not what the stack was deployed with), and each subscriber RUNNING and not revoked. No
   * write probe: the bus would retain a probe event for its whole retention and replay it to every
   * subscriber without a source filter.
   */
  async doctorChecks(context: CommandContext): Promise<CheckResult[]> {
    const check = 'event bus';
    let eventBusArn: string;
    try {
      eventBusArn = this.#deployment.eventBusArn;
    } catch (error) {
      // A stack that says custom but has no EventBusArn output: no bus to check.
      return [skipped(check, message(error))];
    }
    const rpc = context.aws.eventBridgeV2;
    let bus: BusRetention;
    try {
      bus = await describeRetention(rpc, eventBusArn);
    } catch (error) {
      const why = 'needs the bus';
      const unchecked = [skipped('bus retention', why), skipped('subscribers', why)];
      if (error instanceof UsageError)
        return [failed(check, error.message, 'check --event-bus or --stack, and the region'), ...unchecked];
      return [
        failed(check, message(error), 'use credentials that may describe the bus (events:DescribeEventBus)'),
        ...unchecked,
      ];
    }
    const name = bus.name ?? eventBusArn;
    const results: CheckResult[] = [];
    if (bus.state === 'ACTIVE') {
      results.push(
        ok(check, `${name} is ACTIVE (Custom Event Bus; no write probe: the bus would retain it)`),
      );
    } else {
      results.push(
        failed(
          check,
          `${name} is ${bus.state ?? 'in no state'}${bus.stateReason === undefined ? '' : `: ${bus.stateReason}`}`,
          busStateFix(bus.state),
        ),
      );
    }
    results.push(this.#checkRetention(bus.retentionPeriodInDays, bus.retentionWindowStartTime));
    results.push(...(await this.#checkSubscribers(context, eventBusArn)));
    return results;
  }

  #checkRetention(days: number | undefined, oldest: Date | undefined): CheckResult {
    const check = 'bus retention';
    if (days === undefined) {
      return {
        check,
        verdict: 'warning',
        detail: 'the bus reports no retention period',
        fix: 'check the bus',
      };
    }
    const window = `${days} day(s), oldest event ${oldest?.toISOString() ?? 'unknown'} (archive-replay starts at or after it)`;
    const deployed = this.#deployment.output(STACK_OUTPUTS.busRetentionDays);
    if (deployed !== undefined && Number(deployed) !== days) {
      return {
        check,
        verdict: 'warning',
        detail: `${window}; the stack was deployed with ${deployed} day(s)`,
        fix: 'someone changed the bus outside the stack: deploy again (cdk deploy), or set busRetention to match',
      };
    }
    return ok(check, window);
  }

  async #checkSubscribers(context: CommandContext, eventBusArn: string): Promise<CheckResult[]> {
    const rpc = context.aws.eventBridgeV2;
    const fromStack = stackSubscribers(this.#deployment);
    let subscribers: {
      readonly label: string;
      readonly arn?: string;
      readonly summary?: SubscriberSummary;
    }[];
    try {
      if (fromStack.length > 0) {
        subscribers = await Promise.all(
          fromStack.map(async ([outputKey, arn]) => {
            const label = outputKey.slice(STACK_OUTPUTS.subscriberArnPrefix.length);
            try {
              return {
                label,
                arn,
                summary: await rpc.call<SubscriberSummary>('DescribeSubscriber', { SubscriberArn: arn }),
              };
            } catch (error) {
              if (error instanceof Error && error.name === 'ResourceNotFoundException') return { label, arn };
              throw error;
            }
          }),
        );
      } else {
        const listed = (await listSubscribers(rpc, eventBusArn)).filter(
          (subscriber) => !isOperatorCopy(subscriber),
        );
        subscribers = listed.map((summary) => ({ label: summary.Name ?? '?', summary }));
      }
    } catch (error) {
      return [
        failed(
          'subscribers',
          message(error),
          'use credentials that may read the subscribers (events:ListSubscribers, events:DescribeSubscriber)',
        ),
      ];
    }
    if (subscribers.length === 0) {
      return [
        {
          check: 'subscribers',
          verdict: 'warning',
          detail: 'the bus has no subscriber: events are retained, and delivered to no one',
          fix: 'deploy the stack with routes, or attach a subscriber (aws eventsv2 create-subscriber)',
        },
      ];
    }
    return subscribers.map(({ label, arn, summary }) => {
      const check = `subscriber (${label})`;
      if (summary === undefined)
        return failed(check, `${arn} does not exist`, 'deploy the stack again (cdk deploy)');
      const name = summary.Name ?? label;
      if (summary.Revoked === true) {
        return failed(
          check,
          `${name} was revoked by the bus owner: it delivers nothing, ever again`,
          'delete it (aws eventsv2 delete-subscriber) and deploy again (cdk deploy)',
        );
      }
      if (summary.State === 'RUNNING') return ok(check, `${name} is RUNNING`);
      return failed(
        check,
        `${name} is ${summary.State ?? 'in no state'}: the bus holds its events back`,
        `resume it where it stopped: aws eventsv2 update-subscriber --subscriber-arn ${summary.SubscriberArn ?? arn} --state RUNNING`,
      );
    });
  }

  /**
   * The replay from the bus's retention: point-in-time copies of its subscribers. The bus reports
   * no progress for them, so the command says what it created and how to remove it, and returns.
   */
  async archiveReplay(context: CommandContext, options: ArchiveReplayOptions): Promise<void> {
    const { terminal, globals } = context;
    const eventBusArn = this.#deployment.eventBusArn;
    const { window } = options;
    if (options.rule !== undefined || options.archive !== undefined) {
      throw new UsageError(
        `${options.rule !== undefined ? '--rule' : '--archive'} is for a classic bus; the Custom Event Bus ${eventBusArn} keeps its events itself and delivers through subscribers`,
        'pass --subscriber NAME (repeatable), or nothing to replay to every subscriber',
      );
    }
    const { retention, subscribers } = await startRetentionReplay(context.aws.eventBridgeV2, {
      eventBusArn,
      window,
      subscribers: options.subscriber ?? [],
      namePrefix: options.name ?? defaultReplayName(REPLAY_SUBSCRIBER_PREFIX),
    });
    const since = new Date(window.since).toISOString();
    const until = new Date(window.until).toISOString();
    terminal.err(
      'Each delivers the window once, then stops at its end point. Delete them afterwards: ' +
        subscribers
          .map((subscriber) => `aws eventsv2 delete-subscriber --subscriber-arn ${subscriber.subscriberArn}`)
          .join('; ') +
        '\n',
    );
    if (globals.json) {
      terminal.out(
        toJson({
          eventBus: eventBusArn,
          since,
          until,
          retentionPeriodInDays: retention.retentionPeriodInDays ?? null,
          retentionWindowStartTime: retention.retentionWindowStartTime?.toISOString() ?? null,
          subscribers,
        }),
      );
      return;
    }
    const lines = subscribers.map(
      (subscriber) =>
        `  ${subscriber.name} (a copy of ${subscriber.copyOf}${subscriber.targetArn === undefined ? '' : ` → ${subscriber.targetArn}`})\n`,
    );
    terminal.out(
      `Replay from the retention of ${eventBusArn}, ${since} .. ${until}, started by ${subscribers.length} subscriber(s):\n` +
        lines.join(''),
    );
  }

  /** The bus's retention window: how far back a replay can start. A bus that cannot be read is a note, never the end of `status`. */
  async status(context: CommandContext): Promise<BusStatus | undefined> {
    const eventBusArn = this.#deployment.eventBusArn;
    let bus: BusRetention;
    try {
      bus = await describeRetention(context.aws.eventBridgeV2, eventBusArn);
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      context.terminal.err(`Could not read the retention of ${eventBusArn} (${reason}).\n`);
      return undefined;
    }
    const days = bus.retentionPeriodInDays;
    const start = bus.retentionWindowStartTime;
    return {
      rows: [
        ['name', bus.name ?? bus.eventBusArn],
        ['kind', 'Custom Event Bus'],
        ['retention', days === undefined ? 'unknown' : `${days} day(s)`],
        [
          'oldest event',
          start === undefined ? 'unknown' : `${start.toISOString()} (a replay starts at or after it)`,
        ],
      ],
      json: {
        eventBusArn: bus.eventBusArn,
        retentionPeriodInDays: days ?? null,
        retentionWindowStartTime: start?.toISOString() ?? null,
      },
    };
  }

  /**
   * Refused: each event's group (`eventGroupBy`, which FIFO subscribers keep in order) is the
   * deployed function's setting, which the stack does not name; the function replays with it.
   */
  localPublisher(): EventPublisher {
    throw new UsageError(
      `replay --local publishes from this machine, and the Custom Event Bus ${this.#deployment.eventBusArn} keeps ` +
        "each event group in order by the deployed function's eventGroupBy, which this machine does not know",
      'leave --local out: with --stack the deployed function replays the range with its own settings',
    );
  }
}

/** What to do about a bus that is not ACTIVE, by its state (the API's BusState). */
function busStateFix(state: string | undefined): string {
  switch (state) {
    case 'CREATING':
    case 'UPDATING':
    case 'DELETING':
      return 'wait for it to finish, then run doctor again';
    case 'CREATE_FAILED':
      return 'it cannot be repaired in place: delete it (aws eventsv2 delete-event-bus) and deploy again (cdk deploy)';
    case 'UPDATE_FAILED':
      return 'fix what StateReason names and deploy again (cdk deploy)';
    default:
      return 'see StateReason (aws eventsv2 describe-event-bus)';
  }
}

/** `SubscriberArn…` outputs of the stack: the subscribers the construct made, by output key. */
function stackSubscribers(deployment: Deployment): [outputKey: string, subscriberArn: string][] {
  return deployment
    .outputKeys()
    .filter((key) => key.startsWith(STACK_OUTPUTS.subscriberArnPrefix))
    .map((key) => [key, deployment.output(key)!]);
}

/** Subscribers tail and archive-replay create: not the deployment's own. */
function isOperatorCopy(subscriber: SubscriberSummary): boolean {
  const name = subscriber.Name ?? '';
  return name.startsWith(REPLAY_SUBSCRIBER_PREFIX) || name.startsWith(TAIL_RESOURCE_PREFIX);
}

/**
 * The role a Custom Event Bus subscriber delivers through: `--delivery-role`, else the stack's
 * (the construct creates one). tail does not create one: that needs iam:CreateRole and
 * iam:PutRolePolicy, which no operator grant has, and a new role is usable only after IAM
 * propagates it; the construct's route roles trust only their own subscribers.
 */
function deliveryRoleOf(options: TailOptions, stackRole: string | undefined): string {
  const role = options.deliveryRole ?? stackRole;
  if (role === undefined) {
    throw new UsageError(
      "tail on a Custom Event Bus needs a role EventBridge assumes to deliver to tail's queue",
      `pass --delivery-role ARN: a role trusting events.amazonaws.com with sqs:SendMessage on the ${TAIL_RESOURCE_PREFIX}* ` +
        `queues (and iam:PassRole on it for you); a stack deployed by this version has one (output ${STACK_OUTPUTS.tailDeliveryRole}). ` +
        "Or read a route's queue instead (the stack's QueueUrl… outputs)",
    );
  }
  if (!isRoleArn(role)) {
    throw new UsageError(
      `--delivery-role ${role} is not an IAM role ARN`,
      'pass arn:aws:iam::ACCOUNT:role/NAME',
    );
  }
  return role;
}

/** tail's subscriber: it delivers through its role, so the queue needs no policy. */
class SubscriberFeed implements QueueFeed {
  readonly kind = 'subscriber';
  #subscriberArn: string | undefined;

  get attached(): boolean {
    return this.#subscriberArn !== undefined;
  }

  constructor(
    private readonly context: CommandContext,
    private readonly eventBusArn: string,
    private readonly name: string,
    private readonly roleArn: string,
  ) {}

  async attach(
    queue: { readonly url: string; readonly arn: string },
    pattern: Record<string, unknown>,
  ): Promise<void> {
    this.#subscriberArn = await createTemporarySubscriber(this.context.aws.eventBridgeV2, {
      eventBusArn: this.eventBusArn,
      name: this.name,
      pattern,
      queueArn: queue.arn,
      roleArn: this.roleArn,
      description: 'Temporary: banking-events-poller tail; safe to delete',
    });
  }

  async detach(attempt: (what: string, action: () => Promise<unknown>) => Promise<void>): Promise<void> {
    const subscriberArn = this.#subscriberArn;
    if (subscriberArn === undefined) return;
    await attempt(`subscriber ${this.name}`, () =>
      deleteSubscriber(this.context.aws.eventBridgeV2, subscriberArn),
    );
  }
}
