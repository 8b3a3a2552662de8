/**
 * `simulate`: the banking-service simulator on a port, for trying an integration by hand. Its
 * credentials are fake, local ones: printing them is the point.
 */
import type { Command } from 'commander';
import { startSimulator } from '../../simulator/banking-simulator.ts';
import { withContext } from '../command-context.ts';
import { onInterrupt } from '../interrupt.ts';
import { nonNegativeInteger, positiveNumber } from '../option-parsers.ts';
import { toJson } from '../output-format.ts';

interface SimulateFlags {
  readonly host: string;
  readonly port: number;
  readonly rate?: number;
  readonly backlog: number;
  readonly seed?: number;
  readonly maxHoldMs: number;
}

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .summary('start the banking-service simulator and print its URL and test credentials')
    .description(
      'Starts the banking-service simulator (token endpoint, GET /events long poll, SSE stream, single-event lookups) ' +
        'and prints its base URL and test credentials. Runs until Ctrl-C.',
    )
    .option('--host <host>', 'listen address', '127.0.0.1')
    .option('--port <port>', 'port (0: any free port)', nonNegativeInteger, 8080)
    .option('--rate <events-per-second>', 'generate events continuously at this rate', positiveNumber)
    .option('--backlog <events>', 'events generated before it starts listening', nonNegativeInteger, 0)
    .option('--seed <n>', 'seed for reproducible data', nonNegativeInteger)
    .option(
      '--max-hold-ms <ms>',
      'longest hold of a GET /events with nothing new',
      nonNegativeInteger,
      60_000,
    )
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller simulate --port 8080 --backlog 100 --rate 2
  $ BANKING_BASE_URL=http://127.0.0.1:8080 BANKING_CLIENT_ID=local-client BANKING_CLIENT_SECRET=local-secret \\
      banking-events-poller run`,
    )
    .action(async (flags: SimulateFlags, command: Command) => {
      await withContext(command, async ({ globals, terminal }) => {
        const intervalMs =
          flags.rate === undefined ? 0 : Math.max(10, Math.round(1000 / Math.min(flags.rate, 100)));
        const simulator = await startSimulator({
          host: flags.host,
          port: flags.port,
          seed: flags.seed,
          maxPollHoldMs: flags.maxHoldMs,
          trickle:
            flags.rate === undefined
              ? false
              : { intervalMs, eventsPerTick: Math.max(1, Math.round((flags.rate * intervalMs) / 1000)) },
        });
        simulator.generate(flags.backlog);
        const [simulated] = simulator.programs;
        const details = {
          baseUrl: simulator.url,
          tokenUrl: `${simulator.url}/oauth2/token`,
          programId: simulated!.programId,
          clientId: simulated!.clientId,
          clientSecret: simulated!.clientSecret,
          seed: simulator.seed,
          backlog: flags.backlog,
        };
        if (globals.json) terminal.out(toJson(details));
        else {
          terminal.out(
            [
              `Banking simulator listening on ${details.baseUrl} (seed ${details.seed})`,
              `  token URL      ${details.tokenUrl}`,
              `  program_id     ${details.programId}`,
              `  client_id      ${details.clientId}`,
              `  client_secret  ${details.clientSecret}   (a fake, local credential)`,
              `  events         ${flags.backlog} now${flags.rate === undefined ? '' : `, then ${flags.rate}/s`}`,
              '',
              'Poll it:   BANKING_BASE_URL=' +
                `${details.baseUrl} BANKING_CLIENT_ID=${details.clientId} BANKING_CLIENT_SECRET=${details.clientSecret} banking-events-poller run`,
              'Press Ctrl-C to stop.',
              '',
            ].join('\n'),
          );
        }
        const interrupt = onInterrupt('Stopping the simulator', terminal.err);
        try {
          await new Promise<void>((resolve) =>
            interrupt.signal.addEventListener('abort', () => resolve(), { once: true }),
          );
        } finally {
          interrupt.dispose();
          await simulator.close();
        }
      });
    });
}
