/**
 * `run`'s view of itself on stderr: one line redrawn in place on a terminal (log-update), or a
 * plain line every few seconds when stderr is a pipe or a file.
 */
import { Writable } from 'node:stream';
import { createLogUpdate } from 'log-update';
import { ProgressReporter } from './progress-reporter.ts';
import type { Terminal } from './terminal.ts';

/** How often the in-place line is redrawn on a terminal. */
const REDRAW_MS = 500;

export interface LiveStatusLine {
  /**
   * The stream events should be written to: on a terminal whose stdout is the same screen, each
   * write first lifts the status line and puts it back after, so lines never interleave.
   */
  readonly events: Writable;
  /** Prints a message line above the status line (a plain line when not on a terminal). */
  note(text: string): void;
  /** Stops redrawing and prints the final line. */
  stop(): void;
}

/** Where events and the line go: the process's own streams but in tests. */
export interface LiveStatusStreams {
  readonly stdout: Writable;
  readonly stderr: NodeJS.WritableStream;
}

export function startLiveStatusLine(
  terminal: Terminal,
  progress: ProgressReporter,
  plainEveryMs: number,
  streams: LiveStatusStreams = { stdout: process.stdout, stderr: process.stderr },
): LiveStatusLine {
  const { stdout } = streams;
  if (!terminal.interactive) {
    const timer = setInterval(
      () => terminal.err(`${ProgressReporter.format(progress.snapshot())}\n`),
      plainEveryMs,
    );
    timer.unref();
    return {
      events: stdout,
      note: (text) => terminal.err(text),
      stop: () => {
        clearInterval(timer);
        terminal.err(`${ProgressReporter.format(progress.snapshot())}\n`);
      },
    };
  }
  const line = createLogUpdate(streams.stderr);
  let current = '';
  const redraw = (): void => {
    current = ProgressReporter.format(progress.snapshot());
    line(current);
  };
  const timer = setInterval(redraw, REDRAW_MS);
  timer.unref();
  redraw();
  const events = terminal.stdoutIsTerminal ? aboveTheLine(stdout, line, () => current) : stdout;
  return {
    events,
    note: (text) => {
      line.clear();
      terminal.err(text);
      line(current);
    },
    stop: () => {
      clearInterval(timer);
      redraw();
      line.done();
    },
  };
}

/**
 * stdout for the events, each write drawn above the live line. A failed write (the terminal closed:
 * EIO) reaches the writer through its callback, so nothing unprinted counts as published; the
 * stream's own 'error' event is heard here, or it would end the process before its clean-up.
 */
function aboveTheLine(
  stdout: Writable,
  line: ReturnType<typeof createLogUpdate>,
  current: () => string,
): Writable {
  const events = new Writable({
    write(chunk: Buffer, _encoding, done) {
      line.clear();
      stdout.write(chunk, (error) => {
        line(current());
        done(error);
      });
    },
  });
  events.on('error', () => {});
  return events;
}
