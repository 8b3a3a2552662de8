/**
 * The progress of a long job as a person sees it: on a terminal (a screen that applies the
 * redraws), one line redrawn in place; in a log, plain lines at a bounded rate. A fake clock for
 * the rate and ETA, fake timers for the refresh.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startProgress } from '../../../functions/cli/progress-bar.ts';
import type { Terminal } from '../../../functions/cli/terminal.ts';
import { TerminalScreen } from '../../support/terminal-screen.ts';

function terminal(interactive: boolean, err: (text: string) => void): Terminal {
  return {
    interactive,
    stdoutIsTerminal: interactive,
    stdinIsTerminal: false,
    color: false,
    out: () => {},
    err,
  };
}

const bar = (filled: number) => `[${'█'.repeat(filled)}${'░'.repeat(30 - filled)}]`;

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('progress on a terminal', () => {
  let now: number;
  let screen: TerminalScreen;
  const onScreen = (options: { total?: number; showRate?: boolean } = {}) =>
    startProgress(
      terminal(true, (text) => screen.write(text)),
      { label: 'replay', unit: 'sequence numbers', now: () => now, stream: screen.stream(), ...options },
    );

  beforeEach(() => {
    now = 0;
    screen = new TerminalScreen();
  });

  it('redraws one line in place: bar, percentage, counts, rate and ETA; the last stays with its note', () => {
    const progress = onScreen({ total: 200 });
    const atStart = screen.lines();
    now = 10_000;
    progress.update(50, 'at 1050');
    const halfway = screen.lines();
    now = 20_000;
    progress.update(200, 'at 1200');
    progress.stop('done');
    screen.write('next line\n');

    expect(atStart).toEqual([`replay ${bar(0)} 0% 0/200 sequence numbers · 0.0/s`]);
    expect(halfway).toEqual([`replay ${bar(8)} 25% 50/200 sequence numbers · 5.0/s · ETA 30 s · at 1050`]);
    expect(screen.lines()).toEqual([
      `replay ${bar(30)} 100% 200/200 sequence numbers · 10.0/s · done`,
      'next line',
    ]);
  });

  it('draws updates less than 100 ms apart together, and keeps the rate current between updates', () => {
    const progress = onScreen({ total: 100 });
    now = 1_000;
    progress.update(10);
    now = 1_050;
    progress.update(20);
    const throttled = screen.lines();
    now = 2_000;
    vi.advanceTimersByTime(1_000);

    expect(throttled).toEqual([`replay ${bar(3)} 10% 10/100 sequence numbers · 10.0/s · ETA 9 s`]);
    expect(screen.lines()).toEqual([`replay ${bar(6)} 20% 20/100 sequence numbers · 10.0/s · ETA 8 s`]);
  });

  it('counts without a bar when the end is not known', () => {
    const progress = onScreen();
    now = 10_000;
    progress.update(250, 'at 300');
    progress.stop('landed at 300');

    expect(screen.lines()).toEqual(['replay 250 sequence numbers · 25.0/s · landed at 300']);
  });

  it('leaves the rate out when asked (a percentage)', () => {
    const progress = onScreen({ total: 100, showRate: false });
    now = 10_000;
    progress.update(40, 'running');

    expect(screen.lines()).toEqual([`replay ${bar(12)} 40% 40/100 sequence numbers · ETA 15 s · running`]);
  });
});

describe('progress in a log (stderr not a terminal)', () => {
  it('prints a plain line at most every plainEveryMs, and the last value with its note on stop', () => {
    const lines: string[] = [];
    let now = 0;
    const progress = startProgress(
      terminal(false, (text) => lines.push(text)),
      { label: 'replay', unit: 'sequence numbers', total: 100, now: () => now },
    );

    now = 1_000;
    progress.update(10, 'at 10');
    now = 1_500;
    progress.update(20, 'at 20');
    now = 3_000;
    progress.update(50, 'at 50');
    now = 5_000;
    progress.update(100, 'at 100');
    progress.stop('done');

    expect(lines).toEqual([
      'replay 10/100 sequence numbers · 10.0/s · ETA 9 s · at 10\n',
      'replay 50/100 sequence numbers · 16.7/s · ETA 3 s · at 50\n',
      'replay 100/100 sequence numbers · 20.0/s · done\n',
    ]);
  });
});
