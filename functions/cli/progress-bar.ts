/**
 * Progress of a long job (replay, fast-forward, archive replay) on stderr: one line redrawn in
 * place on a terminal (log-update, as `run`'s live line), with a bar when the end is known; a
 * plain line every few seconds otherwise (CI logs, pipes).
 */
import { createLogUpdate } from 'log-update';
import { formatDuration } from './output-format.ts';
import type { Terminal } from './terminal.ts';

/** The bar's width in characters; the counts, rate and ETA follow it. */
const BAR_WIDTH = 30;
/** Updates closer together than this are drawn together. */
const REDRAW_MS = 100;
/** Redrawn this often between updates too, so the rate and ETA stay current while a page is slow. */
const REFRESH_MS = 1_000;

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
  /** Where the line is redrawn on a terminal. @default process.stderr */
  readonly stream?: NodeJS.WritableStream;
}

export interface Progress {
  update(value: number, note?: string): void;
  /** Ends the bar (or prints the last plain line) with a closing note. */
  stop(note?: string): void;
}

export function startProgress(terminal: Terminal, options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const { total } = options;
  /** `250/1000 events · 12.5/s · ETA 1 min · at 1250`: what both modes show after the label. */
  const details = (value: number, note: string): string => {
    const seconds = Math.max(0.001, (now() - startedAt) / 1000);
    const parts = [`${value}${total === undefined ? '' : `/${total}`} ${options.unit}`];
    if (options.showRate !== false) parts.push(`${(value / seconds).toFixed(1)}/s`);
    if (total !== undefined && value > 0 && value < total) {
      parts.push(`ETA ${formatDuration(((total - value) * seconds * 1000) / value)}`);
    }
    if (note) parts.push(note);
    return parts.join(' · ');
  };
  let last = 0;
  let lastNote = '';

  if (terminal.interactive) {
    const render = createLogUpdate(options.stream ?? process.stderr);
    const bar = (value: number): string => {
      if (total === undefined) return '';
      const done = total > 0 ? Math.min(1, Math.max(0, value / total)) : 1;
      const filled = Math.round(done * BAR_WIDTH);
      return `[${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}] ${Math.floor(done * 100)}% `;
    };
    let drawnAt = Number.NEGATIVE_INFINITY;
    const draw = (): void => {
      drawnAt = now();
      render(`${options.label} ${bar(last)}${details(last, lastNote)}`);
    };
    const refresh = setInterval(draw, REFRESH_MS);
    refresh.unref();
    draw();
    return {
      update: (value, note = '') => {
        last = value;
        lastNote = note;
        if (now() - drawnAt >= REDRAW_MS) draw();
      },
      stop: (note = '') => {
        clearInterval(refresh);
        lastNote = note;
        draw();
        render.done();
      },
    };
  }

  const every = options.plainEveryMs ?? 2_000;
  let lastLineAt = Number.NEGATIVE_INFINITY;
  const line = (value: number, note: string): string => `${options.label} ${details(value, note)}\n`;
  return {
    update: (value, note = '') => {
      last = value;
      // The last value is left to stop(), which prints it with its closing note.
      if (now() - lastLineAt < every || (total !== undefined && value >= total)) return;
      lastLineAt = now();
      terminal.err(line(value, note));
    },
    stop: (note = '') => terminal.err(line(last, note)),
  };
}
