/**
 * `tail`: watches events arriving on the bus, like `stripe listen`. It creates a temporary queue
 * and what feeds it the chosen types (a rule on a classic bus, a subscriber on a Custom Event Bus),
 * prints what arrives, and removes both when it stops, Ctrl-C included (a second Ctrl-C does not
 * cut the clean-up short).
 */
import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import type { Command } from 'commander';
import { SETTINGS } from '../../settings/settings.ts';
import { readDelivered, renderBusEvent, type TailedEvent } from '../bus-event-view.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import { onInterrupt } from '../interrupt.ts';
import type { QueueFeed } from '../operator-bus.ts';
import { operatorBusOf } from '../operator-bus-kinds.ts';
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
  const bus = operatorBusOf(deployment);
  const source = deployment.eventSource(flags.eventSource);
  const name = `${TAIL_RESOURCE_PREFIX}${randomUUID().slice(0, 8)}`;
  const { feed, busShown } = await bus.tailFeed(context, { name, deliveryRole: flags.deliveryRole });
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
