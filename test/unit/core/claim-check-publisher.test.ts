import { describe, expect, it } from 'vitest';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import { claimCheckKey } from '../../../functions/core/claim-check.ts';
import { ClaimCheckPublisher } from '../../../functions/core/claim-check-publisher.ts';
import { ConfigurationError, PublishError } from '../../../functions/core/errors.ts';
import { EARLIER_ENTRY_FAILED } from '../../../functions/core/group-sequencer.ts';
import type {
  ClaimCheckLocation,
  ClaimCheckStore,
  EntryOutcome,
  EventPublisher,
} from '../../../functions/core/ports.ts';
import { PublishPipeline } from '../../../functions/core/publish-pipeline.ts';
import { FakeClock } from '../../support/fake-clock.ts';
import { groupOf } from '../../support/fifo-bus.ts';
import {
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../../support/in-memory-ports.ts';

class MemoryStore implements ClaimCheckStore {
  readonly objects = new Map<string, string>();
  failures: unknown[] = [];

  async put(key: string, body: string): Promise<ClaimCheckLocation> {
    const failure = this.failures.shift();
    if (failure !== undefined) throw failure;
    this.objects.set(key, body);
    return { bucket: 'claims', key };
  }
}

/** A bus that refuses, for its size, any entry over `busLimit` bytes, or a whole request over it. */
class SizeLimitedBus extends InMemoryPublisher {
  readonly requests: number[][] = [];
  constructor(
    private readonly busLimit: number,
    private readonly refuse: 'entries' | 'requests',
  ) {
    super({ maxEntriesPerBatch: 10, maxBatchBytes: 100_000, maxEntryBytes: 100_000 });
  }

  override async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    this.requests.push(batch.map((event) => event.sequence_number));
    const sizes = batch.map((event) => this.entrySize(event));
    if (this.refuse === 'requests' && sizes.reduce((a, b) => a + b, 0) > this.busLimit) {
      throw new PublishError('refused', {}, undefined, 'too-large');
    }
    const outcomes = await super.send(batch, signal);
    return outcomes.map((outcome, index) =>
      sizes[index]! > this.busLimit
        ? ({
            ok: false,
            failure: 'too-large',
            errorCode: 'ValidationException',
            errorMessage: 'Event size exceeds the limit',
          } as const)
        : outcome,
    );
  }
}

function big(sequence: number, bytes: number, group?: string): BankingEvent {
  return makeEvent(sequence, {
    data: { note: 'x'.repeat(bytes), ...(group === undefined ? {} : { group }) },
  });
}

/** An event of a group (`groupOf`). */
function inGroup(sequence: number, group: string): BankingEvent {
  return makeEvent(sequence, { data: { group } });
}

/** The bus, naming event groups as a custom bus's publisher does. */
function withGroups<T extends EventPublisher>(bus: T): T {
  return Object.assign(bus, { eventGroup: groupOf });
}

function setup(
  inner = new InMemoryPublisher({ maxEntriesPerBatch: 10, maxBatchBytes: 100_000, maxEntryBytes: 100_000 }),
) {
  const store = new MemoryStore();
  const metrics = new RecordingMetrics();
  const publisher = new ClaimCheckPublisher(
    { inner, store, metrics, logger: new RecordingLogger() },
    { maxEntryBytes: 5_000 },
  );
  return { inner, store, metrics, publisher };
}

const live = () => new AbortController().signal;

describe('ClaimCheckPublisher', () => {
  it('stores an event over the limit and sends a pointer with its type, id and sequence number', async () => {
    const { inner, store, metrics, publisher } = setup();
    const large = big(2, 8_000);

    const outcomes = await publisher.send([makeEvent(1), large, makeEvent(3)], live());

    expect(outcomes).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(store.objects.get(claimCheckKey(large))).toBe(large.detail);
    const pointer = inner.accepted[1]!;
    expect(pointer.type).toBe(large.type);
    expect(JSON.parse(pointer.detail)).toEqual({
      id: large.id,
      program_id: large.program_id,
      sequence_number: 2,
      created_dt: large.created_dt,
      type: large.type,
      claim_check: {
        bucket: 'claims',
        key: claimCheckKey(large),
        size_bytes: Buffer.byteLength(large.detail),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      },
    });
    expect(inner.accepted.map((event) => event.detail === large.detail)).toEqual([false, false, false]);
    expect(metrics.sum('ClaimChecks')).toBe(1);
  });

  it('sizes an oversized event as its pointer, so batches are planned on what is sent', () => {
    const { publisher } = setup();

    expect(publisher.entrySize(big(1, 50_000))).toBeLessThan(1_000);
    expect(publisher.entrySize(makeEvent(2))).toBe(Buffer.byteLength(makeEvent(2).detail));
  });

  it('claim-checks an entry the bus refused for its size, and only that one', async () => {
    const inner = new SizeLimitedBus(3_000, 'entries');
    const { store, publisher } = setup(inner);
    const large = big(2, 4_000);

    const outcomes = await publisher.send([makeEvent(1), large], live());

    expect(outcomes).toEqual([{ ok: true }, { ok: true }]);
    expect([...store.objects.keys()]).toEqual([claimCheckKey(large)]);
    expect(inner.requests).toEqual([[1, 2], [2]]);
  });

  it('finds the entry of a request refused for its size by sending them one at a time', async () => {
    const inner = new SizeLimitedBus(3_000, 'requests');
    const { store, publisher } = setup(inner);
    const large = big(2, 4_000);

    const outcomes = await publisher.send([makeEvent(1), large, makeEvent(3)], live());

    expect(outcomes).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect([...store.objects.keys()]).toEqual([claimCheckKey(large)]);
    expect(inner.accepted.map((event) => event.sequence_number)).toEqual([1, 2, 3]);
  });

  it('reports a failed store as that entry failing, for the pipeline to retry, and stores it once it works', async () => {
    const { inner, store, publisher } = setup();
    store.failures.push(new PublishError('S3 slow down', { retryable: true }));
    const large = big(2, 8_000);

    const first = await publisher.send([makeEvent(1), large], live());
    const again = await publisher.send([large], live());

    expect(first).toEqual([
      { ok: true },
      { ok: false, failure: 'transient', errorCode: 'ClaimCheckFailed', errorMessage: 'S3 slow down' },
    ]);
    expect(again).toEqual([{ ok: true }]);
    expect(inner.accepted.map((event) => event.sequence_number)).toEqual([1, 2]);
  });

  it('fails the request when the bucket cannot be used at all', async () => {
    const { store, publisher } = setup();
    store.failures.push(new ConfigurationError('The claim-check bucket b does not exist'));

    await expect(publisher.send([big(1, 8_000)], live())).rejects.toBeInstanceOf(ConfigurationError);
  });

  it('refuses a threshold above what one request may carry', () => {
    expect(
      () =>
        new ClaimCheckPublisher(
          {
            inner: new InMemoryPublisher({
              maxEntriesPerBatch: 10,
              maxBatchBytes: 1_000,
              maxEntryBytes: 1_000,
            }),
            store: new MemoryStore(),
            metrics: new RecordingMetrics(),
            logger: new RecordingLogger(),
          },
          { maxEntryBytes: 2_000 },
        ),
    ).toThrow(/claim-check threshold 2000 is above/);
  });

  describe('with event groups', () => {
    it("forwards the bus's event group, and names none for a bus without groups", () => {
      const grouped = setup(
        withGroups(
          new InMemoryPublisher({ maxEntriesPerBatch: 10, maxBatchBytes: 100_000, maxEntryBytes: 100_000 }),
        ),
      );

      expect(grouped.publisher.eventGroup?.(big(1, 8_000, 'A'))).toBe('A');
      expect(setup().publisher.eventGroup).toBeUndefined();
    });

    it('does not send the entries after one of their group whose store failed', async () => {
      const { inner, store, publisher } = setup(
        withGroups(
          new InMemoryPublisher({ maxEntriesPerBatch: 10, maxBatchBytes: 100_000, maxEntryBytes: 100_000 }),
        ),
      );
      store.failures.push(new PublishError('S3 slow down', { retryable: true }));

      const outcomes = await publisher.send(
        [inGroup(1, 'A'), big(2, 8_000, 'A'), inGroup(3, 'A'), inGroup(4, 'B')],
        live(),
      );

      expect(outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.errorCode))).toEqual([
        'ok',
        'ClaimCheckFailed',
        EARLIER_ENTRY_FAILED,
        'ok',
      ]);
      expect(inner.batches).toEqual([[1, 4]]);
    });

    it('sends no entry of a group after one that failed when a refused request is sent one entry at a time', async () => {
      const inner = withGroups(new SizeLimitedBus(3_000, 'requests'));
      inner.rejectSequence(1, 1);
      const { publisher } = setup(inner);

      const outcomes = await publisher.send([inGroup(1, 'A'), big(2, 4_000, 'B'), inGroup(3, 'A')], live());

      expect(outcomes.map((outcome) => (outcome.ok ? 'ok' : outcome.errorCode))).toEqual([
        'InternalFailure',
        'ok',
        EARLIER_ENTRY_FAILED,
      ]);
      expect(inner.requests.filter((request) => request.includes(3))).toEqual([[1, 2, 3]]);
    });

    it('reports an entry refused for its size behind an accepted later one of its group, so the pipeline counts the break, and claim-checks it on the resend', async () => {
      const inner = withGroups(new SizeLimitedBus(3_000, 'entries'));
      const { store, publisher } = setup(inner);
      const clock = new FakeClock();
      const metrics = new RecordingMetrics();
      const pipeline = new PublishPipeline({ publisher, clock, metrics, logger: new RecordingLogger() });
      const large = big(2, 4_000, 'A');

      const accepted: number[] = [];

      const report = await pipeline.publish([inGroup(1, 'A'), large, inGroup(3, 'A')], {
        deadline: clock.now() + 60_000,
        signal: live(),
        onAccepted: (event) => accepted.push(event.sequence_number),
      });

      // The bus refuses 2 for its size: its resend, a pointer (the bus takes it), goes after 3.
      expect(report.failed).toEqual([]);
      expect(inner.requests).toEqual([[1, 2, 3], [2]]);
      expect(accepted).toEqual([1, 3, 2]);
      expect([...store.objects.keys()]).toEqual([claimCheckKey(large)]);
      expect(metrics.sum('OrderBroken')).toBe(1);
    });
  });
});
