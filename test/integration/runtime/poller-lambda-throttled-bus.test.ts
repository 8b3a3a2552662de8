/**
 * The shipped function under the Lambda runtime rules, against a bus that throttles every
 * PutEvents as a whole, on either bus: the classic one through the fault proxy in front of moto,
 * the Custom Event Bus through its stand-in's own throttling. The run keeps resending, with
 * backoff, well past the pipeline's 5 attempts, until the budget's reserve; then it ends within the
 * invocation with the checkpoint where it was. Once the bus lets requests through again, the next
 * run publishes every event: nothing is lost.
 */
import { cbor } from '@smithy/core/cbor';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AwsFaultProxy } from '../../support/aws-fault-proxy.ts';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(3_200);
/** Long enough that 6 attempts always fit before the deadline: 5 waits add up to 3.1 s at most. */
const TIMEOUT_MS = 10_000;
/** The reason the pipeline logs when the budget, not the attempts, ended the resending. */
const THROTTLED_TO_THE_RESERVE = 'throttled until the budget ran out';

describe('a classic bus that throttles every PutEvents', () => {
  let proxy: AwsFaultProxy;

  beforeAll(async () => {
    proxy = await AwsFaultProxy.start(inject('motoEndpoint'));
  });

  afterAll(() => proxy?.close());

  it('is retried until the reserve, ends in budget with the checkpoint held, and loses nothing', async () => {
    const s = await scenarios.start({
      timeoutMs: TIMEOUT_MS,
      environment: { AWS_ENDPOINT_URL_EVENTBRIDGE: proxy.endpoint },
    });
    const events = s.simulator.generate(5);
    proxy.refuseRequests(10_000, { status: 400, errorType: 'ThrottlingException' });
    const refusedBefore = proxy.putEvents.refusedRequests;

    const throttled = await s.invoke();
    const refused = proxy.putEvents.refusedRequests - refusedBefore;
    proxy.clearFaults();

    expect(throttled.outcome).toMatchObject({ kind: 'error', errorType: 'PublishError' });
    expect(refused).toBeGreaterThan(5);
    expect(throttled.stdout + throttled.stderr).toContain(THROTTLED_TO_THE_RESERVE);
    expect(await s.checkpoint()).toBeNull();
    expect(await s.deliveredIds()).toEqual([]);

    const next = await s.invoke();

    expect(summaryOf(next)).toMatchObject({ published: 5, checkpoint: events.at(-1)!.sequence_number });
    expect((await s.deliveredIds()).sort()).toEqual(events.map((event) => event.id).sort());
  });
});

describe('a Custom Event Bus that throttles every PutEvents', () => {
  let bus: CustomBus;

  beforeAll(async () => {
    bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), seed: 32 });
  });

  afterAll(async () => {
    await bus?.close();
  });

  /** PutEvents answers from `from` on: how many were refused (429), and the entries published. */
  function putEventsFrom(from: number): { throttled: number; published: string[] } {
    const answers = bus.exchanges.slice(from).filter((exchange) => exchange.operation === 'PutEvents');
    return {
      throttled: answers.filter((exchange) => exchange.status === 429).length,
      published: answers
        .filter((exchange) => exchange.status === 200)
        .flatMap((exchange) =>
          (cbor.deserialize(exchange.responseBody) as { Entries: { SuccessCode?: string }[] }).Entries.map(
            (entry) => entry.SuccessCode ?? 'none',
          ),
        ),
    };
  }

  it('is retried until the reserve, ends in budget with the checkpoint held, and loses nothing', async () => {
    const busArn = bus.admin.createEventBus(scenarios.aws.uniqueName('throttled'));
    const s = await scenarios.start({
      timeoutMs: TIMEOUT_MS,
      environment: {
        EVENT_BUS_KIND: 'custom',
        EVENT_BUS_NAME: busArn,
        AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint,
      },
    });
    const events = s.simulator.generate(5);
    bus.faults.throttlePutEvents(10_000);
    const before = bus.exchanges.length;

    const throttled = await s.invoke();
    bus.faults.stopThrottling();
    const during = putEventsFrom(before);

    expect(throttled.outcome).toMatchObject({ kind: 'error', errorType: 'PublishError' });
    expect(during.throttled).toBeGreaterThan(5);
    expect(during.published).toEqual([]);
    expect(throttled.stdout + throttled.stderr).toContain(THROTTLED_TO_THE_RESERVE);
    expect(await s.checkpoint()).toBeNull();

    const after = bus.exchanges.length;
    const next = await s.invoke();

    expect(summaryOf(next)).toMatchObject({ published: 5, checkpoint: events.at(-1)!.sequence_number });
    expect(putEventsFrom(after).published).toEqual(events.map(() => 'PUBLISHED'));
  });
});
