/**
 * `archive-replay`: starts an EventBridge archive replay of a time window to the bus and follows
 * it to completion with progress. The events come from the archive, not the banking service. On a
 * Custom Event Bus, which keeps every event itself and has no archive, it creates point-in-time
 * copies of the bus's subscribers instead (`custom-bus-operations.ts`).
 */
import {
  DescribeArchiveCommand,
  DescribeEventBusCommand,
  DescribeReplayCommand,
  DescribeRuleCommand,
  ListArchivesCommand,
  StartReplayCommand,
} from '@aws-sdk/client-eventbridge';
import type { Command } from 'commander';
import { systemClock } from '../../adapters/system-clock.ts';
import { CliError, InterruptedError, UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import { REPLAY_SUBSCRIBER_PREFIX, startRetentionReplay } from '../custom-bus-operations.ts';
import { STACK_OUTPUTS } from '../deployment.ts';
import { onInterrupt } from '../interrupt.ts';
import { collect, positiveNumber } from '../option-parsers.ts';
import { toJson } from '../output-format.ts';
import { startProgress } from '../progress-bar.ts';
import { parseWindow, type TimeWindow } from '../time-window.ts';

interface ArchiveReplayFlags {
  readonly since: string;
  readonly until?: string;
  readonly archive?: string;
  readonly eventBus?: string;
  readonly rule?: readonly string[];
  readonly subscriber?: readonly string[];
  readonly name?: string;
  readonly pollSeconds: number;
}

const FINAL_STATES = new Set(['COMPLETED', 'FAILED', 'CANCELLED']);

export function registerArchiveReplayCommand(program: Command): void {
  program
    .command('archive-replay')
    .summary("replay a time window from the bus's archive and follow it to the end")
    .description(
      "Starts an EventBridge replay of the bus's archive for --since .. --until to the bus (every rule, or only " +
        'the --rule ones) and follows it until it completes. Consumers receive the events again (de-duplicate on detail.id). ' +
        "On a Custom Event Bus (a stack whose EventBusKind output is custom, or --event-bus with such an ARN) it replays from the bus's " +
        'retention instead: for every subscriber (or only the --subscriber ones) it creates a copy that delivers the ' +
        'window to the same target (StartingPosition POINT_IN_TIME) and stops at its end; delete the copies afterwards.',
    )
    .requiredOption('--since <time>', 'start: ISO 8601, or a duration ago (30m, 2h, 7d)')
    .option('--until <time>', 'end (default: now)')
    .option('--archive <name>', "the archive (default: the stack's, or the one archiving the bus)")
    .option('--event-bus <name>', 'the bus, or a Custom Event Bus ARN (default: from --stack)')
    .option('--rule <name>', 'replay only to this rule of the bus (repeatable)', collect)
    .option('--subscriber <name>', 'Custom Event Bus: replay only to this subscriber (repeatable)', collect)
    .option(
      '--name <replay-name>',
      `name of the replay (default: bep-<time>-<4 hex>; on a Custom Event Bus, ${REPLAY_SUBSCRIBER_PREFIX}<time>-<4 hex>, then -1, -2… per subscriber)`,
    )
    .option('--poll-seconds <s>', 'how often to check the replay', positiveNumber, 5)
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller archive-replay --stack BankingEventsPoller --since 2h
  $ banking-events-poller archive-replay --stack BankingEventsPoller --since 2026-01-01T10:00:00Z --until 2026-01-01T11:00:00Z --rule my-rule
  $ banking-events-poller archive-replay --stack BankingEventsPoller --since 2h --subscriber my-subscriber`,
    )
    .action(async (flags: ArchiveReplayFlags, command: Command) => {
      await withContext(command, (context) => archiveReplay(context, flags));
    });
}

/** The time to the second, and a random part: two replays started within a second keep apart. */
function defaultReplayName(prefix: string): string {
  const time = new Date()
    .toISOString()
    .replace(/[^0-9]/g, '')
    .slice(0, 14);
  return `${prefix}${time}-${globalThis.crypto.randomUUID().slice(0, 4)}`;
}

async function archiveReplay(context: CommandContext, flags: ArchiveReplayFlags): Promise<void> {
  const { terminal, globals } = context;
  const client = context.aws.eventBridge;
  const window = parseWindow(flags.since, flags.until, Date.now());
  const deployment = await context.deployment({ eventBus: flags.eventBus });
  const customBus = deployment.customEventBusArn;
  if (customBus !== undefined) {
    await retentionReplay(context, flags, customBus, window);
    return;
  }
  if (flags.subscriber !== undefined) {
    throw new UsageError(
      '--subscriber is for a Custom Event Bus; this bus is a classic one, whose targets are behind rules',
      'pass --rule NAME instead',
    );
  }
  const busName = deployment.eventBus;
  const bus = await client.send(new DescribeEventBusCommand({ Name: busName })).catch((error: unknown) => {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') {
      throw new UsageError(`Event bus ${busName} does not exist`, 'check --event-bus, --stack and --region');
    }
    throw error;
  });
  const archiveName =
    flags.archive ?? deployment.output(STACK_OUTPUTS.archiveName) ?? (await archiveOf(context, bus.Arn!));
  const archive = await client
    .send(new DescribeArchiveCommand({ ArchiveName: archiveName }))
    .catch((error: unknown) => {
      if (error instanceof Error && error.name === 'ResourceNotFoundException') {
        throw new UsageError(`Archive ${archiveName} does not exist`, 'check --archive');
      }
      throw error;
    });
  const filterArns = await Promise.all(
    (flags.rule ?? []).map(async (rule) => {
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
  const replayName = flags.name ?? defaultReplayName('bep-');
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
      `${new Date(window.until).toISOString()} → bus ${busName}${filterArns.length > 0 ? ` (rules ${flags.rule!.join(', ')})` : ''}.\n`,
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
      await systemClock.sleep(flags.pollSeconds * 1000, interrupt.signal).catch(() => {
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

/**
 * The replay on a Custom Event Bus: point-in-time copies of its subscribers. The bus reports no
 * progress for them, so the command says what it created and how to remove it, and returns.
 */
async function retentionReplay(
  context: CommandContext,
  flags: ArchiveReplayFlags,
  eventBusArn: string,
  window: TimeWindow,
): Promise<void> {
  const { terminal, globals } = context;
  if (flags.rule !== undefined || flags.archive !== undefined) {
    throw new UsageError(
      `${flags.rule !== undefined ? '--rule' : '--archive'} is for a classic bus; the Custom Event Bus ${eventBusArn} keeps its events itself and delivers through subscribers`,
      'pass --subscriber NAME (repeatable), or nothing to replay to every subscriber',
    );
  }
  const { retention, subscribers } = await startRetentionReplay(context.aws.eventBridgeV2, {
    eventBusArn,
    window,
    subscribers: flags.subscriber ?? [],
    namePrefix: flags.name ?? defaultReplayName(REPLAY_SUBSCRIBER_PREFIX),
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
