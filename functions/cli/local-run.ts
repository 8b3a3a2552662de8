/**
 * `npm start`: the poll cycle, run continuously on embedded defaults. With no configuration it
 * starts the banking-service simulator in-process (a steady trickle of events), keeps the
 * checkpoint in `.local/checkpoint-<program>.json` and writes every event as one NDJSON line to
 * stdout; a short summary goes to stderr every few seconds. Ctrl-C stops after the last
 * checkpoint; a restart resumes from it.
 *
 * Against a real banking service: set BANKING_BASE_URL, BANKING_CLIENT_ID and
 * BANKING_CLIENT_SECRET (secrets come from the environment only, never from flags).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { BankingEventFeed } from '../adapters/banking-http/banking-event-feed.ts';
import { ClientCredentialsTokenProvider } from '../adapters/banking-http/token-cache.ts';
import { FileCheckpointStore } from '../adapters/local/file-checkpoint-store.ts';
import { StaticCredentialsProvider } from '../adapters/local/static-credentials.ts';
import { stderrLogger } from '../adapters/local/stderr-logger.ts';
import { StdoutPublisher } from '../adapters/local/stdout-publisher.ts';
import { AuthenticationError, ConfigurationError } from '../core/errors.ts';
import { parseProgramName } from '../core/name-rules.ts';
import { runPollCycle } from '../core/poll-cycle.ts';
import type { BankingCredentials } from '../core/ports.ts';
import { systemClock } from '../core/system-clock.ts';
import { ProgressReporter } from './progress-reporter.ts';

const USAGE = `Usage: npm start -- [options]

Runs the poller locally: simulator in-process (unless BANKING_BASE_URL is set), checkpoint in a
local file, events as NDJSON on stdout, a summary on stderr.

Options:
  --program NAME           checkpoint row name (default: local)
  --checkpoint-file PATH   default: .local/checkpoint-<program>.json
  --duration SECONDS       stop by itself after this long (default: run until Ctrl-C)
  --rate EVENTS_PER_SEC    simulator trickle (default: 5)
  --report-every SECONDS   summary interval on stderr (default: 5)
  --log-level LEVEL        debug | info | warn | error (default: warn)
  -h, --help
`;

interface LocalOptions {
  readonly program: string;
  readonly checkpointFile: string;
  readonly durationMs: number | null;
  readonly ratePerSecond: number;
  readonly reportEveryMs: number;
  readonly logLevel: string;
}

function positiveNumber(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) {
    throw new ConfigurationError(`${flag} must be a positive number, got "${value}"`, { flag });
  }
  return parsed;
}

function parseOptions(argv: string[]): LocalOptions | null {
  const { values } = parseArgs({
    args: argv,
    options: {
      program: { type: 'string' },
      'checkpoint-file': { type: 'string' },
      duration: { type: 'string' },
      rate: { type: 'string' },
      'report-every': { type: 'string' },
      'log-level': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return null;
  const program = parseProgramName(values.program ?? 'local', '--program');
  return {
    program,
    checkpointFile: values['checkpoint-file'] ?? join('.local', `checkpoint-${program}.json`),
    durationMs:
      values.duration === undefined ? null : positiveNumber(values.duration, '--duration', 0) * 1000,
    ratePerSecond: positiveNumber(values.rate, '--rate', 5),
    reportEveryMs: positiveNumber(values['report-every'], '--report-every', 5) * 1000,
    logLevel: values['log-level'] ?? process.env.LOG_LEVEL ?? 'warn',
  };
}

interface Upstream {
  readonly credentials: BankingCredentials;
  readonly description: string;
  close(): Promise<void>;
}

/** The real service when BANKING_* is set; otherwise the simulator, continuing after `checkpoint`. */
async function startUpstream(options: LocalOptions, checkpoint: number | null): Promise<Upstream> {
  const baseUrl = process.env.BANKING_BASE_URL;
  if (baseUrl) {
    const clientId = process.env.BANKING_CLIENT_ID;
    const clientSecret = process.env.BANKING_CLIENT_SECRET;
    if (!clientId || !clientSecret) {
      throw new ConfigurationError(
        'BANKING_BASE_URL is set, so BANKING_CLIENT_ID and BANKING_CLIENT_SECRET are required',
        {
          variable: 'BANKING_CLIENT_ID',
        },
      );
    }
    return {
      credentials: { baseUrl, clientId, clientSecret },
      description: `banking service at ${new URL(baseUrl).host}`,
      close: async () => {},
    };
  }
  // Imported lazily: the simulator is development tooling, only needed when no upstream is configured.
  const { startSimulator } = await import('../simulator/banking-simulator.ts');
  const intervalMs = Math.max(10, Math.round(1000 / Math.min(options.ratePerSecond, 100)));
  const eventsPerTick = Math.max(1, Math.round((options.ratePerSecond * intervalMs) / 1000));
  const simulator = await startSimulator({
    seed: 42,
    maxPollHoldMs: 20_000,
    trickle: { intervalMs, eventsPerTick },
  });
  // A fresh simulator starts its sequence at 1: replay up to the checkpoint, plus a small backlog,
  // so a restart resumes where the last run stopped.
  simulator.generate((checkpoint ?? 0) + 20);
  const program = simulator.programs[0]!;
  return {
    credentials: { baseUrl: simulator.url, clientId: program.clientId, clientSecret: program.clientSecret },
    description: `embedded simulator at ${simulator.url}`,
    close: () => simulator.close(),
  };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options === null) {
    process.stdout.write(USAGE);
    return 0;
  }
  const logger = stderrLogger(options.logLevel);
  const checkpoints = new FileCheckpointStore(options.checkpointFile, { program: options.program });
  const resumeFrom = (await checkpoints.read()).checkpoint;
  const upstream = await startUpstream(options, resumeFrom);
  const credentials = new StaticCredentialsProvider(upstream.credentials);
  const progress = new ProgressReporter();
  const feed = new BankingEventFeed({
    credentials,
    tokens: new ClientCredentialsTokenProvider({ credentials }),
  });

  const stop = new AbortController();
  let interrupts = 0;
  process.on('SIGINT', () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130);
    process.stderr.write('[poller] stopping after the current page (Ctrl-C again to quit at once)\n');
    stop.abort();
  });
  process.on('SIGTERM', () => stop.abort());
  const duration =
    options.durationMs === null ? undefined : setTimeout(() => stop.abort(), options.durationMs);
  const reporter = setInterval(
    () => process.stderr.write(`${ProgressReporter.format(progress.snapshot())}\n`),
    options.reportEveryMs,
  );
  reporter.unref();

  process.stderr.write(
    `[poller] ${upstream.description} · checkpoint file ${options.checkpointFile} · resuming after ${resumeFrom ?? 'the beginning'}\n`,
  );
  const owner = `local-${process.pid}`;
  let failures = 0;
  try {
    while (!stop.signal.aborted) {
      try {
        const summary = await runPollCycle(
          {
            feed,
            publisher: new StdoutPublisher(),
            checkpoints,
            clock: systemClock,
            metrics: progress,
            logger,
          },
          {
            program: options.program,
            owner,
            remainingMs: 60_000,
            safetyMarginMs: 0,
            stopSignal: stop.signal,
          },
        );
        failures = 0;
        if (summary.status === 'lease-busy') {
          process.stderr.write('[poller] another local poller holds this checkpoint file; waiting\n');
          await systemClock.sleep(5_000, stop.signal).catch(() => {});
        }
      } catch (error) {
        if (error instanceof ConfigurationError || error instanceof AuthenticationError) throw error;
        failures += 1;
        logger.error('Cycle failed; retrying', { error });
        await systemClock.sleep(Math.min(30_000, 1_000 * 2 ** failures), stop.signal).catch(() => {});
      }
    }
  } finally {
    clearTimeout(duration);
    clearInterval(reporter);
    await upstream.close();
  }
  const final = progress.snapshot();
  const state = await checkpoints.read();
  process.stderr.write(
    `${ProgressReporter.format(final)}\n[poller] stopped at checkpoint ${state.checkpoint ?? 'none'}\n`,
  );
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    process.stderr.write(`[poller] ${message}\n`);
    process.exitCode = 1;
  },
);
