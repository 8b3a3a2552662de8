/**
 * The `banking-events-poller` command line: global flags as the AWS and CDK CLIs spell them, and
 * one subcommand per job, each in its own module under `commands/`.
 */
import { Command } from 'commander';
import { registerArchiveReplayCommand } from './commands/archive-replay-command.ts';
import { registerDoctorCommand } from './commands/doctor-command.ts';
import { registerEventCommand } from './commands/event-command.ts';
import { registerJumpsCommand } from './commands/jumps-command.ts';
import { registerProgramsCommand } from './commands/programs-command.ts';
import { registerReplayCommand } from './commands/replay-command.ts';
import { registerRewindCommand } from './commands/rewind-command.ts';
import { registerRunCommand } from './commands/run-command.ts';
import { registerSecretCommand } from './commands/secret-command.ts';
import { registerSimulateCommand } from './commands/simulate-command.ts';
import { registerStatusCommand } from './commands/status-command.ts';
import { registerTailCommand } from './commands/tail-command.ts';

export const CLI_NAME = 'banking-events-poller';

export function createCli(version: string): Command {
  const program = new Command(CLI_NAME)
    .version(version)
    .description(
      "Operate the banking events poller: run it locally, see a program's checkpoint and lag, rewind or replay " +
        'events, watch the bus, check a deployment, set its secret, add and pause its programs.',
    )
    .option('--json', 'machine-readable output on stdout')
    .option('--profile <name>', 'AWS profile (default: the SDK chain: AWS_PROFILE, SSO, environment, …)')
    .option('--region <region>', "AWS region (default: AWS_REGION or the profile's region)")
    .option('--stack <name>', "read resource names from this deployed stack's outputs")
    .option('--no-color', 'no colours (also NO_COLOR)')
    .showHelpAfterError('(add --help for usage)')
    .showSuggestionAfterError()
    .enablePositionalOptions(false)
    .exitOverride()
    .addHelpText(
      'after',
      `
Resources come from flags (--checkpoint-table, --event-bus, --secret-id) or from the outputs of
the stack named by --stack. AWS credentials and endpoint follow the SDK's standard environment
(AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL, …), as the AWS CLI does.

Exit codes: 0 done · 1 failed · 2 bad command line · 3 refused by a safety check · 130 interrupted

Examples:
  $ banking-events-poller run
  $ banking-events-poller status --stack BankingEventsPoller
  $ banking-events-poller rewind --stack BankingEventsPoller --program default --to 1230
  $ banking-events-poller doctor --stack BankingEventsPoller`,
    );
  registerRunCommand(program);
  registerStatusCommand(program);
  registerRewindCommand(program);
  registerJumpsCommand(program);
  registerReplayCommand(program);
  registerArchiveReplayCommand(program);
  registerEventCommand(program);
  registerTailCommand(program);
  registerDoctorCommand(program);
  registerSecretCommand(program);
  registerProgramsCommand(program);
  registerSimulateCommand(program);
  // Every subcommand stops on a bad command line with exit code 2 instead of exiting by itself.
  for (const command of program.commands) command.exitOverride().showHelpAfterError('(add --help for usage)');
  return program;
}
