/**
 * `replay`: publishes a range of events again, read from the banking service, without touching
 * the checkpoint. Resumable: a state file records how far the bus accepted, and running the same
 * command again continues from there. `--dry-run` prints what would be sent.
 */
import type { Command } from 'commander';
import { systemClock } from '../../adapters/system-clock.ts';
import type { BankingEvent } from '../../core/banking-event.ts';
import type { EventPublisher } from '../../core/ports.ts';
import { PublishPipeline } from '../../core/publish-pipeline.ts';
import { type ReplayFailure, type ReplayStep, replayRange } from '../../core/range-replay.ts';
import { SETTINGS } from '../../settings/settings.ts';
import { type FeedFlags, feedFromSecret, warningLogger } from '../banking-access.ts';
import { CliError, InterruptedError, UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import { onInterrupt } from '../interrupt.ts';
import { operatorBusOf } from '../operator-bus-kinds.ts';
import {
  bankRoute,
  LOCAL_OPTION_HELP,
  type OperatorClient,
  type RouteFlags,
  SECRET_ID_OPTION_HELP,
} from '../operator-client.ts';
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

interface ReplayFlags extends FeedFlags, RouteFlags {
  readonly program?: string;
  readonly from: number;
  readonly to: number;
  readonly dryRun?: boolean;
  readonly stateFile?: string;
  readonly restart?: boolean;
  readonly eventBus?: string;
  readonly eventSource?: string;
  readonly holdSeconds: number;
}

export function registerReplayCommand(program: Command): void {
  program
    .command('replay')
    .summary('publish a range of events again, read from the banking service')
    .description(
      'Reads events --from N --to M (both included) from the banking service, paging through GET /events from N-1 ' +
        'and looking up by sequence number whatever the pages skip, and publishes them to the bus again. The checkpoint ' +
        'is not touched. A state file records progress: after an interruption, the same command resumes. With --stack ' +
        'the deployed function reads and publishes (lambda:InvokeFunction; its bus, its source, its feed settings), ' +
        'one invocation after another; --local reads the secret and publishes from this machine (to a classic bus: on a ' +
        'Custom Event Bus the function replays, with the event groups it publishes by).',
    )
    .requiredOption('--from <sequence>', 'first sequence number', positiveInteger)
    .requiredOption('--to <sequence>', 'last sequence number', positiveInteger)
    .option('--program <name>', "whose feed (default: the stack's first program)")
    .option('--local', LOCAL_OPTION_HELP)
    .option('--dry-run', 'print the events that would be sent (NDJSON on stdout), send nothing')
    .option('--state-file <path>', 'progress file (default: .local/replays/<program>-<from>-<to>.json)')
    .option('--restart', 'ignore the progress file and start the range over')
    .option('--event-bus <name>', 'bus to publish to from here (--local; default: from --stack)')
    .option(
      '--event-source <source>',
      `source of the events published from here (--local; default: the stack's, or ${SETTINGS.eventSource.default})`,
    )
    .option('--secret-id <id>', SECRET_ID_OPTION_HELP)
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
  const route = await bankRoute(context.aws, deployment, program, flags);
  if (route.kind === 'function' && (flags.eventBus !== undefined || flags.eventSource !== undefined)) {
    throw new UsageError(
      '--event-bus and --event-source say where this machine publishes, but with --stack the deployed function publishes to its own bus',
      'leave them out, or add --local to read the range and publish it from here',
    );
  }
  const source = deployment.eventSource(flags.eventSource);
  const eventBusName = flags.dryRun ? undefined : deployment.eventBus;
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

  const interrupt = onInterrupt(
    'Stopping after the events in hand; run the same command again to resume',
    terminal.err,
  );
  const range = {
    from: start,
    to: flags.to,
    holdMs: flags.holdSeconds * 1000,
    dryRun: flags.dryRun === true,
  };
  const steps =
    route.kind === 'function'
      ? functionSteps(route.client, program, range)
      : replayRange(
          feedFromSecret(context, route.secretId, flags),
          eventBusName === undefined
            ? undefined
            : localPipeline(context, operatorBusOf(deployment).localPublisher(context, source)),
          { ...range, signal: interrupt.signal, pollHoldMs: range.holdMs, clock: systemClock },
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
    for await (const step of steps) {
      if (step.failure !== undefined) throw replayFailureError(step.failure);
      if (step.endOfFeed) {
        endOfFeed = true;
        break;
      }
      missing.push(...step.missing);
      published += step.published;
      if (flags.dryRun) {
        for (const event of step.events) terminal.out(`${JSON.stringify(asBusEvent(event, source))}\n`);
      } else {
        await writeReplayState(stateFile, {
          program,
          from: flags.from,
          to: flags.to,
          publishedThrough: step.through,
          updatedAt: new Date().toISOString(),
        });
      }
      through = step.through;
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

/** The bus as this machine publishes to it (`--local`), as the bus's kind does. */
function localPipeline(context: CommandContext, publisher: EventPublisher): PublishPipeline {
  return new PublishPipeline({
    publisher,
    clock: systemClock,
    metrics: { add: () => {} },
    logger: warningLogger(context.terminal),
  });
}

/**
 * The range replayed by the deployed function, one invocation after another: each publishes
 * chunks until its budget runs low and answers how far it got; the next asks from there.
 */
async function* functionSteps(
  client: OperatorClient,
  program: string,
  range: { from: number; to: number; holdMs: number; dryRun: boolean },
): AsyncGenerator<ReplayStep> {
  let next = range.from;
  while (next <= range.to) {
    const result = await client.send({ version: 1, kind: 'replay', program, ...range, from: next });
    if (result.through >= next) {
      yield {
        events: result.events ?? [],
        missing: result.missing,
        through: result.through,
        published: result.published,
        endOfFeed: false,
      };
    }
    if (result.failure !== undefined) {
      yield {
        events: [],
        missing: [],
        through: result.through,
        published: 0,
        endOfFeed: false,
        failure: result.failure,
      };
      return;
    }
    if (result.endOfFeed) {
      yield { events: [], missing: [], through: result.through, published: 0, endOfFeed: true };
      return;
    }
    if (result.through < next) {
      throw new CliError(
        `The poller function ${client.functionName} read nothing of ${next}..${range.to} within its timeout`,
        'check the banking service (`banking-events-poller doctor`), or lower --hold-seconds; run the same command again to resume',
      );
    }
    next = result.through + 1;
  }
}

/** Why the bus did not take a chunk, in the words and with the fix `replay` has always given. */
function replayFailureError(failure: ReplayFailure): CliError {
  if (failure.kind === 'rejected') {
    return new CliError(
      `The bus did not accept ${failure.count} event(s) (first: sequence ${failure.sequenceNumber}, ${failure.errorCode}: ${failure.errorMessage})`,
      'fix the bus (permissions, quota) and run the same command again to resume',
    );
  }
  return new CliError(
    `Event ${failure.eventId} (sequence ${failure.sequenceNumber}) is ${failure.sizeBytes} bytes, over the PutEvents limit`,
    'deliver it another way (docs/runbook.md#event-too-large), then replay from the next number',
  );
}

/** What `--dry-run` prints: the event as an EventBridge target would receive it. */
function asBusEvent(event: BankingEvent, source: string): Record<string, unknown> {
  return { source, 'detail-type': event.type, time: event.created_dt, detail: event };
}
