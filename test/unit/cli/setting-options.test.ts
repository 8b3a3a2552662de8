import { Command, CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { settingOption } from '../../../functions/cli/setting-options.ts';

/** A command with the flags of the feed's settings, as `run` has them; the options it parsed, or its error. */
function parse(args: readonly string[]): Record<string, unknown> | CommanderError {
  const command = new Command('run')
    .exitOverride()
    .configureOutput({ writeErr: () => {}, writeOut: () => {} })
    .addOption(settingOption('pollLimit', 'events asked for per poll'))
    .addOption(settingOption('pollCursorParam', 'query parameter carrying the cursor'))
    .addOption(settingOption('startPosition', 'where a program without a checkpoint starts'))
    .addOption(settingOption('feedMode', 'poll or stream'));
  try {
    command.parse(args, { from: 'user' });
    return command.opts();
  } catch (error) {
    if (error instanceof CommanderError) return error;
    throw error;
  }
}

describe('settingOption', () => {
  it("gives each flag the settings table's default", () => {
    expect(parse([])).toEqual({
      limit: 100,
      cursorParam: 'last_sequence_number',
      startPosition: 'beginning',
      feedMode: 'poll',
    });
  });

  it('reads a value as the handler reads its variable', () => {
    expect(parse(['--limit', '250', '--start-position', '1200', '--cursor-param', 'after'])).toMatchObject({
      limit: 250,
      startPosition: 1200,
      cursorParam: 'after',
    });
  });

  it.each([
    [
      ['--limit', '5000'],
      "option '--limit <events>' argument '5000' is invalid. expected an integer from 1 to 1000.",
    ],
    [['--feed-mode', 'sse'], 'expected "poll" or "stream".'],
    [['--cursor-param', 'a&token=x'], 'expected a query parameter name'],
    [['--start-position', 'earliest'], 'expected "beginning", "latest", or a sequence number'],
  ])('refuses %j, naming the flag and the expected form', (args, message) => {
    const error = parse(args);

    expect(error).toBeInstanceOf(CommanderError);
    expect((error as CommanderError).message).toContain(message);
    expect((error as CommanderError).code).toBe('commander.invalidArgument');
  });
});
