/**
 * A program's first runs on the shipped artifact, under the runtime harness: the start position is
 * applied once and recorded before any later event is read, so a first run that fails or is killed
 * at any point leaves the next runs publishing every event created after it started.
 */
import { describe, it, type TestContext } from 'vitest';
import { FaultRun, useFaultEnvironment } from '../../support/fault-run.ts';

const environment = useFaultEnvironment();
const LATEST = { START_POSITION: 'latest' };

// Side by side: each test has its own simulator, proxies, program and function process, and most of
// its time is spent waiting for a dead first run's lease to expire.
describe("START_POSITION=latest at a program's first runs", () => {
  /** This test's run, closed when the test ends. */
  async function start(
    context: TestContext,
    seed: number,
    events = 0,
    variables: Record<string, string> = {},
  ): Promise<FaultRun> {
    const run = await FaultRun.start(environment, { seed, events, environment: { ...LATEST, ...variables } });
    context.onTestFinished(() => run.close());
    return run;
  }

  /** Creates `count` events the first time the function polls: after its first run started. */
  function createOnFirstPoll(run: FaultRun, count: number): void {
    let created = false;
    run.banking.onRequest((path) => {
      if (path !== '/events' || created) return;
      created = true;
      run.simulator.generate(count);
    });
  }

  it.concurrent('on an empty feed, a first run refused by the bus: the next runs publish every event created since', async (context) => {
    const { expect } = context;
    const run = await start(context, 1_601);
    createOnFirstPoll(run, 20);
    run.aws.refuseRequests(1_000, { errorType: 'AccessDeniedException', message: 'not yet allowed' });

    const refused = await run.invoke();
    run.aws.clearFaults();
    await run.untilCaughtUp();
    const report = await run.verify();

    expect(refused.outcome).toMatchObject({ kind: 'error' });
    expect(run.simulator.events()).toHaveLength(20);
    expect(report.lost).toEqual([]);
    expect(report.violations).toEqual([]);
    expect(new Set(report.delivered.map((d) => d.detail.id))).toEqual(
      new Set(run.simulator.events().map((event) => event.id)),
    );
    expect(report.leaks).toEqual([]);
  });

  it.concurrent('on an empty feed, a first run killed mid-publish: the next runs publish every event created since', async (context) => {
    const { expect } = context;
    const run = await start(context, 1_602);
    createOnFirstPoll(run, 20);
    let killed = false;
    run.aws.intercept(async (call) => {
      if (call.operation !== 'PutEvents' || killed) return 'forward';
      killed = true;
      run.aws.mark('SIGKILL mid-publish');
      await run.lambda.kill('SIGKILL');
      return 'drop';
    });

    const crashed = await run.invoke();
    await run.untilCaughtUp();
    const report = await run.verify();

    expect(crashed.outcome).toMatchObject({ kind: 'crash', signal: 'SIGKILL' });
    expect(report.lost).toEqual([]);
    expect(report.violations).toEqual([]);
    expect(new Set(report.delivered.map((d) => d.detail.id))).toEqual(
      new Set(run.simulator.events().map((event) => event.id)),
    );
  });

  it.concurrent('a first run killed while fast-forwarding: the next lands where it would have, and publishes what came after', async (context) => {
    const { expect } = context;
    // The bank's clock is ours here: no allowance, so the events created just before are backlog.
    const run = await start(context, 1_603, 60, { START_CLOCK_SKEW_ALLOWANCE_SECONDS: '0' });
    const older = run.bankEvents();
    // The first run starts strictly after the older events were created (the clock moved on).
    const newest = Date.parse(run.simulator.events().at(-1)!.created_dt);
    await waitUntil(() => Date.now() > newest);
    createOnFirstPoll(run, 10);
    let polls = 0;
    run.banking.onRequest(async (path) => {
      // The second page of the walk (pages of 25): the process dies in the middle of it.
      if (path === '/events' && ++polls === 2) {
        run.aws.mark('SIGKILL while fast-forwarding');
        await run.lambda.kill('SIGKILL');
      }
    });

    const crashed = await run.invoke();
    await run.untilCaughtUp();
    const report = await run.verify({ passedOver: older });

    expect(crashed.outcome).toMatchObject({ kind: 'crash', signal: 'SIGKILL' });
    expect(report.lost).toEqual([]);
    expect(report.violations).toEqual([]);
    const delivered = new Set(report.delivered.map((d) => d.detail.id));
    const created = run.simulator.events().slice(60);
    expect(created).toHaveLength(10);
    expect(delivered).toEqual(new Set(created.map((event) => event.id)));
  });
});

/** Resolves once `condition` holds, checked every millisecond. */
async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 1));
}
