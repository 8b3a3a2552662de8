/**
 * The operator commands on a classic bus (`operator-bus.ts`): `tail` feeds its queue through a
 * temporary rule, `doctor` describes the bus and sends it a probe event, `archive-replay` replays
 * the bus's archive and follows the replay, `replay --local` publishes with PutEvents.
 */

import {
  DeleteRuleCommand,
  DescribeArchiveCommand,
  DescribeEventBusCommand,
  DescribeReplayCommand,
  DescribeRuleCommand,
  ListArchivesCommand,
  PutEventsCommand,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
  StartReplayCommand,
} from '@aws-sdk/client-eventbridge';
import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { CLASSIC_BUS_ENTRY_RULES } from '../adapters/aws/eventbridge-entry-rules.ts';
import { EventBridgePublisher } from '../adapters/aws/eventbridge-publisher.ts';
import { failed, ok, skipped } from '../adapters/banking-http/bank-checks.ts';
import { systemClock } from '../adapters/system-clock.ts';
import type { BusEntryRules } from '../core/bus-entry-rules.ts';
import type { EventPublisher } from '../core/ports.ts';
import { CliError, InterruptedError, UsageError } from './cli-errors.ts';
import type { CommandContext } from './command-context.ts';
import type { Deployment } from './deployment.ts';
import type { CheckResult } from './doctor-report.ts';
import { onInterrupt } from './interrupt.ts';
import type { ArchiveReplayOptions, BusStatus, OperatorBus, QueueFeed, TailOptions } from './operator-bus.ts';
import { defaultReplayName } from './operator-resource-names.ts';
import { toJson } from './output-format.ts';
import { startProgress } from './progress-bar.ts';
import { STACK_OUTPUTS } from './stack-outputs.ts';

/** The probe event's source: no rule of the stack (nor its archive) matches it. */
export const PROBE_SOURCE = 'banking-events-poller.doctor';

const FINAL_STATES = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

export class ClassicOperatorBus implements OperatorBus {
  readonly entryRules: BusEntryRules = CLASSIC_BUS_ENTRY_RULES;
  readonly #deployment: Deployment;

  constructor(deployment: Deployment) {
    this.#deployment = deployment;
  }

  async tailFeed(
    context: CommandContext,
    options: TailOptions,
  ): Promise<{ feed: QueueFeed; busShown: string }> {
    if (options.deliveryRole !== undefined) {
      throw new UsageError(
        '--delivery-role is for a Custom Event Bus; a classic bus delivers to the queue through its policy',
        'leave --delivery-role out',
      );
    }
    const busName = this.#deployment.eventBus;
    await describeBus(context, busName);
    return { feed: new RuleFeed(context, busName, options.name), busShown: busName };
  }

  async doctorChecks(
    context: CommandContext,
    options: { readonly writeProbes: boolean },
  ): Promise<CheckResult[]> {
    return [await this.#checkBus(context, options.writeProbes)];
  }

  async #checkBus(context: CommandContext, writeProbes: boolean): Promise<CheckResult> {
    const check = 'event bus';
    let busName: string;
    try {
      busName = this.#deployment.eventBus;
    } catch (error) {
      return skipped(check, message(error));
    }
    const { eventBridge } = context.aws;
    try {
      await eventBridge.send(new DescribeEventBusCommand({ Name: busName }));
    } catch (error) {
      if (error instanceof Error && error.name === 'ResourceNotFoundException') {
        return failed(check, `${busName} does not exist`, 'check --event-bus or --stack, and the region');
      }
      return failed(check, message(error), 'use credentials that may describe the bus');
    }
    if (!writeProbes) return ok(check, `${busName} exists (write probe skipped)`);
    try {
      const answer = await eventBridge.send(
        new PutEventsCommand({
          Entries: [
            {
              EventBusName: busName,
              Source: PROBE_SOURCE,
              DetailType: 'doctor.probe',
              Detail: JSON.stringify({ probe: true }),
            },
          ],
        }),
      );
      const entry = answer.Entries?.[0];
      if ((answer.FailedEntryCount ?? 0) > 0 || entry?.ErrorCode) {
        return failed(
          check,
          `${busName} refused a probe event: ${entry?.ErrorCode}: ${entry?.ErrorMessage}`,
          'check the bus policy and its KMS key',
        );
      }
      return ok(check, `${busName} exists and accepted a probe event (source ${PROBE_SOURCE})`);
    } catch (error) {
      return failed(
        check,
        `${busName}: ${message(error)}`,
        'the probe needs events:PutEvents on the bus, which no operator grant allows (only the function publishes): as an operator, pass --no-write-probes',
      );
    }
  }

  /** An EventBridge replay of the bus's archive, to the bus (every rule, or the `--rule` ones), followed to its end. */
  async archiveReplay(context: CommandContext, options: ArchiveReplayOptions): Promise<void> {
    const { terminal, globals } = context;
    const client = context.aws.eventBridge;
    const { window } = options;
    if (options.subscriber !== undefined) {
      throw new UsageError(
        '--subscriber is for a Custom Event Bus; this bus is a classic one, whose targets are behind rules',
        'pass --rule NAME instead',
      );
    }
    const deployment = this.#deployment;
    const busName = deployment.eventBus;
    const bus = await client.send(new DescribeEventBusCommand({ Name: busName })).catch((error: unknown) => {
      if (error instanceof Error && error.name === 'ResourceNotFoundException') {
        throw new UsageError(
          `Event bus ${busName} does not exist`,
          'check --event-bus, --stack and --region',
        );
      }
      throw error;
    });
    const archiveName =
      options.archive ?? deployment.output(STACK_OUTPUTS.archiveName) ?? (await archiveOf(context, bus.Arn!));
    const archive = await client
      .send(new DescribeArchiveCommand({ ArchiveName: archiveName }))
      .catch((error: unknown) => {
        if (error instanceof Error && error.name === 'ResourceNotFoundException') {
          throw new UsageError(`Archive ${archiveName} does not exist`, 'check --archive');
        }
        throw error;
      });
    const filterArns = await Promise.all(
      (options.rule ?? []).map(async (rule) => {
        const described = await client
          .send(new DescribeRuleCommand({ Name: rule, EventBusName: busName }))
          .catch(() => {
            throw new UsageError(
              `Rule ${rule} does not exist on bus ${busName}`,
              'check --rule (`aws events list-rules --event-bus-name …`)',
            );
          });
        return described.Arn!;
      }),
    );
    const replayName = options.name ?? defaultReplayName('bep-');
    await client.send(
      new StartReplayCommand({
        ReplayName: replayName,
        EventSourceArn: archive.ArchiveArn,
        EventStartTime: new Date(window.since),
        EventEndTime: new Date(window.until),
        Destination: { Arn: bus.Arn, ...(filterArns.length > 0 ? { FilterArns: filterArns } : {}) },
        Description: 'banking-events-poller archive-replay',
      }),
    );
    terminal.err(
      `Replay ${replayName} started: archive ${archiveName}, ${new Date(window.since).toISOString()} .. ` +
        `${new Date(window.until).toISOString()} → bus ${busName}${filterArns.length > 0 ? ` (rules ${options.rule!.join(', ')})` : ''}.\n`,
    );

    const interrupt = onInterrupt(
      `Stopped following; the replay goes on in AWS (cancel it with: aws events cancel-replay --replay-name ${replayName})`,
      terminal.err,
    );
    const span = window.until - window.since;
    const progress = startProgress(terminal, {
      label: 'archive replay',
      unit: '% of the window',
      total: 100,
      showRate: false,
    });
    let state = 'STARTING';
    let reason: string | undefined;
    try {
      for (;;) {
        const replay = await client.send(new DescribeReplayCommand({ ReplayName: replayName }));
        state = replay.State ?? 'UNKNOWN';
        reason = replay.StateReason;
        const reached = replay.EventLastReplayedTime?.getTime();
        const percent =
          state === 'COMPLETED'
            ? 100
            : reached === undefined
              ? 0
              : Math.floor(((reached - window.since) / span) * 100);
        progress.update(Math.max(0, Math.min(100, percent)), state.toLowerCase());
        if (FINAL_STATES.has(state)) break;
        await systemClock.sleep(options.pollSeconds * 1000, interrupt.signal).catch(() => {
          throw new InterruptedError(`Stopped following replay ${replayName}; it goes on in AWS`);
        });
      }
    } finally {
      interrupt.dispose();
    }
    progress.stop(state.toLowerCase());
    if (state !== 'COMPLETED') {
      throw new CliError(
        `Replay ${replayName} ended ${state}${reason ? `: ${reason}` : ''}`,
        'check the archive and the bus, then start a new replay',
      );
    }
    if (globals.json) {
      terminal.out(
        toJson({
          replayName,
          archive: archiveName,
          eventBus: busName,
          since: new Date(window.since).toISOString(),
          until: new Date(window.until).toISOString(),
          state,
        }),
      );
    } else terminal.out(`Replay ${replayName} completed.\n`);
  }

  /** The checkpoint rows say it all: the classic bus has no window of its own to show. */
  async status(): Promise<BusStatus | undefined> {
    return undefined;
  }

  localPublisher(context: CommandContext, source: string): EventPublisher {
    return new EventBridgePublisher({
      client: context.aws.eventBridge,
      eventBusName: this.#deployment.eventBus,
      source,
    });
  }
}

async function describeBus(context: CommandContext, busName: string): Promise<void> {
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

/** The archive of the bus, when there is exactly one. */
async function archiveOf(context: CommandContext, busArn: string): Promise<string> {
  const listed = await context.aws.eventBridge.send(new ListArchivesCommand({ EventSourceArn: busArn }));
  const names = (listed.Archives ?? []).map((archive) => archive.ArchiveName!).filter(Boolean);
  if (names.length === 1) return names[0]!;
  throw new UsageError(
    names.length === 0
      ? `The bus ${busArn} has no archive`
      : `The bus ${busArn} has several archives (${names.join(', ')})`,
    'pass --archive NAME',
  );
}

/** tail's rule: matching the pattern, targeting the queue, whose policy admits this rule alone. */
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
