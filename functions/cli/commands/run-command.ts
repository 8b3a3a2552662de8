/**
 * `run` (and `npm start`): the poll cycle, run continuously. With no flags it needs nothing:
 * the banking-service simulator in-process, the checkpoint in a local file, every event as one
 * NDJSON line on stdout. Each flag switches one part to the real thing: `--secret-id` (a banking
 * environment's credentials in Secrets Manager), `--checkpoint-table` (DynamoDB), `--event-bus`
 * (EventBridge). Ctrl-C finishes the batch in hand, commits, and exits 0.
 */
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { DynamoDbCheckpointStore } from '../../adapters/aws/dynamodb-checkpoint-store.ts';
import { EventBridgePublisher } from '../../adapters/aws/eventbridge-publisher.ts';
import { SecretsManagerCredentialsProvider } from '../../adapters/aws/secrets-manager-credentials.ts';
import { BankConnections } from '../../adapters/banking-http/bank-connections.ts';
import { BankingEventFeed } from '../../adapters/banking-http/banking-event-feed.ts';
import { BankingEventStream } from '../../adapters/banking-http/banking-event-stream.ts';
import { ClientCredentialsTokenProvider } from '../../adapters/banking-http/token-cache.ts';
import { FileCheckpointStore } from '../../adapters/local/file-checkpoint-store.ts';
import { StaticCredentialsProvider } from '../../adapters/local/static-credentials.ts';
import { stderrLogger } from '../../adapters/local/stderr-logger.ts';
import { StdoutPublisher } from '../../adapters/local/stdout-publisher.ts';
import { memoryLimitBytes } from '../../adapters/memory-limit.ts';
import { systemClock } from '../../adapters/system-clock.ts';
import { type CheckpointStore, uniqueLeaseOwner } from '../../core/checkpoint/index.ts';
import { AuthenticationError, ConfigurationError } from '../../core/errors.ts';
import { memoryBudget } from '../../core/memory-budget.ts';
import { runPollCycle } from '../../core/poll-cycle.ts';
import type { CredentialsProvider, EventPublisher } from '../../core/ports.ts';
import { type FeedMode, SETTINGS, type StreamRecovery } from '../../settings/settings.ts';
import { type StartPositionValue, toStartPosition } from '../../settings/value-kinds.ts';
import { UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import type { Deployment } from '../deployment.ts';
import { onInterrupt } from '../interrupt.ts';
import { startLiveStatusLine } from '../live-status-line.ts';
import { deadLocalOwnerPid, localInvocationId } from '../local-lease-owner.ts';
import { positiveNumber } from '../option-parsers.ts';
import { localSecretId } from '../program-secret.ts';
import { ProgressReporter } from '../progress-reporter.ts';
import { settingOption } from '../setting-options.ts';
import { cycleBudget, stopAfter } from '../stop-after.ts';

interface RunFlags {
  readonly program?: string;
  readonly secretId?: string | true;
  readonly checkpointTable?: string | true;
  readonly checkpointFile?: string;
  readonly eventBus?: string | true;
  readonly eventSource?: string;
  readonly startPosition: StartPositionValue;
  /** Seconds (`--start-clock-skew`). */
  readonly startClockSkew: number;
  readonly duration?: number;
  readonly untilCaughtUp?: boolean;
  readonly rate: number;
  readonly reportEvery: number;
  readonly logLevel: string;
  readonly cursorParam: string;
  readonly limitParam: string;
  readonly limit: number;
  readonly feedMode: FeedMode;
  readonly streamRecovery: StreamRecovery;
}

export function registerRunCommand(program: Command): void {
  program
    .command('run')
    .summary('poll continuously from this machine (npm start)')
    .description(
      'Runs the poll cycle continuously. With no flags: the banking-service simulator in-process, the checkpoint in ' +
        '.local/checkpoint-<program>.json, every event as one NDJSON line on stdout. Each flag switches one part to the ' +
        'real thing; with --stack, a flag given without a value takes the name from the stack. A live line on stderr ' +
        'shows events/s, checkpoint, lag and retries. Ctrl-C finishes the batch in hand, commits, and exits 0. Always ' +
        'local: the deployed function is not involved.',
    )
    .option('--program <name>', 'checkpoint row (default: "local", or the stack\'s first program)')
    .option(
      '--secret-id [id]',
      'poll the banking service whose credentials this secret holds, read with your credentials on this machine ' +
        '(local use; default: the simulator)',
    )
    .option('--checkpoint-table [name]', 'keep the checkpoint in this DynamoDB table (default: a local file)')
    .option('--checkpoint-file <path>', 'local checkpoint file (default: .local/checkpoint-<program>.json)')
    .option('--event-bus [name]', 'publish to this EventBridge bus (default: NDJSON on stdout)')
    .option(
      '--event-source <source>',
      `source of published events (default: the stack's, or ${SETTINGS.eventSource.default})`,
    )
    .addOption(
      settingOption('startPosition', 'where a program without a checkpoint starts: beginning, latest or N'),
    )
    .addOption(
      settingOption(
        'startClockSkewAllowanceSeconds',
        "latest: how far behind ours the bank's clock may be, in seconds (events stamped that long before the first run are published)",
      ),
    )
    .option(
      '--duration <seconds>',
      'end by itself within this long: polling stops early enough for the last publish and checkpoint to fit (default: until Ctrl-C)',
      positiveNumber,
    )
    .option(
      '--until-caught-up',
      'stop once the feed answers that nothing is new (drain a backlog, then exit)',
    )
    .option('--rate <events-per-second>', 'simulator: events generated per second', positiveNumber, 5)
    .option(
      '--report-every <seconds>',
      'status line interval when stderr is not a terminal',
      positiveNumber,
      5,
    )
    .option(
      '--log-level <level>',
      'debug | info | warn | error (JSON lines on stderr)',
      process.env.LOG_LEVEL ?? 'warn',
    )
    .addOption(settingOption('pollCursorParam', 'query parameter carrying the cursor'))
    .addOption(settingOption('pollLimitParam', 'query parameter carrying the page size'))
    .addOption(settingOption('pollLimit', 'events asked for per poll'))
    .addOption(settingOption('feedMode', 'poll (long polls of GET /events) or stream (GET /events/stream)'))
    .addOption(
      settingOption(
        'streamRecovery',
        'stream mode: fetch transactions whose data.type the stream replaced from a page (GET /events) or by lookup (GET /event/:id)',
      ),
    )
    .addHelpText(
      'after',
      `
Examples:
  $ npm start                                         # simulator, local file, NDJSON on stdout
  $ banking-events-poller run --duration 10 | jq .detail.sequence_number
  $ banking-events-poller run --start-position latest
  $ banking-events-poller run --feed-mode stream
  $ banking-events-poller run --stack BankingEventsPoller --secret-id --event-bus --program default
  $ BANKING_BASE_URL=https://bank.example.com BANKING_CLIENT_ID=… BANKING_CLIENT_SECRET=… banking-events-poller run`,
    )
    .action(async (flags: RunFlags, command: Command) => {
      await withContext(command, (context) => run(context, flags));
    });
}

interface Upstream {
  readonly credentials: CredentialsProvider;
  readonly description: string;
  close(): Promise<void>;
}

async function run(context: CommandContext, flags: RunFlags): Promise<void> {
  const { terminal } = context;
  const needsStack = flags.secretId === true || flags.checkpointTable === true || flags.eventBus === true;
  if (needsStack && context.globals.stack === undefined) {
    throw new UsageError(
      'A flag was given without its value',
      'give the name (e.g. --event-bus NAME), or pass --stack NAME',
    );
  }
  const deployment = await context.deployment({
    secretId: flagValue(flags.secretId),
    checkpointTable: flagValue(flags.checkpointTable),
    eventBus: flagValue(flags.eventBus),
  });
  const embedded = flags.secretId === undefined && !process.env.BANKING_BASE_URL;
  const program = deployment.program(flags.program, embedded ? 'local' : 'default');
  const checkpoints = checkpointStore(context, deployment, flags, program);
  const resumeFrom = (await checkpoints.read()).checkpoint;
  const upstream = await startUpstream(context, deployment, flags, program, resumeFrom);
  const publisher = eventPublisher(context, deployment, flags);
  const progress = new ProgressReporter();
  const caughtUp = new AbortController();
  // Destroyed at exit: a request the bank or a proxy never answers must not keep the process alive.
  const connections = new BankConnections();
  // What a cycle holds of the events it reads, and reads of a page at once: from V8's heap limit
  // (`node --max-old-space-size`), as the handler's from the function's memory.
  const memory = memoryBudget(memoryLimitBytes());
  const tokens = new ClientCredentialsTokenProvider({ credentials: upstream.credentials, connections });
  const feed = new BankingEventFeed({
    credentials: upstream.credentials,
    tokens,
    cursorParam: flags.cursorParam,
    limitParam: flags.limitParam,
    limit: flags.limit,
    maxPageBytes: memory.pageBytes,
  });
  const stream = new BankingEventStream({
    credentials: upstream.credentials,
    tokens,
    cursorParam: flags.cursorParam,
    maxMessageChars: memory.pageBytes,
  });

  terminal.err(
    `[poller] ${upstream.description} · ${describeStore(flags, deployment, program)} · ` +
      `${publisher.description} · resuming after ${resumeFrom ?? `the start position (${flags.startPosition})`}\n`,
  );
  const live = startLiveStatusLine(terminal, progress, flags.reportEvery * 1000);
  // Log lines (JSON, on stderr) go above the live line, never through it.
  const logger = stderrLogger(flags.logLevel, live.note);
  const interrupt = onInterrupt(
    '[poller] stopping after the current page (Ctrl-C again to quit at once)',
    live.note,
  );
  const endsAt = flags.duration === undefined ? undefined : Date.now() + flags.duration * 1000;
  const stop = AbortSignal.any([
    interrupt.signal,
    caughtUp.signal,
    ...(flags.duration === undefined ? [] : [stopAfter(flags.duration)]),
  ]);
  const events = publisher.build(live.events);
  const invocation = localInvocationId();
  let failures = 0;
  /** Cycles in a row that ended early because the bank could not be used (a stream's retry too long). */
  let unavailable = 0;
  const releasedOwners = new Set<string>();
  try {
    while (!stop.aborted) {
      const budget = cycleBudget(endsAt, Date.now());
      if (budget === undefined) break;
      try {
        const summary = await runPollCycle(
          {
            feed,
            lookup: feed,
            stream,
            publisher: events,
            checkpoints,
            clock: systemClock,
            metrics: progress,
            logger,
          },
          {
            program,
            owner: uniqueLeaseOwner(invocation),
            ...budget,
            heldBytes: memory.heldBytes,
            stopSignal: stop,
            onCaughtUp: flags.untilCaughtUp ? () => caughtUp.abort() : undefined,
            startPosition: {
              position: toStartPosition(flags.startPosition),
              pageLimit: flags.limit,
              clockSkewAllowanceMs: flags.startClockSkew * 1000,
            },
            feedMode: flags.feedMode,
            stream: { recovery: flags.streamRecovery },
          },
        );
        failures = 0;
        // A cycle that gave up at once must not be followed by another at once: back off as after a failure.
        unavailable = summary.stopReason === 'upstream-unavailable' ? unavailable + 1 : 0;
        if (unavailable > 0) {
          logger.warn(
            'The banking service could not be used for the rest of the cycle; waiting before the next',
            {
              waitMs: pauseBeforeNextCycleMs(unavailable),
            },
          );
          await systemClock.sleep(pauseBeforeNextCycleMs(unavailable), stop).catch(() => {});
        }
        if (summary.status === 'lease-busy') {
          if (await takeOverDeadLocalLease(checkpoints, terminal, releasedOwners)) continue;
          logger.warn('Another poller holds this checkpoint; waiting', { program });
          await systemClock.sleep(5_000, stop).catch(() => {});
        }
      } catch (error) {
        if (error instanceof ConfigurationError || error instanceof AuthenticationError) throw error;
        failures += 1;
        logger.error('Cycle failed; retrying', { error });
        await systemClock.sleep(pauseBeforeNextCycleMs(failures), stop).catch(() => {});
      }
    }
  } finally {
    live.stop();
    interrupt.dispose();
    await connections.destroy();
    await upstream.close();
  }
  const state = await checkpoints.read();
  terminal.err(`[poller] stopped at checkpoint ${state.checkpoint ?? 'none'}\n`);
}

/** The wait before the next cycle after `times` cycles in a row failed or gave up at once: 2 s, 4 s, … 30 s. */
function pauseBeforeNextCycleMs(times: number): number {
  return Math.min(30_000, 1_000 * 2 ** Math.min(times, 5));
}

/**
 * Frees a lease left by a CLI run on this host whose process is gone (its terminal closed, it was
 * killed), so this run goes on at once instead of waiting up to a minute for it to expire. The
 * release is conditional on that owner, so a lease taken meanwhile by anyone else is untouched.
 */
async function takeOverDeadLocalLease(
  checkpoints: CheckpointStore,
  terminal: CommandContext['terminal'],
  releasedOwners: Set<string>,
): Promise<boolean> {
  const lease = (await checkpoints.read()).lease;
  if (lease === null) return true;
  const pid = deadLocalOwnerPid(lease.owner);
  // Once per owner: should its release not free the lease, wait for it like any other.
  if (pid === undefined || releasedOwners.has(lease.owner)) return false;
  releasedOwners.add(lease.owner);
  await checkpoints.releaseLease(lease.owner);
  terminal.err(`[poller] took over the lease left by process ${pid}, which no longer runs on this host\n`);
  return true;
}

function flagValue(flag: string | true | undefined): string | undefined {
  return typeof flag === 'string' ? flag : undefined;
}

function checkpointStore(
  context: CommandContext,
  deployment: Deployment,
  flags: RunFlags,
  program: string,
): CheckpointStore {
  if (flags.checkpointTable !== undefined) {
    if (flags.checkpointFile !== undefined) {
      throw new UsageError(
        '--checkpoint-table and --checkpoint-file both name a checkpoint',
        'keep one of them',
      );
    }
    return new DynamoDbCheckpointStore({
      client: context.aws.dynamodb,
      tableName: deployment.checkpointTable,
      program,
    });
  }
  return new FileCheckpointStore(checkpointFile(flags, program), { program });
}

function checkpointFile(flags: RunFlags, program: string): string {
  return flags.checkpointFile ?? join('.local', `checkpoint-${program}.json`);
}

function describeStore(flags: RunFlags, deployment: Deployment, program: string): string {
  return flags.checkpointTable === undefined
    ? `checkpoint file ${checkpointFile(flags, program)}`
    : `checkpoint table ${deployment.checkpointTable} (program ${program})`;
}

interface PublisherChoice {
  readonly description: string;
  build(stdout: Writable): EventPublisher;
}

function eventPublisher(context: CommandContext, deployment: Deployment, flags: RunFlags): PublisherChoice {
  const source = deployment.eventSource(flags.eventSource);
  if (flags.eventBus === undefined) {
    return {
      description: 'events on stdout',
      build: (stdout) => new StdoutPublisher({ out: stdout, source }),
    };
  }
  const eventBusName = deployment.eventBus;
  return {
    description: `events to bus ${eventBusName}`,
    build: () => new EventBridgePublisher({ client: context.aws.eventBridge, eventBusName, source }),
  };
}

/** A real banking service (a secret, or BANKING_* variables), else the simulator continuing after `checkpoint`. */
async function startUpstream(
  context: CommandContext,
  deployment: Deployment,
  flags: RunFlags,
  program: string,
  checkpoint: number | null,
): Promise<Upstream> {
  if (flags.secretId !== undefined) {
    const secretId = await localSecretId(context.aws, deployment, program);
    const credentials = new SecretsManagerCredentialsProvider({
      client: context.aws.secretsManager,
      secretId,
    });
    const { baseUrl } = await credentials.get();
    return {
      credentials,
      description: `banking service at ${new URL(baseUrl).host} (secret ${secretId})`,
      close: async () => {},
    };
  }
  const baseUrl = process.env.BANKING_BASE_URL;
  if (baseUrl) {
    const clientId = process.env.BANKING_CLIENT_ID;
    const clientSecret = process.env.BANKING_CLIENT_SECRET;
    if (!clientId || !clientSecret) {
      throw new ConfigurationError(
        'BANKING_BASE_URL is set, so BANKING_CLIENT_ID and BANKING_CLIENT_SECRET are required',
        { variable: 'BANKING_CLIENT_ID' },
      );
    }
    const credentials = new StaticCredentialsProvider(
      { baseUrl, clientId, clientSecret },
      'BANKING_BASE_URL',
    );
    return {
      credentials,
      description: `banking service at ${new URL(baseUrl).host}`,
      close: async () => {},
    };
  }
  // Imported lazily: only the embedded mode needs the simulator.
  const { startSimulator } = await import('../../simulator/banking-simulator.ts');
  const intervalMs = Math.max(10, Math.round(1000 / Math.min(flags.rate, 100)));
  const eventsPerTick = Math.max(1, Math.round((flags.rate * intervalMs) / 1000));
  const simulator = await startSimulator({
    seed: 42,
    maxPollHoldMs: 20_000,
    trickle: { intervalMs, eventsPerTick },
  });
  // A fresh simulator starts its sequence at 1: replay up to the checkpoint, plus a small backlog,
  // so a restart resumes where the last run stopped.
  simulator.generate((checkpoint ?? 0) + 20);
  const simulated = simulator.programs[0]!;
  return {
    credentials: new StaticCredentialsProvider({
      baseUrl: simulator.url,
      clientId: simulated.clientId,
      clientSecret: simulated.clientSecret,
    }),
    description: `embedded simulator at ${simulator.url} (program ${program})`,
    close: () => simulator.close(),
  };
}
