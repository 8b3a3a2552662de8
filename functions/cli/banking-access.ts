/**
 * The banking service as operator commands reach it: credentials from the program's secret,
 * the same HTTP adapter as the function, and a feed reader whose retries are bounded (a command
 * has no Lambda deadline to stop it, so it gives up after a few failures in a row).
 */
import { SecretsManagerCredentialsProvider } from '../adapters/aws/secrets-manager-credentials.ts';
import { BankConnections } from '../adapters/banking-http/bank-connections.ts';
import { BankingEventFeed } from '../adapters/banking-http/banking-event-feed.ts';
import { ClientCredentialsTokenProvider } from '../adapters/banking-http/token-cache.ts';
import { systemClock } from '../adapters/system-clock.ts';
import { FeedReader } from '../core/feed-reader.ts';
import type { CycleLogger, MetricName, MetricsSink } from '../core/ports.ts';
import { CliError } from './cli-errors.ts';
import type { CommandContext } from './command-context.ts';
import type { Terminal } from './terminal.ts';

/** The feed's settings as the flags give them (`settingOption`); left out, the settings table's defaults. */
export interface FeedFlags {
  readonly cursorParam?: string;
  readonly limitParam?: string;
  readonly limit?: number;
}

/**
 * The feed behind a program's secret, over connections of its own that are destroyed when the
 * command ends (`closeAtEnd`): nothing the bank keeps open outlives the command.
 */
export function feedFromSecret(
  context: Pick<CommandContext, 'aws' | 'closeAtEnd'>,
  secretId: string,
  flags: FeedFlags,
): BankingEventFeed {
  const credentials = new SecretsManagerCredentialsProvider({ client: context.aws.secretsManager, secretId });
  const connections = new BankConnections();
  context.closeAtEnd(connections);
  return new BankingEventFeed({
    credentials,
    tokens: new ClientCredentialsTokenProvider({ credentials, connections }),
    cursorParam: flags.cursorParam,
    limitParam: flags.limitParam,
    limit: flags.limit,
  });
}

/** Warnings of the feed reader (retries) as short lines on stderr; nothing else. */
export function warningLogger(terminal: Terminal): CycleLogger {
  const warn = (message: string, attributes?: Record<string, unknown>): void => {
    const status = attributes?.status === undefined ? '' : ` (HTTP ${String(attributes.status)})`;
    terminal.err(`warning: ${message}${status}\n`);
  };
  return { debug: () => {}, info: () => {}, warn, error: warn };
}

/** Consecutive failed polls after which a command gives up. */
export const MAX_CONSECUTIVE_POLL_FAILURES = 5;

/**
 * A `FeedReader` over `feed` that stops when `signal` aborts (Ctrl-C) or after
 * `MAX_CONSECUTIVE_POLL_FAILURES` failed polls in a row; `failure()` then says why.
 */
export function boundedReader(
  feed: BankingEventFeed,
  signal: AbortSignal,
  terminal: Terminal,
): { reader: FeedReader; failure(): CliError | undefined } {
  const gaveUp = new AbortController();
  let consecutive = 0;
  const metrics: MetricsSink = {
    add: (name: MetricName, _unit, value) => {
      if (name === 'PollErrors') {
        consecutive += value;
        if (consecutive >= MAX_CONSECUTIVE_POLL_FAILURES) gaveUp.abort();
      } else if (name === 'EventsReceived') consecutive = 0;
    },
  };
  const reader = new FeedReader(
    { feed, clock: systemClock, metrics, logger: warningLogger(terminal) },
    { minPollWindowMs: 0, pollBackoff: { baseMs: 500, capMs: 10_000 }, minEmptyPollIntervalMs: 1_000 },
    { deadline: Number.POSITIVE_INFINITY, signal: AbortSignal.any([signal, gaveUp.signal]) },
  );
  return {
    reader,
    failure: () => {
      if (!gaveUp.signal.aborted) return undefined;
      const last = reader.lastError instanceof Error ? reader.lastError.message : 'no answer';
      return new CliError(
        `The banking service failed ${MAX_CONSECUTIVE_POLL_FAILURES} polls in a row (last: ${last})`,
        'check that it is up (`banking-events-poller doctor`) and try again; nothing was changed',
      );
    },
  };
}
