/**
 * The real clock in a process of its own, where nothing else keeps the event loop alive: a wait
 * must hold the process until it ends (under Lambda an empty loop ends the invocation), and a
 * cleared deadline must not hold it at all (a leftover timer would fire in a later invocation).
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const CLOCK = fileURLToPath(new URL('../../../functions/adapters/system-clock.ts', import.meta.url));

/** Runs `body` as an ES module with `systemClock` imported; returns its exit status and stdout. */
function runWithClock(body: string): { status: number | null; stdout: string } {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', `import { systemClock } from '${CLOCK}';\n${body}`],
    { encoding: 'utf8' },
  );
  return { status: result.status, stdout: result.stdout };
}

describe('systemClock in a process of its own', () => {
  it('keeps the process alive while a sleep is pending', () => {
    const run = runWithClock("await systemClock.sleep(50); console.log('after the sleep');");

    expect(run).toEqual({ status: 0, stdout: 'after the sleep\n' });
  });

  it('keeps the process alive until a deadline fires, and fires it with DEADLINE_EXCEEDED', () => {
    const run = runWithClock(`
      const { signal } = systemClock.deadline(Date.now() + 50);
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      console.log(signal.reason.code);
    `);

    expect(run).toEqual({ status: 0, stdout: 'DEADLINE_EXCEEDED\n' });
  });

  it('lets the process end at once when a far deadline is cleared', () => {
    // Were the timer left running, this would wait ten minutes and the test would time out.
    const run = runWithClock(`
      const deadline = systemClock.deadline(Date.now() + 600_000);
      deadline.clear();
      console.log(deadline.signal.aborted);
    `);

    expect(run).toEqual({ status: 0, stdout: 'false\n' });
  });

  it('ends a sleep early when its signal aborts', () => {
    const run = runWithClock(`
      const { signal } = systemClock.deadline(Date.now() + 20);
      const outcome = await systemClock.sleep(600_000, signal).then(() => 'slept', (error) => error.code);
      console.log(outcome);
    `);

    expect(run).toEqual({ status: 0, stdout: 'DEADLINE_EXCEEDED\n' });
  });
});
