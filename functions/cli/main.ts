/**
 * Entry point of `banking-events-poller` (bin/banking-events-poller.mjs runs the build of this
 * file; `npm start` runs it from source). Turns whatever a command throws into one line on stderr
 * and an exit code (`exit-codes.ts`).
 */
import { CommanderError } from 'commander';
import { describeFailure } from './cli-errors.ts';
import { createCli } from './cli-program.ts';
import { EXIT_CODES } from './exit-codes.ts';

// The SDK warns on every command under Node 20 about its own future releases; an operator cannot act
// on that mid-incident, and it would break the one-line errors. package.json "engines" says what we need.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** package.json is two levels up from both the source (functions/cli/) and the bundle (dist/cli/). */
async function version(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

async function main(argv: readonly string[]): Promise<number> {
  const cli = createCli(await version());
  try {
    await cli.parseAsync([...argv], { from: 'user' });
    return EXIT_CODES.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and --version end with exit code 0; anything else is a bad command line, already explained.
      return error.exitCode === 0 ? EXIT_CODES.ok : EXIT_CODES.usage;
    }
    const failure = describeFailure(error);
    process.stderr.write(`banking-events-poller: ${failure.message}\n`);
    return failure.exitCode;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`banking-events-poller: ${String(error)}\n`);
    process.exitCode = EXIT_CODES.failed;
  },
);
