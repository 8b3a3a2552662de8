/**
 * The shipped function on a Custom Event Bus (one event group for the whole feed, so one PutEvents
 * in flight at a time) whose every PutEvents is answered after 200 ms, with a backlog longer than
 * a run can publish, read in pages of 1,000 (10 requests each, so batches still wait for their
 * group's turn when the run must end): the run stops at its deadline as it would on the classic bus (no batch first
 * sent once it could no longer be answered in time), answers with `stopReason: 'deadline'`, logs
 * no error, and its checkpoint is the last event the bus confirmed. The next runs publish the
 * rest, each event once: no request was cut short, so nothing was published twice.
 *
 * Before, a batch waiting for its group's turn was still sent up to the hard deadline, and the run
 * ended in `DEADLINE_EXCEEDED` (an error for Lambda, the Errors alarm's count) on every such run.
 */
import { cbor } from '@smithy/core/cbor';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type CustomBus, startCustomBus } from '../../support/custom-bus/index.ts';
import { summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(3_300);
/** A run of 12 s: soft deadline at 9 s, no first send after 9.9 s, work abandoned at 10.8 s. */
const TIMEOUT_MS = 12_000;
/**
 * Well within the 900 ms between the last first send and the hard deadline, so that on a loaded
 * machine too the request in flight then is answered in time.
 */
const LATENCY_MS = 200;
/** 60 requests of 100 at 200 ms each, 12 s: more than one run publishes. */
const EVENTS = 6_000;

let bus: CustomBus;

beforeAll(async () => {
  bus = await startCustomBus({ motoEndpoint: inject('motoEndpoint'), seed: 33 });
});

afterAll(async () => {
  await bus?.close();
});

/** The event ids of the PutEvents entries the stand-in answered from `from` on, with their codes. */
function entriesFrom(from: number): { id: string; code: string }[] {
  return bus.exchanges
    .slice(from)
    .filter((exchange) => exchange.operation === 'PutEvents' && exchange.status === 200)
    .flatMap((exchange) => {
      const sent = exchange.input!.Entries as { Detail: string }[];
      const answered = (cbor.deserialize(exchange.responseBody) as { Entries: { SuccessCode?: string }[] })
        .Entries;
      return sent.map((entry, index) => ({
        id: (JSON.parse(entry.Detail) as { id: string }).id,
        code: answered[index]?.SuccessCode ?? 'none',
      }));
    });
}

describe('a slow Custom Event Bus at the end of a run', () => {
  it('stops at the deadline without an error, checkpoints what the bus confirmed, and the next runs publish the rest once', async () => {
    const busArn = bus.admin.createEventBus(scenarios.aws.uniqueName('slow'));
    const s = await scenarios.start({
      timeoutMs: TIMEOUT_MS,
      environment: {
        EVENT_BUS_KIND: 'custom',
        EVENT_BUS_NAME: busArn,
        EVENT_GROUP_BY: 'program',
        AWS_ENDPOINT_URL_EVENTBRIDGEV2: bus.endpoint,
        POLL_LIMIT: '1000',
      },
    });
    const events = s.simulator.generate(EVENTS);
    bus.faults.delayPutEvents(LATENCY_MS);
    const before = bus.exchanges.length;

    const first = await s.invoke();
    bus.faults.delayPutEvents(0);

    const summary = summaryOf(first);
    expect(summary).toMatchObject({ status: 'completed', stopReason: 'deadline' });
    expect(summary.published).toBeGreaterThan(0);
    expect(summary.published).toBeLessThan(EVENTS);
    // The checkpoint is the last event the bus confirmed, and the bus has exactly those: no request
    // was left unanswered (it would hold events the run did not count).
    expect(await s.checkpoint()).toBe(events[summary.published - 1]!.sequence_number);
    expect(summary.checkpoint).toBe(events[summary.published - 1]!.sequence_number);
    expect(entriesFrom(before)).toEqual(
      events.slice(0, summary.published).map((event) => ({ id: event.id, code: 'PUBLISHED' })),
    );
    const output = first.stdout + first.stderr;
    expect(output).not.toContain('"level":"ERROR"');
    expect(output).not.toContain('DEADLINE_EXCEEDED');
    expect(output).toContain('Events read were not sent before the end of the invocation');

    // The rest, on runs that keep up: every event published once, in order, none twice. A few runs
    // are enough; up to ten, so that a loaded machine that publishes less a run still gets there.
    let published = summary.published;
    for (let run = 0; run < 10 && published < EVENTS; run += 1)
      published += summaryOf(await s.invoke()).published;
    expect(published).toBe(EVENTS);
    expect(entriesFrom(before)).toEqual(events.map((event) => ({ id: event.id, code: 'PUBLISHED' })));
    expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number);
  });
});
