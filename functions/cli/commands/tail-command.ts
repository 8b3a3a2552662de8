/**
 * `tail`: watches events arriving on the bus, like `stripe listen`. It creates a temporary queue
 * and what feeds it the chosen types (a rule on a classic bus, a subscriber on a Custom Event Bus),
 * prints what arrives, and removes both when it stops, Ctrl-C included (a second Ctrl-C does not
 * cut the clean-up short).
 */
import { randomUUID } from 'node:crypto';
import {
  DeleteRuleCommand,
  DescribeEventBusCommand,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
} from '@aws-sdk/client-eventbridge';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import { SETTINGS } from '../../settings/settings.ts';
import { readDelivered, renderBusEvent, type TailedEvent } from '../bus-event-view.ts';
import { UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import {
  createTemporarySubscriber,
  deleteSubscriber,
  describeRetention,
  isRoleArn,
} from '../custom-bus-operations.ts';
import { STACK_OUTPUTS } from '../deployment.ts';
import { onInterrupt } from '../interrupt.ts';
import { TAIL_RESOURCE_PREFIX } from '../operator-resource-names.ts';
import { collect, positiveInteger, positiveNumber } from '../option-parsers.ts';
import { stopAfter } from '../stop-after.ts';

interface TailFlags {
  readonly type?: readonly string[];
  readonly eventBus?: string;
  readonly eventSource?: string;
  readonly maxEvents?: number;
  readonly duration?: number;
  readonly deliveryRole?: string;
}

export function registerTailCommand(program: Command): void {
  program
    .command('tail')
    .summary('watch events arriving on the bus, live')
    .description(
      `Creates a temporary rule (matching the source, and the --type detail-types if given) and an SQS queue ` +
        `(both named ${TAIL_RESOURCE_PREFIX}…), prints every event that arrives (pretty on a terminal, NDJSON otherwise), and ` +
        'removes both when it stops: Ctrl-C, SIGTERM, SIGHUP, --max-events or --duration. On a Custom Event Bus (the ' +
        "stack's EventBusKind output is custom, or --event-bus is an event-busv2 ARN) a temporary subscriber takes the " +
        "rule's place (from now on, unordered, WITH_METADATA: each event also shows its group and the bus's sequence " +
        'number, under "bus" in NDJSON); it delivers through --delivery-role (default: the stack\'s TailDeliveryRoleArn ' +
        'output), a role EventBridge assumes ' +
        `(trusting events.amazonaws.com, with sqs:SendMessage on the ${TAIL_RESOURCE_PREFIX}* queues), and needs ` +
        'iam:PassRole on it.',
    )
    .option('--type <detail-type>', 'only this event type (repeatable)', collect)
    .option('--event-bus <name-or-arn>', 'the bus (default: from --stack)')
    .option(
      '--delivery-role <arn>',
      "Custom Event Bus only: the role EventBridge assumes to deliver to tail's queue (default: the stack's TailDeliveryRoleArn output)",
    )
    .option(
      '--event-source <source>',
      `source to match (default: the stack's, or ${SETTINGS.eventSource.default})`,
    )
    .option('--max-events <n>', 'stop after this many events', positiveInteger)
    .option('--duration <seconds>', 'stop after this long', positiveNumber)
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller tail --stack BankingEventsPoller
  $ banking-events-poller tail --stack BankingEventsPoller --type transaction --max-events 5 | jq .detail.data.amount
  $ banking-events-poller tail --stack BankingEventsPoller --delivery-role arn:aws:iam::123456789012:role/bep-tail-delivery`,
    )
    .action(async (flags: TailFlags, command: Command) => {
      await withContext(command, (context) => tail(context, flags));
    });
}

async function tail(context: CommandContext, flags: TailFlags): Promise<void> {
  const { terminal } = context;
  const deployment = await context.deployment({ eventBus: flags.eventBus });
  const customBusArn = deployment.customEventBusArn;
  const source = deployment.eventSource(flags.eventSource);
  const name = `${TAIL_RESOURCE_PREFIX}${randomUUID().slice(0, 8)}`;
  let feed: QueueFeed;
  let busShown: string;
  if (customBusArn === undefined) {
    if (flags.deliveryRole !== undefined) {
      throw new UsageError(
        '--delivery-role is for a Custom Event Bus; a classic bus delivers to the queue through its policy',
        'leave --delivery-role out',
      );
    }
    busShown = deployment.eventBus;
    await describeClassicBus(context, busShown);
    feed = new RuleFeed(context, busShown, name);
  } else {
    const roleArn = deliveryRoleOf(flags, deployment.output(STACK_OUTPUTS.tailDeliveryRole));
    const bus = await describeRetention(context.aws.eventBridgeV2, customBusArn);
    if (bus.state !== undefined && bus.state !== 'ACTIVE') {
      throw new UsageError(
        `Event bus ${customBusArn} is ${bus.state}${bus.stateReason === undefined ? '' : ` (${bus.stateReason})`}, not ACTIVE: it takes no subscriber`,
        'run doctor to see what is wrong with the bus',
      );
    }
    busShown = bus.name ?? customBusArn;
    feed = new SubscriberFeed(context, customBusArn, name, roleArn);
  }
  const interrupt = onInterrupt(`Stopping; removing the temporary ${feed.kind} and queue`, terminal.err);
  const stop = AbortSignal.any([
    interrupt.signal,
    ...(flags.duration === undefined ? [] : [stopAfter(flags.duration)]),
  ]);
  const listener = new TemporaryListener(context, name, feed);
  try {
    await listener.create({
      source: [source],
      ...(flags.type === undefined ? {} : { 'detail-type': flags.type }),
    });
    terminal.err(
      `Listening on bus ${busShown} for ${flags.type?.join(', ') ?? 'every type'} of ${source} ` +
        `(${feed.kind} and queue ${name}); Ctrl-C to stop.\n`,
    );
    let received = 0;
    while (!stop.aborted && (flags.maxEvents === undefined || received < flags.maxEvents)) {
      const events = await listener.receive(stop);
      for (const event of events) {
        if (flags.maxEvents !== undefined && received >= flags.maxEvents) break;
        terminal.out(renderBusEvent(event, terminal, context.globals.json));
        received += 1;
      }
    }
  } finally {
    interrupt.protect(`removing the temporary ${feed.kind} and queue`);
    await listener.remove();
    interrupt.dispose();
  }
}

async function describeClassicBus(context: CommandContext, busName: string): Promise<void> {
  await context.aws.eventBridge
    .send(new DescribeEventBusCommand({ Name: busName }))
    .catch((error: unknown) => {
      if (error instanceof Error && error.name === 'ResourceNotFoundException') {
        throw new UsageError(
          `Event bus ${busName} does not exist`,
          'check --event-bus, --stack and --region',
        );
      }
      throw error;
    });
}

/**
 * The role a Custom Event Bus subscriber delivers through: `--delivery-role`, else the stack's
 * (the construct creates one). tail does not create one: that needs iam:CreateRole and
 * iam:PutRolePolicy, which no operator grant has, and a new role is usable only after IAM
 * propagates it; the construct's route roles trust only their own subscribers.
 */
function deliveryRoleOf(flags: TailFlags, stackRole: string | undefined): string {
  const role = flags.deliveryRole ?? stackRole;
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

/** What feeds tail's queue from the bus: a rule (classic) or a subscriber (Custom Event Bus). */
interface QueueFeed {
  readonly kind: 'rule' | 'subscriber';
  /** Whether `attach` created anything (to say what was removed). */
  readonly attached: boolean;
  /** Starts delivering events matching `pattern` to the queue. */
  attach(
    queue: { readonly url: string; readonly arn: string },
    pattern: Record<string, unknown>,
  ): Promise<void>;
  /** Stops it, each part through `attempt`, which notes what could not be removed. */
  detach(attempt: (what: string, action: () => Promise<unknown>) => Promise<void>): Promise<void>;
}

class RuleFeed implements QueueFeed {
  readonly kind = 'rule';
  #ruleCreated = false;
  #targetAdded = false;

  get attached(): boolean {
    return this.#ruleCreated;
  }

  constructor(
    private readonly context: CommandContext,
    private readonly busName: string,
    private readonly name: string,
  ) {}

  async attach(
    queue: { readonly url: string; readonly arn: string },
    pattern: Record<string, unknown>,
  ): Promise<void> {
    const { sqs, eventBridge } = this.context.aws;
    const rule = await eventBridge.send(
      new PutRuleCommand({
        Name: this.name,
        EventBusName: this.busName,
        EventPattern: JSON.stringify(pattern),
        Description: 'Temporary: banking-events-poller tail; safe to delete',
      }),
    );
    this.#ruleCreated = true;
    await sqs.send(
      new SetQueueAttributesCommand({
        QueueUrl: queue.url,
        Attributes: {
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { Service: 'events.amazonaws.com' },
                Action: 'sqs:SendMessage',
                Resource: queue.arn,
                Condition: { ArnEquals: { 'aws:SourceArn': rule.RuleArn } },
              },
            ],
          }),
        },
      }),
    );
    await eventBridge.send(
      new PutTargetsCommand({
        Rule: this.name,
        EventBusName: this.busName,
        Targets: [{ Id: 'tail', Arn: queue.arn }],
      }),
    );
    this.#targetAdded = true;
  }

  async detach(attempt: (what: string, action: () => Promise<unknown>) => Promise<void>): Promise<void> {
    const { eventBridge } = this.context.aws;
    if (this.#targetAdded) {
      await attempt(`target of rule ${this.name}`, () =>
        eventBridge.send(
          new RemoveTargetsCommand({ Rule: this.name, EventBusName: this.busName, Ids: ['tail'] }),
        ),
      );
    }
    if (this.#ruleCreated) {
      await attempt(`rule ${this.name}`, () =>
        eventBridge.send(new DeleteRuleCommand({ Name: this.name, EventBusName: this.busName })),
      );
    }
  }
}

/** A subscriber delivers through its role, so the queue needs no policy. */
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

/** The queue `tail` listens on, what feeds it, and their removal. */
class TemporaryListener {
  #queueUrl: string | undefined;

  constructor(
    private readonly context: CommandContext,
    private readonly name: string,
    private readonly feed: QueueFeed,
  ) {}

  async create(pattern: Record<string, unknown>): Promise<void> {
    const { sqs } = this.context.aws;
    const queue = await sqs.send(
      new CreateQueueCommand({
        QueueName: this.name,
        // A leftover queue empties itself soon.
        Attributes: { MessageRetentionPeriod: '300' },
        tags: { 'created-by': 'banking-events-poller tail' },
      }),
    );
    this.#queueUrl = queue.QueueUrl!;
    const attributes = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: this.#queueUrl, AttributeNames: ['QueueArn'] }),
    );
    await this.feed.attach({ url: this.#queueUrl, arn: attributes.Attributes!.QueueArn! }, pattern);
  }

  /** Waits up to 20 s for events (less once `signal` aborts); each is deleted once read. */
  async receive(signal: AbortSignal): Promise<TailedEvent[]> {
    const { sqs } = this.context.aws;
    let messages: Message[];
    try {
      const answer = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl: this.#queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 20 }),
        { abortSignal: signal },
      );
      messages = answer.Messages ?? [];
    } catch (error) {
      if (signal.aborted) return [];
      throw error;
    }
    if (messages.length === 0) return [];
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: this.#queueUrl,
        Entries: messages.map((message, index) => ({
          Id: String(index),
          ReceiptHandle: message.ReceiptHandle!,
        })),
      }),
    );
    return messages.map((message) => readDelivered(message.Body ?? '{}'));
  }

  /** Removes what was created, each part tried even if another fails: the feed first, then the queue. */
  async remove(): Promise<void> {
    const { sqs } = this.context.aws;
    const { terminal } = this.context;
    const failures: string[] = [];
    const attempt = async (what: string, action: () => Promise<unknown>): Promise<void> => {
      try {
        await action();
      } catch (error) {
        failures.push(`${what} (${error instanceof Error ? error.name : String(error)})`);
      }
    };
    await this.feed.detach(attempt);
    if (this.#queueUrl !== undefined) {
      const queueUrl = this.#queueUrl;
      await attempt(`queue ${this.name}`, () => sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })));
    }
    if (failures.length > 0) {
      terminal.err(
        `warning: could not remove ${failures.join(', ')}; delete them by hand (names start with ${TAIL_RESOURCE_PREFIX})\n`,
      );
    } else if (this.#queueUrl !== undefined) {
      terminal.err(`Removed ${this.feed.attached ? `${this.feed.kind} and queue` : 'queue'} ${this.name}.\n`);
    }
  }
}
