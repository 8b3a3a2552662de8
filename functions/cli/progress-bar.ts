/**
 * Progress of a long job (replay, fast-forward, archive replay) on stderr: a cli-progress bar
 * with rate and ETA on a terminal, a plain line every few seconds otherwise (CI logs, pipes).
 */
import cliProgress from 'cli-progress';
import { formatDuration } from './output-format.ts';
import type { Terminal } from './terminal.ts';

export interface ProgressOptions {
  readonly label: string;
  /** What is counted, e.g. `events`. */
  readonly unit: string;
  /** `undefined` when the end is not known (a fast-forward): then only the count and rate show. */
  readonly total?: number;
  /** Show the rate per second (not for a percentage). @default true */
  readonly showRate?: boolean;
  /** Plain mode: at most one line per this many ms. @default 2_000 */
  readonly plainEveryMs?: number;
  readonly now?: () => number;
}

export interface Progress {
  update(value: number, note?: string): void;
  /** Ends the bar (or prints the last plain line) with a closing note. */
  stop(note?: string): void;
}

export function startProgress(terminal: Terminal, options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const rate = (value: number): string =>
    options.showRate === false ? '' : `${(value / Math.max(0.001, (now() - startedAt) / 1000)).toFixed(1)}/s`;
  if (terminal.interactive) {
    const rateSegment = options.showRate === false ? '' : ' | {rate}';
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format:
          options.total === undefined
            ? `${options.label} {value} ${options.unit}${rateSegment} | {note}`
            : `${options.label} [{bar}] {percentage}% | {value}/{total} ${options.unit}${rateSegment} | ETA {eta_formatted} | {note}`,
        hideCursor: true,
        etaBuffer: 50,
        noTTYOutput: false,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(options.total ?? 0, 0, { rate: rate(0), note: '' });
    let last = 0;
    return {
      update: (value, note = '') => {
        last = value;
        bar.update(value, { rate: rate(value), note });
      },
      stop: (note = '') => {
        bar.update(last, { rate: rate(last), note });
        bar.stop();
      },
    };
  }
  const every = options.plainEveryMs ?? 2_000;
  let lastLineAt = Number.NEGATIVE_INFINITY;
  let last = 0;
  const line = (value: number, note: string): string => {
    const elapsed = (now() - startedAt) / 1000;
    const total = options.total;
    const of = total === undefined ? '' : `/${total}`;
    const eta =
      total !== undefined && value > 0 && value < total
        ? ` · ETA ${formatDuration(((total - value) * elapsed * 1000) / value)}`
        : '';
    const speed = options.showRate === false ? '' : ` · ${rate(value)}`;
    return `${options.label} ${value}${of} ${options.unit}${speed}${eta}${note ? ` · ${note}` : ''}\n`;
  };
  return {
    update: (value, note = '') => {
      last = value;
      // The last value is left to stop(), which prints it with its closing note.
      if (now() - lastLineAt < every || (options.total !== undefined && value >= options.total)) return;
      lastLineAt = now();
      terminal.err(line(value, note));
    },
    stop: (note = '') => terminal.err(line(last, note)),
  };
}
