/**
 * `event`: looks one event up at the banking service (`GET /event/:id` or
 * `GET /event/sequence/:n`) and prints it as the function would publish it. For diagnosis: what
 * the bank has for a sequence number the feed skipped, or for an id a consumer asks about.
 */
import type { Command } from 'commander';
import type { BankingEvent } from '../../core/banking-event.ts';
import { isUnreadableEvent } from '../../core/errors.ts';
import { SETTINGS } from '../../settings/settings.ts';
import { feedFromSecret } from '../banking-access.ts';
import { CliError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import {
  type BankRoute,
  bankRoute,
  LOCAL_OPTION_HELP,
  type RouteFlags,
  SECRET_ID_OPTION_HELP,
} from '../operator-client.ts';

interface EventFlags extends RouteFlags {
  readonly program?: string;
  readonly eventSource?: string;
}

/** An event as the bank had it; `unreadable` when the poller could not read it. */
type LookUp =
  | { found: true; event: BankingEvent }
  | { found: false }
  | { found: 'unreadable'; message: string };

export function registerEventCommand(program: Command): void {
  program
    .command('event')
    .argument('<id-or-sequence>', 'an event id, or a sequence number')
    .summary('look one event up at the banking service, by id or sequence number')
    .description(
      'Looks one event up at the banking service (GET /event/:id, or GET /event/sequence/:n for a number) and prints ' +
        'it on stdout as an EventBridge target would receive it from the function: source, detail-type, time and the ' +
        'detail it would publish. Nothing is published and the checkpoint is not touched. With --stack the deployed ' +
        'function looks it up (lambda:InvokeFunction); --local looks it up from this machine with the secret.',
    )
    .option('--program <name>', "whose feed (default: the stack's first program)")
    .option('--local', LOCAL_OPTION_HELP)
    .option('--secret-id <id>', SECRET_ID_OPTION_HELP)
    .option(
      '--event-source <source>',
      `source shown (default: the stack's, or ${SETTINGS.eventSource.default})`,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller event --stack BankingEventsPoller 1234             # by sequence number
  $ banking-events-poller event --stack BankingEventsPoller 0b0c3f4e-…        # by id
  $ banking-events-poller event --stack BankingEventsPoller 1234 | jq .detail.data`,
    )
    .action(async (key: string, flags: EventFlags, command: Command) => {
      await withContext(command, (context) => lookUp(context, key, flags));
    });
}

async function lookUp(context: CommandContext, key: string, flags: EventFlags): Promise<void> {
  const deployment = await context.deployment({ secretId: flags.secretId });
  const program = deployment.program(flags.program);
  const bySequence = /^\d+$/.test(key);
  const route = await bankRoute(context.aws, deployment, program, flags);
  const answer = await find(context, route, program, key, bySequence);
  if (answer.found === 'unreadable') {
    throw new CliError(
      `The banking service answered with an event this poller cannot read: ${answer.message}`,
      'the function publishes such an event as invalid_event (the quarantine queue); report it to the banking service',
    );
  }
  if (!answer.found) {
    throw new CliError(
      `The banking service has no event ${bySequence ? `with sequence number ${key}` : `with id ${key}`} for ${program} (HTTP 404)`,
      bySequence
        ? 'a number the feed skipped may be unused, or filled in later: see `status` for the open gaps'
        : 'check the id, and that it belongs to this program',
    );
  }
  const { event } = answer;
  const envelope = {
    source: deployment.eventSource(flags.eventSource),
    'detail-type': event.type,
    time: event.created_dt,
    detail: JSON.parse(event.detail) as unknown,
  };
  // The detail as published, byte for byte: spliced in rather than re-serialized.
  const { detail: _detail, ...head } = envelope;
  context.terminal.out(`${JSON.stringify(head).slice(0, -1)},"detail":${event.detail}}\n`);
}

async function find(
  context: CommandContext,
  route: BankRoute,
  program: string,
  key: string,
  bySequence: boolean,
): Promise<LookUp> {
  if (route.kind === 'function') {
    return route.client.send({
      version: 1,
      kind: 'event',
      program,
      ...(bySequence ? { sequence: Number(key) } : { id: key }),
    });
  }
  // Lookups only: the query parameters of polls never go out.
  const feed = feedFromSecret(context, route.secretId, { limit: 1 });
  const signal = AbortSignal.timeout(30_000);
  try {
    const event = bySequence
      ? await feed.fetchEventBySequence(Number(key), signal)
      : await feed.fetchEventById(key, signal);
    return event === null ? { found: false } : { found: true, event };
  } catch (error) {
    if (isUnreadableEvent(error)) return { found: 'unreadable', message: error.message };
    throw error;
  }
}
