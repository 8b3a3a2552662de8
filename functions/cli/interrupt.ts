/**
 * Ctrl-C the way long-running CLIs handle it: the first one asks the command to finish what it
 * has in hand (its signal aborts); a second one quits at once with exit code 130, unless the
 * command is cleaning up after itself (`tail` removing its rule and queue), which must not be cut.
 */
import { EXIT_CODES } from './exit-codes.ts';

export interface Interrupt {
  /** Aborts on the first Ctrl-C or SIGTERM. */
  readonly signal: AbortSignal;
  /** While set, a second Ctrl-C is ignored (with a note) instead of quitting. */
  protect(reason: string): void;
  dispose(): void;
}

export function onInterrupt(notice: string, write: (text: string) => void): Interrupt {
  const controller = new AbortController();
  let protectedReason: string | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!controller.signal.aborted) {
      write(`${notice}\n`);
      controller.abort(new Error(`Stopped by ${signal}`));
      return;
    }
    if (protectedReason !== undefined) {
      write(`Still ${protectedReason}; please wait\n`);
      return;
    }
    process.exit(EXIT_CODES.interrupted);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    protect: (reason) => {
      protectedReason = reason;
    },
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
