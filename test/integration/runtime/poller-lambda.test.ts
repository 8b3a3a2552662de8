/**
 * The function as deployed, run as Lambda runs it: the bundle `cdk deploy` ships, in its own
 * `node` process under the runtime-faithful invoker (an event loop that empties before the handler
 * settles fails the invocation), against the simulator over HTTP and moto. Every scenario has its
 * own simulator, secret, bus and checkpoint row, and its output is scanned for credentials.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { AwsFaultProxy } from '../../support/aws-fault-proxy.ts';
import { emfDocuments, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(100);
const scenario = scenarios.start;

describe('the deployed function under the Lambda runtime rules', () => {
  it('delivers a backlog exactly once, then a warm invocation publishes nothing new', async () => {
    const s = await scenario();
    const events = s.simulator.generate(30);
    events.push(s.simulator.append({ type: 'CARD_STATUS', data: { card_id: 'card-1', status: 'ACTIVE' } }));

    const cold = await s.invoke();
    const warm = await s.invoke();

    expect(cold.coldStart).toBe(true);
    expect(summaryOf(cold)).toMatchObject({ status: 'completed', published: 31 });
    expect(summaryOf(cold).checkpoint).toBe(events.at(-1)!.sequence_number);
    expect(warm.coldStart).toBe(false);
    expect(summaryOf(warm)).toMatchObject({ status: 'completed', published: 0 });
    expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number);
    expect((await s.deliveredIds()).sort()).toEqual(events.map((event) => event.id).sort());
    expect(emfDocuments(cold.stdout)).toContainEqual(
      expect.objectContaining({
        Program: s.program,
        EventsPublished: 31,
        CycleDurationMs: expect.any(Number),
      }),
    );
  });

  it('runs to its deadline against a feed that answers an empty poll at once', async () => {
    const s = await scenario({ simulator: { maxPollHoldMs: 0 } });
    s.simulator.generate(3);

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 3, stopReason: 'deadline', lagSeconds: 0 });
    // Empty answers are paced to one a second, so waiting between polls is what the run does most.
    expect(summaryOf(invocation).polls).toBeGreaterThanOrEqual(2);
  });

  it('ends a long poll at its deadline, releases the lease and answers', async () => {
    const s = await scenario({ simulator: { maxPollHoldMs: 60_000 } });

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 0, stopReason: 'deadline' });
    expect(s.simulator.stats.pollRequests).toBeGreaterThanOrEqual(1);
    const item = await s.item();
    expect(item?.lease_owner).toBeUndefined();
  });

  it('waits out a 429 with Retry-After and publishes everything', async () => {
    const s = await scenario();
    const events = s.simulator.generate(8);
    s.simulator.faults.failNext(1, 429, { path: '/events', retryAfter: '1' });

    const summary = summaryOf(await s.invoke());

    expect(summary).toMatchObject({ published: 8, pollErrors: 1 });
    expect(summary.checkpoint).toBe(events.at(-1)!.sequence_number);
  });

  it('rides out a burst of 503s and publishes everything', async () => {
    const s = await scenario();
    const events = s.simulator.generate(8);
    s.simulator.faults.failNext(3, 503, { path: '/events' });

    const summary = summaryOf(await s.invoke());

    expect(summary).toMatchObject({ published: 8, pollErrors: 3 });
    expect((await s.deliveredIds()).sort()).toEqual(events.map((event) => event.id).sort());
  });

  describe('with PutEvents faults injected in front of moto', () => {
    let proxy: AwsFaultProxy;

    beforeAll(async () => {
      proxy = await AwsFaultProxy.start(inject('motoEndpoint'));
    });

    afterAll(() => proxy?.close());

    it('resends the entries PutEvents rejected, with backoff, and delivers each event once', async () => {
      const s = await scenario({ environment: { AWS_ENDPOINT_URL_EVENTBRIDGE: proxy.endpoint } });
      const events = s.simulator.generate(25);
      proxy.rejectEntries(2, { every: 3 });

      const invocation = await s.invoke();

      expect(summaryOf(invocation)).toMatchObject({ published: 25 });
      expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number);
      expect((await s.deliveredIds()).sort()).toEqual(events.map((event) => event.id).sort());
      const [metrics] = emfDocuments(invocation.stdout);
      expect(metrics).toMatchObject({
        FailedEntries: expect.any(Number),
        PublishRetries: expect.any(Number),
      });
      expect(metrics!.FailedEntries).toBeGreaterThan(0);
    });

    it('retries a PutEvents throttled as a whole, request after request, with backoff', async () => {
      const s = await scenario({ environment: { AWS_ENDPOINT_URL_EVENTBRIDGE: proxy.endpoint } });
      const events = s.simulator.generate(5);
      // One attempt per request (PutEvents is signed by hand): the pipeline resends, with backoff.
      proxy.refuseRequests(3, { status: 400, errorType: 'ThrottlingException' });

      const summary = summaryOf(await s.invoke());

      expect(summary).toMatchObject({ published: 5 });
      expect((await s.deliveredIds()).sort()).toEqual(events.map((event) => event.id).sort());
    });
  });

  it('survives a token revoked in the middle of an invocation', async () => {
    const s = await scenario({ timeoutMs: 6_000 });
    const first = s.simulator.generate(5);
    const run = s.invoke();
    // Once the first page is committed the poller is long-polling with its cached token: revoke it.
    await vi.waitFor(async () => expect(await s.checkpoint()).toBe(first.at(-1)!.sequence_number), {
      timeout: 5_000,
      interval: 50,
    });
    const tokensBefore = s.simulator.stats.tokensIssued;
    s.simulator.faults.revokeTokens();
    const late = s.simulator.generate(7);

    const summary = summaryOf(await run);

    expect(summary.published).toBe(12);
    expect(summary.checkpoint).toBe(late.at(-1)!.sequence_number);
    expect(s.simulator.stats.tokensIssued).toBeGreaterThan(tokensBefore);
    expect(s.simulator.requests.some((r) => r.path === '/events' && r.status === 401)).toBe(true);
  });

  it('keeps the checkpoint on a malformed body, names the problem and still flushes its metrics', async () => {
    const s = await scenario();
    s.simulator.generate(2);
    s.simulator.faults.malformedNext(1, 'bad-schema');

    const failed = await s.invoke();
    const next = await s.invoke();

    expect(failed.outcome).toMatchObject({
      kind: 'error',
      errorType: 'PayloadValidationError',
      errorMessage: expect.stringMatching(/GET \/events \(HTTP 200\): .*must be/),
    });
    expect(emfDocuments(failed.stdout)).toContainEqual(
      expect.objectContaining({ Program: s.program, PollRequests: 1 }),
    );
    expect(summaryOf(next).published).toBe(2);
  });

  it('reads a page that came back not JSON again in the same run, and fails with PAGE_UNREADABLE when it stays so', async () => {
    const s = await scenario({ environment: { FEED_MODE: 'poll' } });
    const events = s.simulator.generate(2);
    s.simulator.faults.malformedNext(1, 'not-json');

    const recovered = await s.invoke();
    s.simulator.generate(1);
    s.simulator.faults.malformedNext(10_000, 'not-json');
    const failed = await s.invoke();

    expect(summaryOf(recovered)).toMatchObject({ published: 2, checkpoint: events.at(-1)!.sequence_number });
    expect(recovered.stdout + recovered.stderr).toContain('A page of the feed could not be read; retrying');
    expect(failed.outcome).toMatchObject({
      kind: 'error',
      errorType: 'PageUnreadableError',
      errorMessage: 'GET /events (HTTP 200): body is not JSON',
    });
    expect(failed.stdout + failed.stderr).not.toContain('failed before a response');
    expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number);
  });

  it('does not take gateway timeouts for a quiet feed: no lag 0, no healthy cycle', async () => {
    const s = await scenario();
    s.simulator.faults.failNext(1_000, 504, { path: '/events' });

    const invocation = await s.invoke();

    const summary = summaryOf(invocation);
    expect(summary.pollTimeouts).toBeGreaterThan(0);
    expect(summary.pollTimeouts).toBe(summary.polls);
    expect(summary.lagSeconds).toBeNull();
    const [metrics] = emfDocuments(invocation.stdout);
    expect(metrics).toMatchObject({ PollTimeouts: summary.pollTimeouts });
    expect(metrics).not.toHaveProperty('CycleDurationMs');
    expect(metrics).not.toHaveProperty('LagSeconds');
  });

  it('publishes the first page once, then fails with FEED_CURSOR_IGNORED when the cursor is ignored', async () => {
    const s = await scenario({ environment: { POLL_LIMIT: '5', POLL_CURSOR_PARAM: 'after' } });
    const events = s.simulator.generate(12, { type: 'transaction' });

    const first = await s.invoke();
    const second = await s.invoke();

    expect(summaryOf(first)).toMatchObject({ published: 5, checkpoint: events[4]!.sequence_number });
    expect(summaryOf(first).pollErrors).toBeGreaterThan(0);
    expect(second.outcome).toMatchObject({
      kind: 'error',
      errorMessage: expect.stringMatching(/POLL_CURSOR_PARAM/),
    });
    expect(await s.deliveredIds()).toEqual(events.slice(0, 5).map((event) => event.id));
  });

  it('without a claim-check bucket, publishes what comes before an event over MAX_EVENT_ENTRY_BYTES, then stops at it on every run', async () => {
    const s = await scenario({ environment: { MAX_EVENT_ENTRY_BYTES: '65536' } });
    const before = s.simulator.generate(3, { type: 'transaction' });
    const huge = s.simulator.append({
      type: 'TRANSACTION',
      data: { transaction_id: 'tx-huge', note: 'x'.repeat(100 * 1024) },
    });
    s.simulator.generate(2, { type: 'transaction' });

    const first = await s.invoke();
    const again = await s.invoke();

    expect(first.outcome).toMatchObject({
      kind: 'error',
      errorType: 'EventTooLargeError',
      errorMessage: expect.stringContaining(`Event ${huge.id} (sequence ${huge.sequence_number})`),
    });
    expect(again.outcome).toMatchObject({ kind: 'error', errorType: 'EventTooLargeError' });
    expect(await s.checkpoint()).toBe(before.at(-1)!.sequence_number);
    expect(await s.deliveredIds()).toEqual(before.map((event) => event.id));
  });
});
