/**
 * `archive-replay`: replays a time window of what the bus carried, from the bus's archive (a
 * classic bus: an EventBridge replay, followed to completion with progress) or its retention (a
 * Custom Event Bus: point-in-time copies of its subscribers), as the bus's kind does it
 * (`operator-bus.ts`). The events come from AWS, not the banking service.
 */
import type { Command } from 'commander';
import { type CommandContext, withContext } from '../command-context.ts';
import { operatorBusOf } from '../operator-bus-kinds.ts';
import { REPLAY_SUBSCRIBER_PREFIX } from '../operator-resource-names.ts';
import { collect, positiveNumber } from '../option-parsers.ts';
import { parseWindow } from '../time-window.ts';

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

async function archiveReplay(context: CommandContext, flags: ArchiveReplayFlags): Promise<void> {
  const window = parseWindow(flags.since, flags.until, Date.now());
  const deployment = await context.deployment({ eventBus: flags.eventBus });
  await operatorBusOf(deployment).archiveReplay(context, {
    window,
    archive: flags.archive,
    rule: flags.rule,
    subscriber: flags.subscriber,
    name: flags.name,
    pollSeconds: flags.pollSeconds,
  });
}
