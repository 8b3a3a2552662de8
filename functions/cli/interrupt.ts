/**
 * Ctrl-C the way long-running CLIs handle it: the first one asks the command to finish what it
 * has in hand (its signal aborts); a second one quits at once with exit code 130, unless the
 * command is cleaning up after itself (`tail` removing its rule and queue), which must not be cut.
 *
 * Closing the terminal asks the same as Ctrl-C: finish, commit, release, clean up. It shows as
 * SIGHUP, or first as a failed write (EIO; EPIPE when the reader of a pipe quit), which can come
 * before the signal: either one stops the command, and later write errors are dropped instead of
 * ending the process before its clean-up. A write the command waits on (the local run's events on
 * stdout) still sees its own error, so nothing unprinted counts as published.
 */
import { EXIT_CODES } from './exit-codes.ts';

export interface Interrupt {
  /** Aborts on the first Ctrl-C, SIGTERM, SIGHUP, or write to a closed terminal or pipe. */
  readonly signal: AbortSignal;
  /** While set, a second Ctrl-C is ignored (with a note) instead of quitting. */
  protect(reason: string): void;
  dispose(): void;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** Set once the terminal (or the pipe) behind stdout or stderr is gone: nobody reads any more. */
let outputClosed = false;
const onOutputClosed = new Set<() => void>();
let watchingOutput = false;

function watchOutput(): void {
  if (watchingOutput) return;
  watchingOutput = true;
  for (const stream of [process.stdout, process.stderr]) {
    // Without a listener, a failed write to a closed terminal is an uncaught error that ends
    // the process at once, commit and lease release not done.
    stream.on('error', () => {
      outputClosed = true;
      for (const listener of [...onOutputClosed]) listener();
    });
  }
}

export function onInterrupt(notice: string, write: (text: string) => void): Interrupt {
  watchOutput();
  const controller = new AbortController();
  let protectedReason: string | undefined;
  const say = (text: string): void => {
    if (!outputClosed) write(text);
  };
  const stop = (reason: string): boolean => {
    if (controller.signal.aborted) return false;
    say(`${notice}\n`);
    controller.abort(new Error(`Stopped by ${reason}`));
    return true;
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (signal === 'SIGHUP') outputClosed = true;
    if (stop(signal)) return;
    if (protectedReason !== undefined) {
      say(`Still ${protectedReason}; please wait\n`);
      return;
    }
    // A hang-up is no request to quit at once: only a second Ctrl-C or SIGTERM is.
    if (signal !== 'SIGHUP') process.exit(EXIT_CODES.interrupted);
  };
  const onClosed = (): void => {
    stop('the terminal closing');
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  onOutputClosed.add(onClosed);
  return {
    signal: controller.signal,
    protect: (reason) => {
      protectedReason = reason;
    },
    dispose: () => {
      for (const signal of SIGNALS) process.off(signal, onSignal);
      onOutputClosed.delete(onClosed);
    },
  };
}
