/**
 * `run`'s live line as a person sees it: on a terminal (a screen that applies the redraws) the
 * status stays the last line, events and log lines appear above it, never through it; in a log,
 * a plain status line every few seconds. Fake timers drive the redraws.
 */
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startLiveStatusLine } from '../../../functions/cli/live-status-line.ts';
import { ProgressReporter } from '../../../functions/cli/progress-reporter.ts';
import type { Terminal } from '../../../functions/cli/terminal.ts';
import { TerminalScreen } from '../../support/terminal-screen.ts';

function terminal(
  options: { interactive: boolean; stdoutIsTerminal: boolean },
  err: (text: string) => void,
): Terminal {
  return { ...options, stdinIsTerminal: false, color: false, out: () => {}, err };
}

/** Writes as the publisher does, resolving once the stream took the chunk. */
function write(stream: Writable, text: string): Promise<void> {
  return new Promise((resolve, reject) => stream.write(text, (error) => (error ? reject(error) : resolve())));
}

/** A pipe or a file: keeps what is written. */
function collector(): Writable & { text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return Object.assign(stream, { text: () => chunks.join('') });
}

const status = (rate: string, published: number, checkpoint: number | 'none') =>
  `[poller] ${rate} events/s · published ${published} · checkpoint ${checkpoint} · lag n/a · retries 0`;

let now: number;
let progress: ProgressReporter;
beforeEach(() => {
  vi.useFakeTimers();
  now = 0;
  progress = new ProgressReporter(() => now);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('live status line on a terminal', () => {
  it('keeps the status as the last line: events and log lines go above it, and it is redrawn in place', async () => {
    const screen = new TerminalScreen();
    const live = startLiveStatusLine(
      terminal({ interactive: true, stdoutIsTerminal: true }, (text) => screen.write(text)),
      progress,
      5_000,
      { stdout: screen.stream(), stderr: screen.stream() },
    );
    const atStart = screen.lines();

    await write(live.events, '{"sequence_number":1}\n');
    live.note('{"level":"WARN","message":"a log line"}\n');
    progress.add('EventsPublished', 'Count', 2);
    progress.add('CheckpointSequence', 'None', 2);
    now = 1_000;
    vi.advanceTimersByTime(500);
    await write(live.events, '{"sequence_number":2}\n');
    const running = screen.lines();
    live.stop();
    screen.write('[poller] stopped at checkpoint 2\n');

    expect(atStart).toEqual([status('0.0', 0, 'none')]);
    expect(running).toEqual([
      '{"sequence_number":1}',
      '{"level":"WARN","message":"a log line"}',
      '{"sequence_number":2}',
      status('2.0', 2, 2),
    ]);
    expect(screen.lines()).toEqual([
      '{"sequence_number":1}',
      '{"level":"WARN","message":"a log line"}',
      '{"sequence_number":2}',
      status('0.0', 2, 2),
      '[poller] stopped at checkpoint 2',
    ]);
  });

  it('sends events straight to stdout when stdout is not the terminal (a pipe)', async () => {
    const screen = new TerminalScreen();
    const stdout = collector();
    const live = startLiveStatusLine(
      terminal({ interactive: true, stdoutIsTerminal: false }, (text) => screen.write(text)),
      progress,
      5_000,
      { stdout, stderr: screen.stream() },
    );

    await write(live.events, '{"sequence_number":1}\n');
    live.note('a log line\n');
    live.stop();

    expect(live.events).toBe(stdout);
    expect(stdout.text()).toBe('{"sequence_number":1}\n');
    expect(screen.lines()).toEqual(['a log line', status('0.0', 0, 'none')]);
  });
});

describe('live status line in a log (stderr not a terminal)', () => {
  it('prints a plain status line every plainEveryMs, log lines as they come, and a last one on stop', async () => {
    const err: string[] = [];
    const stdout = collector();
    const live = startLiveStatusLine(
      terminal({ interactive: false, stdoutIsTerminal: false }, (text) => err.push(text)),
      progress,
      5_000,
      { stdout, stderr: collector() },
    );

    await write(live.events, '{"sequence_number":1}\n');
    progress.add('EventsPublished', 'Count', 10);
    now = 5_000;
    vi.advanceTimersByTime(4_999);
    const beforeInterval = [...err];
    vi.advanceTimersByTime(1);
    live.note('a log line\n');
    live.stop();

    expect(stdout.text()).toBe('{"sequence_number":1}\n');
    expect(beforeInterval).toEqual([]);
    expect(err).toEqual([`${status('2.0', 10, 'none')}\n`, 'a log line\n', `${status('0.0', 10, 'none')}\n`]);
  });
});
