/**
 * `replay`: publishes a range of events again, read from the banking service, without touching
 * the checkpoint. Resumable: a state file records how far the bus accepted, and running the same
 * command again continues from there. `--dry-run` prints what would be sent.
 */
import type { Command } from 'commander';
import { EventBridgePublisher } from '../../adapters/aws/eventbridge-publisher.ts';
import { systemClock } from '../../adapters/system-clock.ts';
import type { BankingEvent } from '../../core/banking-event.ts';
import { CheckpointTracker } from '../../core/checkpoint-tracker.ts';
import { PublishPipeline } from '../../core/publish-pipeline.ts';
import { readRange } from '../../core/range-reader.ts';
import { SETTINGS } from '../../settings/settings.ts';
import { type FeedFlags, feedFromSecret, warningLogger } from '../banking-access.ts';
import { CliError, InterruptedError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import { onInterrupt } from '../interrupt.ts';
import { positiveInteger, positiveNumber } from '../option-parsers.ts';
import { toJson } from '../output-format.ts';
import { startProgress } from '../progress-bar.ts';
import {
  checkRange,
  defaultStateFile,
  readReplayState,
  removeReplayState,
  writeReplayState,
} from '../replay-state.ts';
import { settingOption } from '../setting-options.ts';

interface ReplayFlags extends FeedFlags {
  readonly program?: string;
  readonly from: number;
  readonly to: number;
  readonly dryRun?: boolean;
  readonly stateFile?: string;
  readonly restart?: boolean;
  readonly eventBus?: string;
  readonly eventSource?: string;
  readonly secretId?: string;
  readonly holdSeconds: number;
}

export function registerReplayCommand(program: Command): void {
  program
    .command('replay')
    .summary('publish a range of events again, read from the banking service')
    .description(
      'Reads events --from N --to M (both included) from the banking service, paging through GET /events from N-1 ' +
        'and looking up by sequence number whatever the pages skip, and publishes them to the bus again. The checkpoint ' +
        'is not touched. A state file records progress: after an interruption, the same command resumes.',
    )
    .requiredOption('--from <sequence>', 'first sequence number', positiveInteger)
    .requiredOption('--to <sequence>', 'last sequence number', positiveInteger)
    .option('--program <name>', "whose feed (default: the stack's first program)")
    .option('--dry-run', 'print the events that would be sent (NDJSON on stdout), send nothing')
    .option('--state-file <path>', 'progress file (default: .local/replays/<program>-<from>-<to>.json)')
    .option('--restart', 'ignore the progress file and start the range over')
    .option('--event-bus <name>', 'bus to publish to (default: from --stack)')
    .option(
      '--event-source <source>',
      `source of the published events (default: the stack's, or ${SETTINGS.eventSource.default})`,
    )
    .option('--secret-id <id>', "the program's secret (default: from --stack)")
    .option('--hold-seconds <s>', 'a poll answering nothing for this long ends the feed', positiveNumber, 10)
    .addOption(settingOption('pollCursorParam', 'query parameter carrying the cursor'))
    .addOption(settingOption('pollLimitParam', 'query parameter carrying the page size'))
    .addOption(settingOption('pollLimit', 'events per page'))
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller replay --stack BankingEventsPoller --program default --from 1231 --to 1240
  $ banking-events-poller replay --stack BankingEventsPoller --from 1 --to 500 --dry-run | jq -c .detail.id`,
    )
    .action(async (flags: ReplayFlags, command: Command) => {
      await withContext(command, (context) => replay(context, flags));
    });
}

async function replay(context: CommandContext, flags: ReplayFlags): Promise<void> {
  const { terminal, globals } = context;
  checkRange(flags.from, flags.to);
  const deployment = await context.deployment({ eventBus: flags.eventBus, secretId: flags.secretId });
  const program = deployment.program(flags.program);
  const source = deployment.eventSource(flags.eventSource);
  const eventBusName = flags.dryRun ? undefined : deployment.eventBus;
  const feed = feedFromSecret(context.aws, deployment.secretId(program), flags);
  const stateFile = flags.stateFile ?? defaultStateFile(program, flags.from, flags.to);
  const saved = flags.restart || flags.dryRun ? null : await readReplayState(stateFile);
  const start = saved === null ? flags.from : saved.publishedThrough + 1;
  if (start > flags.to) {
    terminal.err(
      `Range ${flags.from}..${flags.to} of ${program} was already replayed (${stateFile}); pass --restart to publish it again.\n`,
    );
    if (globals.json)
      terminal.out(toJson({ program, from: flags.from, to: flags.to, published: 0, alreadyDone: true }));
    return;
  }
  if (saved !== null) terminal.err(`Resuming after ${saved.publishedThrough} (${stateFile}).\n`);

  const publisher =
    eventBusName === undefined
      ? undefined
      : new EventBridgePublisher({
          client: context.aws.eventBridge,
          eventBusName,
          source,
        });
  const pipeline =
    publisher === undefined
      ? undefined
      : new PublishPipeline({
          publisher,
          clock: systemClock,
          metrics: { add: () => {} },
          logger: warningLogger(terminal),
        });
  const interrupt = onInterrupt(
    'Stopping after the events in hand; run the same command again to resume',
    terminal.err,
  );
  const progress = startProgress(terminal, {
    label: flags.dryRun ? 'dry run' : 'replay',
    unit: 'sequence numbers',
    total: flags.to - start + 1,
  });
  const missing: number[] = [];
  let published = 0;
  let through = start - 1;
  let endOfFeed = false;
  try {
    const chunks = readRange(feed, {
      from: start,
      to: flags.to,
      signal: interrupt.signal,
      pollHoldMs: flags.holdSeconds * 1000,
      clock: systemClock,
    });
    for await (const chunk of chunks) {
      if (chunk.endOfFeed) {
        endOfFeed = true;
        break;
      }
      missing.push(...chunk.missing);
      if (pipeline === undefined) {
        for (const event of chunk.events) terminal.out(`${JSON.stringify(asBusEvent(event, source))}\n`);
        published += chunk.events.length;
      } else {
        published += await publishChunk(pipeline, chunk.events, through);
        await writeReplayState(stateFile, {
          program,
          from: flags.from,
          to: flags.to,
          publishedThrough: chunk.through,
          updatedAt: new Date().toISOString(),
        });
      }
      through = chunk.through;
      progress.update(through - start + 1, `at ${through}`);
      if (interrupt.signal.aborted) break;
    }
  } catch (error) {
    progress.stop('stopped');
    if (interrupt.signal.aborted)
      throw new InterruptedError(`Replay interrupted after ${through}; run the same command again to resume`);
    throw error;
  } finally {
    interrupt.dispose();
  }
  if (interrupt.signal.aborted && through < flags.to && !endOfFeed) {
    progress.stop('interrupted');
    throw new InterruptedError(`Replay interrupted after ${through}; run the same command again to resume`);
  }
  progress.stop(endOfFeed ? `the feed ends at ${through}` : 'done');
  if (!flags.dryRun && !endOfFeed) await removeReplayState(stateFile);
  const summary = {
    program,
    from: flags.from,
    to: flags.to,
    published,
    through,
    missing,
    endOfFeed,
    dryRun: flags.dryRun === true,
    ...(eventBusName === undefined ? {} : { eventBus: eventBusName }),
  };
  const verb = flags.dryRun ? 'Would send' : `Published to bus ${eventBusName}`;
  terminal.err(
    `${verb}: ${published} event(s) of ${program}, ${start}..${through}` +
      `${missing.length > 0 ? `; no event in the feed for ${missing.join(', ')}` : ''}` +
      `${endOfFeed && through < flags.to ? `; the feed has nothing after ${through} yet (run again later for the rest)` : ''}.\n`,
  );
  if (globals.json && !flags.dryRun) terminal.out(toJson(summary));
}

/** Publishes one chunk; throws, naming where to resume, if the bus did not take all of it. */
async function publishChunk(
  pipeline: PublishPipeline,
  events: readonly BankingEvent[],
  before: number,
): Promise<number> {
  const tracker = new CheckpointTracker(before);
  tracker.track(events.map((event) => event.sequence_number));
  const report = await pipeline.publish(events, {
    deadline: Number.POSITIVE_INFINITY,
    signal: new AbortController().signal,
    onAccepted: (event) => tracker.accept(event.sequence_number),
  });
  const failed = report.failed[0];
  if (failed !== undefined) {
    throw new CliError(
      `The bus did not accept ${report.failed.length} event(s) (first: sequence ${failed.event.sequence_number}, ${failed.errorCode}: ${failed.errorMessage})`,
      'fix the bus (permissions, quota) and run the same command again to resume',
    );
  }
  if (report.oversize !== undefined) {
    throw new CliError(
      `Event ${report.oversize.event.id} (sequence ${report.oversize.event.sequence_number}) is ${report.oversize.sizeBytes} bytes, over the PutEvents limit`,
      'deliver it another way (docs/deploy.md#event-too-large), then replay from the next number',
    );
  }
  return report.accepted;
}

/** What `--dry-run` prints: the event as an EventBridge target would receive it. */
function asBusEvent(event: BankingEvent, source: string): Record<string, unknown> {
  return { source, 'detail-type': event.type, time: event.created_dt, detail: event };
}
