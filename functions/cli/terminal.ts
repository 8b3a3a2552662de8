/**
 * What the CLI knows about where it writes: whether a person is watching (a TTY) and whether
 * colours are wanted (`NO_COLOR`, `--no-color`). Results go to stdout; progress, prompts and
 * errors to stderr, so `… --json | jq` and `… > file` keep only the results.
 */
import pc from 'picocolors';

type Colors = ReturnType<typeof pc.createColors>;

export interface Terminal {
  /** stderr is a terminal: live lines, progress bars and prompts may be shown there. */
  readonly interactive: boolean;
  /** stdout is a terminal: results may be pretty-printed rather than machine lines. */
  readonly stdoutIsTerminal: boolean;
  /** stdin is a terminal: a hidden prompt can be shown. */
  readonly stdinIsTerminal: boolean;
  readonly color: boolean;
  out(text: string): void;
  err(text: string): void;
}

export function processTerminal(options: { color?: boolean } = {}): Terminal {
  const interactive = process.stderr.isTTY === true;
  return {
    interactive,
    stdoutIsTerminal: process.stdout.isTTY === true,
    stdinIsTerminal: process.stdin.isTTY === true,
    color: options.color !== false && pc.isColorSupported && interactive,
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
  };
}

/** Colour helpers that do nothing when colours are off. */
export function paint(terminal: Terminal): Colors {
  return pc.createColors(terminal.color);
}
