/**
 * Renders the CLI reference of docs/cli.md from the commands' own `--help`, exactly as
 * `banking-events-poller <command> --help` prints it (at a fixed width, without colours), so the
 * reference cannot drift from the program. `npm run generate:docs` writes it; a unit test checks
 * it is current.
 */
import type { Command } from 'commander';
import { createCli } from '../functions/cli/cli-program.ts';
import type { DocsTable } from './settings-docs-renderer.ts';

/** Wide enough for the examples, narrow enough to read on GitHub. */
const HELP_WIDTH = 100;

/** The commands as a user reaches them, depth first: the program, then each (sub)command. */
function commandsOf(command: Command, path: readonly string[] = []): [readonly string[], Command][] {
  return [
    [path, command],
    ...command.commands
      .filter((sub) => sub.name() !== 'help')
      .flatMap((sub) => commandsOf(sub, [...path, sub.name()])),
  ];
}

/** What `--help` prints for `command`, the text added after it included. */
function helpOf(command: Command): string {
  let text = '';
  command.configureOutput({
    writeOut: (chunk) => {
      text += chunk;
    },
    getOutHelpWidth: () => HELP_WIDTH,
    getOutHasColors: () => false,
  });
  command.outputHelp();
  return text.trimEnd();
}

export const CLI_REFERENCE: DocsTable = {
  file: 'docs/cli.md',
  name: 'cli:reference',
  source: 'the commands’ own --help',
  render() {
    const cli = createCli('0.0.0');
    return commandsOf(cli)
      .flatMap(([path, command]) => [
        `### \`${[cli.name(), ...path].join(' ')}\``,
        '',
        '```',
        helpOf(command),
        '```',
        '',
      ])
      .join('\n')
      .trimEnd();
  },
};
