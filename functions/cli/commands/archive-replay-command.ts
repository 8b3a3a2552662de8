/**
 * `archive-replay`: starts an EventBridge archive replay of a time window to the bus and follows
 * it to completion with progress. The events come from the archive, not the banking service.
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
import { STACK_OUTPUTS } from '../deployment.ts';
import { onInterrupt } from '../interrupt.ts';
import { collect, positiveNumber } from '../option-parsers.ts';
import { toJson } from '../output-format.ts';
import { startProgress } from '../progress-bar.ts';
import { parseWindow } from '../time-window.ts';

interface ArchiveReplayFlags {
  readonly since: string;
  readonly until?: string;
  readonly archive?: string;
  readonly eventBus?: string;
  readonly rule?: readonly string[];
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
        'the --rule ones) and follows it until it completes. Consumers receive the events again (de-duplicate on detail.id).',
    )
    .requiredOption('--since <time>', 'start: ISO 8601, or a duration ago (30m, 2h, 7d)')
    .option('--until <time>', 'end (default: now)')
    .option('--archive <name>', "the archive (default: the stack's, or the one archiving the bus)")
    .option('--event-bus <name>', 'the bus (default: from --stack)')
    .option('--rule <name>', 'replay only to this rule of the bus (repeatable)', collect)
    .option('--name <replay-name>', 'name of the replay (default: bep-<time>-<4 hex>)')
    .option('--poll-seconds <s>', 'how often to check the replay', positiveNumber, 5)
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller archive-replay --stack BankingEventsPoller --since 2h
  $ banking-events-poller archive-replay --stack BankingEventsPoller --since 2026-01-01T10:00:00Z --until 2026-01-01T11:00:00Z --rule my-rule`,
    )
    .action(async (flags: ArchiveReplayFlags, command: Command) => {
      await withContext(command, (context) => archiveReplay(context, flags));
    });
}

async function archiveReplay(context: CommandContext, flags: ArchiveReplayFlags): Promise<void> {
  const { terminal, globals } = context;
  const client = context.aws.eventBridge;
  const window = parseWindow(flags.since, flags.until, Date.now());
  const deployment = await context.deployment({ eventBus: flags.eventBus });
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
  // The time to the second, and a random part: two replays started within a second keep apart.
  const replayName =
    flags.name ??
    `bep-${new Date()
      .toISOString()
      .replace(/[^0-9]/g, '')
      .slice(0, 14)}-${globalThis.crypto.randomUUID().slice(0, 4)}`;
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
