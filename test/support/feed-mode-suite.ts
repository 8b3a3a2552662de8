/**
 * The integration suite every feed mode passes, run on the shipped artifact under the Lambda
 * runtime's rules against the simulator and moto: the same events with the same Detail, live
 * delivery through dropped connections and a revoked token, resumption, and gap repair.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { RawEvent } from '../../functions/simulator/banking-simulator.ts';
import { AwsFaultProxy } from './aws-fault-proxy.ts';
import type { FeedModeCase } from './feed-modes.ts';
import { emfDocuments, type PollerScenario, summaryOf, usePollerScenarios } from './poller-lambda.ts';

/** Values a JSON round trip would change, and data with and without a `type` of its own. */
const TEXT_DATA: ReadonlyArray<{ readonly type: string; readonly dataText: string }> = [
  {
    type: 'TRANSACTION',
    dataText: '{"transaction_id":"tx-1","amount":9007199254740993,"status":"COMPLETE","type":"card"}',
  },
  {
    type: 'TRANSACTION',
    dataText:
      '{"transaction_id":"tx-2","network_fee":0.00040000,"note":"Caf\\u00e9 😀 \\"q\\"","type":"fee"}',
  },
  { type: 'TRANSACTION', dataText: '{"transaction_id":"tx-3","amount":12.50,"extra":{"list":[1.10]}}' },
  {
    type: 'ACCOUNT_STATUS',
    dataText:
      '{"account_id":"acc-1","blockchain_address":"0xabc","status":"OPEN","limit":9223372036854775807}',
  },
  { type: 'CARD_STATUS', dataText: '{"card_id":"card-1","status":"ACTIVE","type":"virtual"}' },
];

/**
 * The Detail the bank's poll text gives: its own text, `sequence_number` a number and `type` in
 * lower case (what both modes must publish).
 */
function expectedDetail(event: RawEvent, dataText: string = JSON.stringify(event.data)): string {
  const { data: _data, ...fields } = event;
  const head = JSON.stringify({ ...fields, type: event.type.toLowerCase() });
  return `${head.slice(0, -1)},"data":${dataText}}`;
}

/**
 * Registers the suite for `modes`. `only: 'delivery'` keeps the tests of reading and publishing
 * (for variants of a mode whose gap repair is the mode's own, already covered).
 */
export function defineFeedModeSuite(
  modes: readonly FeedModeCase[],
  firstSeed: number,
  options: { only?: 'delivery' } = {},
): void {
  const scenarios = usePollerScenarios(firstSeed);
  let proxy: AwsFaultProxy;

  beforeAll(async () => {
    proxy = await AwsFaultProxy.start(inject('motoEndpoint'));
  });

  afterAll(() => proxy?.close());

  /**
   * The Details PutEvents received for this scenario's program, sorted (batches are sent side by
   * side, so the order they arrive in is not the feed's).
   */
  function sentDetails(s: PollerScenario): string[] {
    const programId = s.simulator.programs[0]!.programId;
    return proxy.sentEntries
      .map((entry) => entry.Detail ?? '')
      .filter((detail) => detail.includes(`"program_id":"${programId}"`))
      .sort();
  }

  const sorted = (details: string[]) => [...details].sort();

  describe.each(modes)('$name', (mode) => {
    const start = (settings: { timeoutMs?: number; simulator?: object } = {}) =>
      scenarios.start({
        ...settings,
        simulator: { ...mode.simulator, ...settings.simulator },
        environment: { ...mode.environment, AWS_ENDPOINT_URL_EVENTBRIDGE: proxy.endpoint },
      });

    it('publishes a backlog once with the Detail the bank sent, then resumes after its checkpoint', async () => {
      const s = await start({ simulator: { unknownTypeRatio: 0.2 } });
      const generated = s.simulator.generate(40);
      const texts = TEXT_DATA.map(({ type, dataText }) => s.simulator.append({ type, dataText }));
      const expected = [
        ...generated.map((event) => expectedDetail(event)),
        ...texts.map((event, index) => expectedDetail(event, TEXT_DATA[index]!.dataText)),
      ];

      const first = summaryOf(await s.invoke());
      const later = s.simulator.generate(3);
      const second = summaryOf(await s.invoke());

      expect(first).toMatchObject({ status: 'completed', published: 45, checkpoint: 45 });
      expect(second).toMatchObject({ published: 3, checkpoint: later.at(-1)!.sequence_number });
      expect(sentDetails(s)).toEqual(sorted([...expected, ...later.map((event) => expectedDetail(event))]));
      expect(await s.deliveredIds()).toHaveLength(48);
    });

    it('delivers events created while it runs, through a dropped connection and a revoked token', async () => {
      const s = await start({ timeoutMs: 8_000 });
      const waves = [s.simulator.generate(5)];
      const run = s.invoke();
      const committed = (events: readonly RawEvent[]) =>
        vi.waitFor(async () => expect(await s.checkpoint()).toBe(events.at(-1)!.sequence_number), {
          timeout: 6_000,
          interval: 50,
        });
      await committed(waves[0]!);
      s.simulator.faults.dropConnections();
      waves.push(s.simulator.generate(5));
      await committed(waves[1]!);
      const tokensBefore = s.simulator.stats.tokensIssued;
      s.simulator.faults.revokeTokens();
      waves.push(s.simulator.generate(5));

      const summary = summaryOf(await run);

      const all = waves.flat();
      expect(summary).toMatchObject({ published: 15, checkpoint: all.at(-1)!.sequence_number });
      expect(s.simulator.stats.tokensIssued).toBeGreaterThan(tokensBefore);
      expect(s.simulator.requests.some((request) => request.status === 401)).toBe(true);
      expect(sentDetails(s)).toEqual(sorted(all.map((event) => expectedDetail(event))));
      expect((await s.deliveredIds()).sort()).toEqual(all.map((event) => event.id).sort());
    });

    if (options.only === 'delivery') return;
    it('quarantines events nested 100,000 deep between valid events, and goes past them all', async () => {
      const s = await start();
      // About 200 KB each. Before the fix the first overflowed the stack in its validation
      // preview, the second reached the bus, which refused the whole batch: every run, forever.
      const deepArray = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      const deepObjects = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      const [before] = s.simulator.generate(1);
      const arrayData = s.simulator.append({ type: 'TRANSACTION', data: {}, dataText: deepArray });
      const [middle] = s.simulator.generate(1);
      const objectData = s.simulator.append({ type: 'TRANSACTION', data: {}, dataText: deepObjects });
      const [after] = s.simulator.generate(1);

      const summary = summaryOf(await s.invoke());

      expect(summary).toMatchObject({ published: 5, checkpoint: after!.sequence_number });
      const programId = s.simulator.programs[0]!.programId;
      const sent = proxy.sentEntries.filter((entry) => entry.Detail?.includes(`"program_id":"${programId}"`));
      expect(
        sent.filter((entry) => entry.DetailType !== 'invalid_event').map((entry) => entry.Detail),
      ).toEqual(expect.arrayContaining([before!, middle!, after!].map((event) => expectedDetail(event))));
      const quarantined = sent
        .filter((entry) => entry.DetailType === 'invalid_event')
        .map((entry) => JSON.parse(entry.Detail!) as Record<string, unknown>)
        .sort((a, b) => (a.sequence_number as number) - (b.sequence_number as number));
      const bankText = (event: RawEvent, dataText: string) =>
        expectedDetail(event, dataText).replace('"type":"transaction"', '"type":"TRANSACTION"');
      expect(quarantined).toEqual([
        expect.objectContaining({
          id: arrayData.id,
          sequence_number: arrayData.sequence_number,
          error: expect.objectContaining({ code: 'EVENT_UNPUBLISHABLE' }),
          raw_is_text: true,
          raw: bankText(arrayData, deepArray),
        }),
        expect.objectContaining({
          id: objectData.id,
          sequence_number: objectData.sequence_number,
          error: expect.objectContaining({ code: 'EVENT_UNPUBLISHABLE' }),
          raw_is_text: true,
          raw: bankText(objectData, deepObjects),
        }),
      ]);
      expect(await s.checkpoint()).toBe(after!.sequence_number);
      expect(await s.deliveredBodies()).toHaveLength(5);
    });

    it('quarantines a type too long for a detail-type, and publishes an id reused at another number twice', async () => {
      const s = await start();
      const [first] = s.simulator.generate(1);
      const longType = s.simulator.append({ type: `T${'x'.repeat(200)}`, data: { note: 'long type' } });
      const reused = s.simulator.append({
        id: first!.id,
        type: 'TRANSACTION',
        data: { transaction_id: 'again' },
      });
      const [last] = s.simulator.generate(1);

      const invocation = await s.invoke();

      expect(summaryOf(invocation)).toMatchObject({ published: 4, checkpoint: last!.sequence_number });
      const programId = s.simulator.programs[0]!.programId;
      const sent = proxy.sentEntries.filter((entry) => entry.Detail?.includes(`"program_id":"${programId}"`));
      expect(sent.map((entry) => entry.DetailType!.length).every((length) => length <= 128)).toBe(true);
      expect(
        sent.filter((entry) => entry.DetailType !== 'invalid_event').map((entry) => entry.Detail),
      ).toEqual(expect.arrayContaining([first!, reused, last!].map((event) => expectedDetail(event))));
      const quarantined = sent.find((entry) => entry.DetailType === 'invalid_event');
      expect(JSON.parse(quarantined!.Detail!)).toMatchObject({
        id: longType.id,
        sequence_number: longType.sequence_number,
        error: { code: 'EVENT_UNPUBLISHABLE', field: expect.stringMatching(/\.type$/) },
      });
      expect(emfDocuments(invocation.stdout)).toContainEqual(
        expect.objectContaining({ DuplicateEventIds: 1 }),
      );
      expect(invocation.stdout + invocation.stderr).toContain(
        `"eventId":"${first!.id}","firstSequenceNumber":${first!.sequence_number},"sequenceNumber":${reused.sequence_number}`,
      );
      expect(JSON.parse((await s.item())!.open_gaps?.S ?? '[]')).toEqual([]);
      expect(await s.deliveredBodies()).toHaveLength(4);
    });

    it('repairs gaps: a skipped event the lookup finds is published with its page, one filled later is published late', async () => {
      const s = await start();
      const before = s.simulator.generate(3);
      // The feed skips 4 and 5; the service has 4 already (the lookup finds it), 5 only later.
      const unlisted = s.simulator.append(
        { type: 'TRANSACTION', data: { transaction_id: 'tx-u', type: 'intra' } },
        { unlisted: true },
      );
      const gap = s.simulator.skip(1);
      const after = s.simulator.generate(2);

      const first = await s.invoke();

      expect(summaryOf(first)).toMatchObject({ published: 6, checkpoint: after.at(-1)!.sequence_number });
      expect(sentDetails(s)).toEqual(
        sorted([...before, unlisted, ...after].map((event) => expectedDetail(event))),
      );
      expect(emfDocuments(first.stdout)).toContainEqual(
        expect.objectContaining({ SequenceGaps: 2, GapsRepaired: 1 }),
      );
      expect(JSON.parse((await s.item())!.open_gaps!.S!)).toEqual([
        { from: gap.from, to: gap.to, seenAt: expect.any(Number) },
      ]);

      const late = s.simulator.fill(
        gap.from,
        { type: 'ACCOUNT_STATUS', data: { status: 'OPEN' } },
        { announce: false },
      );
      const second = await s.invoke();

      expect(summaryOf(second)).toMatchObject({ published: 1, checkpoint: after.at(-1)!.sequence_number });
      expect(sentDetails(s)).toEqual(
        sorted([...before, unlisted, ...after, late].map((event) => expectedDetail(event))),
      );
      expect(emfDocuments(second.stdout)).toContainEqual(expect.objectContaining({ GapsRepaired: 1 }));
      expect(JSON.parse((await s.item())!.open_gaps!.S!)).toEqual([]);
      expect((await s.deliveredIds()).sort()).toEqual(
        [...before, unlisted, ...after, late].map((event) => event.id).sort(),
      );
    });
  });
}
