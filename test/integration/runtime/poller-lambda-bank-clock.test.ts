/**
 * `START_POSITION=latest` against a bank whose clock is off ours, on the shipped artifact under
 * the runtime harness, in both feed modes: the events created after a program's first run are all
 * published, whatever the bank stamps in their `created_dt`. Where the first run recorded what it
 * saw (the end of the feed, its landing) sequence numbers decide; where it could record nothing
 * (it died before reading, or the events came in the answer to its first poll) the skew
 * allowance does, 10 minutes by default.
 */
import { describe, it, type TestContext } from 'vitest';
import type { SimulatorOptions } from '../../../functions/simulator/banking-simulator.ts';
import { FaultRun, useFaultEnvironment } from '../../support/fault-run.ts';
import { POLL_MODES, STREAM_MODES } from '../../support/feed-modes.ts';

const environment = useFaultEnvironment();
const MODES = [POLL_MODES[0]!, STREAM_MODES[0]!];
const SECOND = 1_000;
const MINUTE = 60 * SECOND;

// The tests of a mode run side by side: each has its own simulator, proxies, program and function
// process, and most of their time is spent waiting (for a dead run's lease to expire, a held poll).
describe.each(MODES)("START_POSITION=latest, the bank's clock off ours ($name)", (mode) => {
  const firstSeed = mode === MODES[0] ? 2_401 : 2_451;

  /** This test's run, seeded `firstSeed + seed`, closed when the test ends. */
  async function start(
    context: TestContext,
    seed: number,
    clockOffsetMs: number,
    variables: Record<string, string> = {},
    simulator: SimulatorOptions = {},
  ): Promise<FaultRun> {
    const run = await FaultRun.start(environment, {
      seed: firstSeed + seed,
      events: 0,
      environment: { ...mode.environment, START_POSITION: 'latest', ...variables },
      simulator: { ...mode.simulator, ...simulator, clockOffsetMs },
    });
    context.onTestFinished(() => run.close());
    return run;
  }

  /** Creates `count` events at the function's `nth` request for events (`/events` or the stream). */
  function createAtFeedRequest(run: FaultRun, nth: number, count: number): void {
    let requests = 0;
    run.banking.onRequest((path) => {
      if (path !== '/events' && path !== '/events/stream') return;
      if (++requests === nth) run.simulator.generate(count);
    });
  }

  /** Every event the bank holds reached the bus, nothing broke the invariant, nothing leaked. */
  async function expectEveryEventDelivered({ expect }: TestContext, run: FaultRun): Promise<void> {
    await run.untilCaughtUp();
    const report = await run.verify();
    expect(run.simulator.events()).toHaveLength(20);
    expect(report.lost).toEqual([]);
    expect(report.violations).toEqual([]);
    expect(new Set(report.delivered.map((d) => d.detail.id))).toEqual(
      new Set(run.simulator.events().map((event) => event.id)),
    );
    expect(report.leaks).toEqual([]);
  }

  it.concurrent.for([
    { seed: 0, skew: 'behind by 30 s', clockOffsetMs: -30 * SECOND },
    { seed: 1, skew: 'ahead by 30 s', clockOffsetMs: 30 * SECOND },
    { seed: 2, skew: 'behind by 10 minutes', clockOffsetMs: -10 * MINUTE },
    { seed: 3, skew: 'ahead by 10 minutes', clockOffsetMs: 10 * MINUTE },
  ])(
    'empty feed at the first run, which the bus refuses, events created after it, the clock $skew: all published',
    async ({ seed, clockOffsetMs }, context) => {
      const { expect } = context;
      const run = await start(context, seed, clockOffsetMs);
      // The first request finds the feed empty; the events come with the next one.
      createAtFeedRequest(run, 2, 20);
      run.aws.refuseRequests(1_000, { errorType: 'AccessDeniedException', message: 'not yet allowed' });

      const refused = await run.invoke();
      run.aws.clearFaults();

      expect(refused.outcome).toMatchObject({ kind: 'error' });
      await expectEveryEventDelivered(context, run);
    },
  );

  it.concurrent('empty feed at the first run, which dies writing its landing, the clock behind by 10 minutes, beyond an allowance of 1: all published', async (context) => {
    const { expect } = context;
    const run = await start(context, 4, -10 * MINUTE, { START_CLOCK_SKEW_ALLOWANCE_SECONDS: '60' });
    let killed = false;
    run.aws.intercept(async (call) => {
      const update = (call.body as { UpdateExpression?: string } | undefined)?.UpdateExpression;
      if (call.operation !== 'UpdateItem' || !update?.includes('start_position') || killed) return 'forward';
      killed = true;
      // Created after the first run saw the end of the feed, stamped 10 minutes before it began.
      run.simulator.generate(20);
      run.aws.mark('SIGKILL writing the landing');
      await run.lambda.kill('SIGKILL');
      return 'drop';
    });

    const crashed = await run.invoke();

    expect(crashed.outcome).toMatchObject({ kind: 'crash', signal: 'SIGKILL' });
    expect(killed).toBe(true);
    await expectEveryEventDelivered(context, run);
  });

  it.concurrent.for<{ seed: number; skew: string; clockOffsetMs: number; variables: Record<string, string> }>(
    [
      { seed: 5, skew: 'behind by 30 s', clockOffsetMs: -30 * SECOND, variables: {} },
      { seed: 6, skew: 'behind by 10 minutes', clockOffsetMs: -10 * MINUTE, variables: {} },
      {
        seed: 7,
        skew: 'behind by 30 minutes, within an allowance of 40',
        clockOffsetMs: -30 * MINUTE,
        variables: { START_CLOCK_SKEW_ALLOWANCE_SECONDS: '2400' },
      },
    ],
  )(
    'a first run killed before it read the feed, events created meanwhile, the clock $skew: all published',
    async ({ seed, clockOffsetMs, variables }, context) => {
      const { expect } = context;
      const run = await start(context, seed, clockOffsetMs, variables);
      let killed = false;
      run.banking.onRequest(async (path) => {
        if ((path !== '/events' && path !== '/events/stream') || killed) return;
        killed = true;
        run.simulator.generate(20);
        run.aws.mark('SIGKILL before the first read');
        await run.lambda.kill('SIGKILL');
      });

      const crashed = await run.invoke();

      expect(crashed.outcome).toMatchObject({ kind: 'crash', signal: 'SIGKILL' });
      await expectEveryEventDelivered(context, run);
    },
  );

  it.concurrent.for([
    { seed: 8, skew: 'behind by 10 minutes', clockOffsetMs: -10 * MINUTE },
    { seed: 9, skew: 'ahead by 10 minutes', clockOffsetMs: 10 * MINUTE },
  ])(
    "events created while the first run's first poll of an empty feed is held, the clock $skew: all published",
    async ({ seed, clockOffsetMs }, context) => {
      // Polls of an empty feed hold, as the bank's do (up to a minute there).
      const run = await start(context, seed, clockOffsetMs, {}, { maxPollHoldMs: 2_000 });
      let created = false;
      run.banking.onRequest((path) => {
        if (path !== '/events' || created) return;
        created = true;
        // Once a poll is parked on the empty feed: it answers with these events.
        void untilHeld(run).then(() => run.simulator.generate(20));
      });

      await run.invoke();

      await expectEveryEventDelivered(context, run);
    },
  );
});

/** Resolves once the simulator holds a poll (for up to 2 s), checked every 10 ms. */
async function untilHeld(run: FaultRun): Promise<void> {
  while (run.simulator.stats.heldPolls === 0) await new Promise((resolve) => setTimeout(resolve, 10));
}
