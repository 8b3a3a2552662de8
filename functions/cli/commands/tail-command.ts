/**
 * `tail`: watches events arriving on the bus, like `stripe listen`. It creates a temporary rule
 * and queue for the chosen types, prints what arrives, and removes both when it stops, Ctrl-C
 * included (a second Ctrl-C does not cut the clean-up short).
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
import { type ReceivedBusEvent, renderBusEvent } from '../bus-event-view.ts';
import { UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
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
}

export function registerTailCommand(program: Command): void {
  program
    .command('tail')
    .summary('watch events arriving on the bus, live')
    .description(
      `Creates a temporary rule (matching the source, and the --type detail-types if given) and an SQS queue ` +
        `(both named ${TAIL_RESOURCE_PREFIX}…), prints every event that arrives (pretty on a terminal, NDJSON otherwise), and ` +
        'removes both when it stops: Ctrl-C, --max-events or --duration.',
    )
    .option('--type <detail-type>', 'only this event type (repeatable)', collect)
    .option('--event-bus <name>', 'the bus (default: from --stack)')
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
  $ banking-events-poller tail --stack BankingEventsPoller --type transaction --max-events 5 | jq .detail.data.amount`,
    )
    .action(async (flags: TailFlags, command: Command) => {
      await withContext(command, (context) => tail(context, flags));
    });
}

async function tail(context: CommandContext, flags: TailFlags): Promise<void> {
  const { terminal } = context;
  const deployment = await context.deployment({ eventBus: flags.eventBus });
  const busName = deployment.eventBus;
  const source = deployment.eventSource(flags.eventSource);
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
  const interrupt = onInterrupt('Stopping; removing the temporary rule and queue', terminal.err);
  const stop = AbortSignal.any([
    interrupt.signal,
    ...(flags.duration === undefined ? [] : [stopAfter(flags.duration)]),
  ]);
  const name = `${TAIL_RESOURCE_PREFIX}${randomUUID().slice(0, 8)}`;
  const listener = new TemporaryListener(context, busName, name);
  try {
    await listener.create({
      source: [source],
      ...(flags.type === undefined ? {} : { 'detail-type': flags.type }),
    });
    terminal.err(
      `Listening on bus ${busName} for ${flags.type?.join(', ') ?? 'every type'} of ${source} ` +
        `(rule and queue ${name}); Ctrl-C to stop.\n`,
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
    interrupt.protect('removing the temporary rule and queue');
    await listener.remove();
    interrupt.dispose();
  }
}

/** The rule → queue pair `tail` listens through, and its removal. */
class TemporaryListener {
  #queueUrl: string | undefined;
  #ruleCreated = false;
  #targetAdded = false;

  constructor(
    private readonly context: CommandContext,
    private readonly busName: string,
    private readonly name: string,
  ) {}

  async create(pattern: Record<string, unknown>): Promise<void> {
    const { sqs, eventBridge } = this.context.aws;
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
    const queueArn = attributes.Attributes!.QueueArn!;
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
        QueueUrl: this.#queueUrl,
        Attributes: {
          Policy: JSON.stringify({
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Principal: { Service: 'events.amazonaws.com' },
                Action: 'sqs:SendMessage',
                Resource: queueArn,
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
        Targets: [{ Id: 'tail', Arn: queueArn }],
      }),
    );
    this.#targetAdded = true;
  }

  /** Waits up to 20 s for events (less once `signal` aborts); each is deleted once read. */
  async receive(signal: AbortSignal): Promise<ReceivedBusEvent[]> {
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
    return messages.map((message) => JSON.parse(message.Body ?? '{}') as ReceivedBusEvent);
  }

  /** Removes what was created, each part tried even if another fails. */
  async remove(): Promise<void> {
    const { sqs, eventBridge } = this.context.aws;
    const { terminal } = this.context;
    const failures: string[] = [];
    const attempt = async (what: string, action: () => Promise<unknown>): Promise<void> => {
      try {
        await action();
      } catch (error) {
        failures.push(`${what} (${error instanceof Error ? error.name : String(error)})`);
      }
    };
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
    if (this.#queueUrl !== undefined) {
      const queueUrl = this.#queueUrl;
      await attempt(`queue ${this.name}`, () => sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl })));
    }
    if (failures.length > 0) {
      terminal.err(
        `warning: could not remove ${failures.join(', ')}; delete them by hand (names start with ${TAIL_RESOURCE_PREFIX})\n`,
      );
    } else if (this.#queueUrl !== undefined) {
      terminal.err(`Removed rule and queue ${this.name}.\n`);
    }
  }
}
