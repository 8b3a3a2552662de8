/**
 * Questions to the person at the terminal (Inquirer): a confirmation before a change, hidden
 * input for a secret. Never asked without a terminal: there the command needs `--yes` or stdin.
 */
import { confirm, input, password } from '@inquirer/prompts';
import { InterruptedError, RefusedError } from './cli-errors.ts';
import type { Terminal } from './terminal.ts';

/** Ctrl-C inside a prompt rejects with `ExitPromptError`: nothing was done yet. */
async function asked<T>(question: Promise<T>): Promise<T> {
  try {
    return await question;
  } catch (error) {
    if (error instanceof Error && error.name === 'ExitPromptError') throw new InterruptedError('Cancelled');
    throw error;
  }
}

/** Asks to go ahead unless `yes`; without a terminal, `--yes` is required. */
export async function confirmChange(terminal: Terminal, question: string, yes: boolean): Promise<void> {
  if (yes) return;
  if (!terminal.interactive || !terminal.stdinIsTerminal) {
    throw new RefusedError(
      'Confirmation needed and there is no terminal to ask on',
      'pass --yes to go ahead',
    );
  }
  const answer = await asked(confirm({ message: question, default: false }, { output: process.stderr }));
  if (!answer) throw new RefusedError('Not confirmed', 'nothing was changed');
}

/** A value typed in the clear (a URL, a client id). */
export function askVisible(message: string, validate?: (value: string) => string | true): Promise<string> {
  return asked(input({ message, validate: validate ?? (() => true) }, { output: process.stderr }));
}

/** A value typed without echo (a client secret); the answer is never printed. */
export function askHidden(message: string): Promise<string> {
  return asked(
    password(
      { message, mask: false, validate: (value) => (value.length > 0 ? true : 'must not be empty') },
      { output: process.stderr },
    ),
  );
}
