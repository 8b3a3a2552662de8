/**
 * What only stream mode has to prove, on the shipped artifact under the Lambda runtime's rules:
 * a token expiring mid-stream, the stream closed at the deadline, and a service without a stream.
 * The behaviour both modes share is in the feed-mode suite (feed-suite-*.test.ts).
 */
import { describe, expect, it, vi } from 'vitest';
import type { RawEvent } from '../../../functions/simulator/banking-simulator.ts';
import { type PollerScenario, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(700);
const STREAM = { FEED_MODE: 'stream' };

function streamRequests(s: PollerScenario): number {
  return s.simulator.requests.filter((request) => request.path === '/events/stream').length;
}

function committed(s: PollerScenario, events: readonly RawEvent[]) {
  return vi.waitFor(async () => expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number), {
    timeout: 6_000,
    interval: 50,
  });
}

describe('stream mode, as deployed', () => {
  it('reconnects with a new token when the service ends the stream at the token expiry', async () => {
    const s = await scenarios.start({
      simulator: { tokenLifetimeSeconds: 2 },
      environment: STREAM,
      timeoutMs: 9_000,
    });
    const first = s.simulator.generate(3);
    const run = s.invoke();
    await committed(s, first);
    // The simulator ends a stream when its token expires; the function opens another. (Counted
    // from the run's start: on a slow machine the first expiry may come before the commit.)
    await vi.waitFor(() => expect(streamRequests(s)).toBeGreaterThanOrEqual(2), {
      timeout: 6_000,
      interval: 50,
    });
    const second = s.simulator.generate(3);

    const summary = summaryOf(await run);

    expect(summary).toMatchObject({ published: 6, checkpoint: second.at(-1)!.sequence_number });
    expect(s.simulator.stats.tokensIssued).toBeGreaterThanOrEqual(2);
    expect((await s.deliveredIds()).sort()).toEqual([...first, ...second].map((event) => event.id).sort());
  });

  it('closes the stream at its deadline, releases the lease and answers', async () => {
    const s = await scenarios.start({ environment: STREAM });
    s.simulator.generate(2);

    const summary = summaryOf(await s.invoke());

    expect(summary).toMatchObject({ published: 2, stopReason: 'deadline', lagSeconds: 0 });
    await vi.waitFor(() => expect(s.simulator.stats.openStreams).toBe(0), { timeout: 5_000, interval: 20 });
    expect((await s.item())?.lease_owner).toBeUndefined();
  });

  it('reads pages instead when the service has no stream, and says so', async () => {
    const s = await scenarios.start({ environment: STREAM });
    const events = s.simulator.generate(4);
    s.simulator.faults.failNext(1_000, 404, { path: '/events/stream' });

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 4, checkpoint: events.at(-1)!.sequence_number });
    expect(streamRequests(s)).toBe(1);
    expect(invocation.stdout + invocation.stderr).toContain(
      'Reading pages instead of the stream for the rest of this run',
    );
    expect((await s.deliveredIds()).sort()).toEqual(events.map((event) => event.id).sort());
  });
});
