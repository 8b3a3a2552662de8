/**
 * The exit codes of `banking-events-poller`, the contract scripts rely on (docs/cli.md: "Exit codes").
 */
export const EXIT_CODES = Object.freeze({
  /** Done as asked. */
  ok: 0,
  /** The operation failed (AWS, the banking service, a check that `doctor` ran). Nothing half-done is left behind. */
  failed: 1,
  /** The command line is wrong: unknown flag, missing or malformed value, a range backwards. Nothing was done. */
  usage: 2,
  /** A safety check said no: a live lease without `--force`, no confirmation, the state changed meanwhile. Nothing was changed. */
  refused: 3,
  /** Stopped by a second Ctrl-C (the first one finishes the work in hand and exits 0). */
  interrupted: 130,
});

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];
