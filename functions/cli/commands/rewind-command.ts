/**
 * `rewind`: moves a program's checkpoint, the one sanctioned way to break its monotonicity. It
 * shows before → after, asks (or needs `--yes`), refuses while a run holds the lease (`--wait`
 * for it, or `--force` to take it), and writes conditionally on the checkpoint it showed, so what
 * it printed is what happened. `--to latest` fast-forwards through the feed without publishing.
 */
import type { Command } from 'commander';
import { DynamoDbCheckpointStore } from '../../adapters/aws/dynamodb-checkpoint-store.ts';
import type { BankingEventFeed } from '../../adapters/banking-http/banking-event-feed.ts';
import { fastForward } from '../../core/start-position.ts';
import { boundedReader, type FeedFlags, feedFromSecret } from '../banking-access.ts';
import { CliError, InterruptedError, RefusedError, UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import type { Deployment } from '../deployment.ts';
import { onInterrupt } from '../interrupt.ts';
import { refuseWhileLeased, waitForLease } from '../lease-wait.ts';
import {
  type BankRoute,
  bankRoute,
  LOCAL_OPTION_HELP,
  type OperatorClient,
  type RouteFlags,
  SECRET_ID_OPTION_HELP,
} from '../operator-client.ts';
import { toJson } from '../output-format.ts';
import { startProgress } from '../progress-bar.ts';
import { confirmChange } from '../prompts.ts';
import {
  checkDirection,
  checkRetention,
  describeMove,
  parseRewindTarget,
  type RewindTarget,
} from '../rewind-plan.ts';
import { settingOption } from '../setting-options.ts';

interface RewindFlags extends FeedFlags, RouteFlags {
  readonly program?: string;
  readonly to: string;
  readonly yes?: boolean;
  readonly force?: boolean;
  readonly wait?: boolean;
  readonly allowForward?: boolean;
  readonly feedCheck: boolean;
  readonly checkpointTable?: string;
  /** Always given: the flag has the table's default. */
  readonly limit: number;
}

export function registerRewindCommand(program: Command): void {
  program
    .command('rewind')
    .summary("move a program's checkpoint back (or to the newest event)")
    .description(
      'Sets the checkpoint of a program: the last sequence number taken as published. Events after it are published ' +
        'again by the next run (consumers see duplicates; they de-duplicate on detail.id). Refuses while a run holds ' +
        'the lease, unless --wait (for it to end) or --force (take the lease: that run stops at its next commit). ' +
        '--to latest passes over the existing events without publishing them and lands after the newest one. The feed is ' +
        'read by the deployed function with --stack (lambda:InvokeFunction), from this machine with --local.',
    )
    .requiredOption('--to <checkpoint>', 'a sequence number, "beginning" (0) or "latest"')
    .option('--program <name>', "the program (default: the stack's first program)")
    .option('-y, --yes', 'do not ask for confirmation')
    .option('--wait', 'wait for a running run to release the lease (at most its expiry + 10 s)')
    .option('--force', 'take the lease from a running run')
    .option('--allow-forward', 'allow a number beyond the checkpoint (skips the events in between)')
    .option('--no-feed-check', 'do not ask the banking service for its oldest event first')
    .option('--local', LOCAL_OPTION_HELP)
    .option('--checkpoint-table <name>', 'the checkpoint table (default: from --stack)')
    .option('--secret-id <id>', SECRET_ID_OPTION_HELP)
    .addOption(settingOption('pollCursorParam', 'query parameter carrying the cursor'))
    .addOption(settingOption('pollLimitParam', 'query parameter carrying the page size'))
    .addOption(settingOption('pollLimit', 'events per page while fast-forwarding'))
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller rewind --stack BankingEventsPoller --program default --to 1230
  $ banking-events-poller rewind --stack BankingEventsPoller --program cards --to latest --yes
  $ banking-events-poller rewind --checkpoint-table T --secret-id S --program default --to beginning --wait`,
    )
    .action(async (flags: RewindFlags, command: Command) => {
      await withContext(command, (context) => rewind(context, flags));
    });
}

async function rewind(context: CommandContext, flags: RewindFlags): Promise<void> {
  const { terminal, globals } = context;
  const target = parseRewindTarget(flags.to);
  const deployment = await context.deployment({
    checkpointTable: flags.checkpointTable,
    secretId: flags.secretId,
  });
  const program = deployment.program(flags.program);
  const store = new DynamoDbCheckpointStore({
    client: context.aws.dynamodb,
    tableName: deployment.checkpointTable,
    program,
  });
  const needsFeed = target.kind === 'latest' || flags.feedCheck;
  const feed = needsFeed ? await feedAccess(context, deployment, program, target, flags) : undefined;

  let state = await store.read();
  refuseWhileLeased(program, state, flags, Date.now());

  let to: number;
  let feedProgramId: string | undefined;
  if (target.kind === 'latest') {
    const landing = await fastForwardFrom(context, feed!, state.checkpoint, flags.limit);
    if (landing.reached === null || (state.checkpoint !== null && landing.reached <= state.checkpoint)) {
      terminal.err(
        `Program ${program} is already at the newest event (checkpoint ${state.checkpoint ?? 'none'}); nothing to do.\n`,
      );
      if (globals.json)
        terminal.out(toJson({ program, before: state.checkpoint, after: state.checkpoint, moved: false }));
      return;
    }
    to = landing.reached;
    feedProgramId = landing.feedProgramId ?? undefined;
  } else {
    to = target.checkpoint;
    checkDirection(state.checkpoint, to, flags.allowForward === true);
    if (feed !== undefined) checkRetention(to, await oldestRetained(feed));
  }

  terminal.err(`${describeMove(program, state.checkpoint, to)}\n`);
  if (state.checkpoint === to) {
    if (globals.json) terminal.out(toJson({ program, before: state.checkpoint, after: to, moved: false }));
    return;
  }
  await confirmChange(terminal, `Move the checkpoint of ${program} to ${to}?`, flags.yes === true);
  if (flags.wait) {
    const initial = state;
    state = await waitForLease(context, store, program, initial, (next) =>
      next.checkpoint === initial.checkpoint
        ? undefined
        : `The checkpoint of ${program} moved from ${initial.checkpoint ?? 'none'} to ${next.checkpoint ?? 'none'} while waiting`,
    );
  }

  const outcome = await store.moveCheckpoint({
    to,
    expected: state.checkpoint,
    breakLease: flags.force === true,
    feedProgramId,
  });
  if (!outcome.moved) {
    if (outcome.reason === 'checkpoint-changed') {
      throw new RefusedError(
        `The checkpoint of ${program} moved from ${state.checkpoint ?? 'none'} to ${outcome.state.checkpoint ?? 'none'} meanwhile`,
        'nothing was changed; run the command again to decide on the new value',
      );
    }
    refuseWhileLeased(program, outcome.state, { ...flags, force: false }, Date.now());
    throw new RefusedError(`Program ${program} is being polled`, 'nothing was changed; try again');
  }
  const after = outcome.state;
  if (globals.json) {
    terminal.out(
      toJson({
        program,
        before: state.checkpoint,
        after: after.checkpoint,
        moved: true,
        leaseTaken: flags.force === true && state.lease !== null,
        updatedAt: after.updatedAt,
      }),
    );
  } else {
    terminal.out(
      `Checkpoint of ${program}: ${state.checkpoint ?? 'none'} → ${after.checkpoint} (written ${after.updatedAt}).\n`,
    );
  }
}

/** How `rewind` reads the feed: through the deployed function, or (`--local`) from here with the secret. */
type FeedAccess =
  | { readonly kind: 'function'; readonly client: OperatorClient; readonly program: string }
  | { readonly kind: 'local'; readonly feed: BankingEventFeed };

/** The feed, needed for `latest`, and for the retention check unless skipped. */
async function feedAccess(
  context: CommandContext,
  deployment: Deployment,
  program: string,
  target: RewindTarget,
  flags: RewindFlags,
): Promise<FeedAccess> {
  let route: BankRoute;
  try {
    route = await bankRoute(context.aws, deployment, program, flags);
  } catch (error) {
    if (!(error instanceof UsageError) || target.kind === 'latest') throw error;
    throw new UsageError(
      `${error.message}: rewind asks the banking service for its oldest event first`,
      `${error.fix}, or pass --no-feed-check to skip that check`,
    );
  }
  return route.kind === 'function'
    ? { kind: 'function', client: route.client, program }
    : { kind: 'local', feed: feedFromSecret(context, route.secretId, flags) };
}

/** The first event a poll from the beginning answers with: the oldest the service still has. */
async function oldestRetained(feed: FeedAccess): Promise<number | null> {
  try {
    if (feed.kind === 'function')
      return (await feed.client.send({ version: 1, kind: 'feed-oldest', program: feed.program })).oldest;
    const page = await feed.feed.poll({ after: null, signal: AbortSignal.timeout(15_000) });
    return page.events[0]?.sequence_number ?? null;
  } catch (error) {
    throw new CliError(
      `Could not ask the banking service for its oldest event (${error instanceof Error ? error.message : String(error)})`,
      'fix access to it (`banking-events-poller doctor`), or pass --no-feed-check to skip this check',
    );
  }
}

async function fastForwardFrom(
  context: CommandContext,
  feed: FeedAccess,
  from: number | null,
  pageLimit: number,
): Promise<{ reached: number | null; feedProgramId: string | null }> {
  const { terminal } = context;
  terminal.err(
    `Fast-forwarding: reading the feed from ${from === null ? 'the beginning' : `after ${from}`} without publishing, to find the newest event…\n`,
  );
  if (feed.kind === 'function') return fastForwardInFunction(context, feed, from);
  return fastForwardHere(context, feed.feed, from, pageLimit);
}

/**
 * The walk in the deployed function, one invocation after another (each stops at its deadline
 * and says where); the start time is fixed once, so it lands where one long walk would.
 */
async function fastForwardInFunction(
  context: CommandContext,
  feed: Extract<FeedAccess, { kind: 'function' }>,
  from: number | null,
): Promise<{ reached: number | null; feedProgramId: string | null }> {
  const { terminal } = context;
  const startedAt = Date.now();
  const interrupt = onInterrupt('Stopping the fast-forward; nothing will be changed', terminal.err);
  const progress = startProgress(terminal, { label: 'fast-forward', unit: 'events passed over' });
  let reached = from;
  let skipped = 0;
  let feedProgramId: string | null = null;
  try {
    for (;;) {
      const answer = await feed.client.send({
        version: 1,
        kind: 'feed-latest',
        program: feed.program,
        from: reached,
        startedAt,
      });
      skipped += answer.skipped;
      reached = answer.reached;
      feedProgramId ??= answer.feedProgramId;
      progress.update(skipped, `at ${reached ?? 'the beginning'}`);
      if (answer.outcome === 'landed') {
        progress.stop(`landed at ${reached ?? 'the beginning'}`);
        return { reached, feedProgramId };
      }
      if (answer.pages === 0) {
        progress.stop('stopped');
        throw new CliError(
          `The banking service answered no poll of the fast-forward within the function's timeout (last: ${answer.lastError ?? 'no answer'})`,
          'check that it is up (`banking-events-poller doctor`) and try again; nothing was changed',
        );
      }
      if (interrupt.signal.aborted) {
        progress.stop('interrupted');
        throw new InterruptedError('Fast-forward stopped before the newest event; nothing was changed');
      }
    }
  } finally {
    interrupt.dispose();
  }
}

async function fastForwardHere(
  context: CommandContext,
  feed: BankingEventFeed,
  from: number | null,
  pageLimit: number,
): Promise<{ reached: number | null; feedProgramId: string | null }> {
  const { terminal } = context;
  const interrupt = onInterrupt('Stopping the fast-forward; nothing will be changed', terminal.err);
  const { reader, failure } = boundedReader(feed, interrupt.signal, terminal);
  const progress = startProgress(terminal, { label: 'fast-forward', unit: 'events passed over' });
  try {
    const landing = await fastForward(reader, {
      from,
      startedAt: Date.now(),
      pageLimit,
      onPage: ({ skipped, reached }) => progress.update(skipped, `at ${reached ?? 'the beginning'}`),
    });
    if (landing.kind === 'interrupted') {
      progress.stop('interrupted');
      throw (
        failure() ?? new InterruptedError('Fast-forward stopped before the newest event; nothing was changed')
      );
    }
    progress.stop(`landed at ${landing.reached ?? 'the beginning'}`);
    return landing;
  } finally {
    interrupt.dispose();
  }
}
