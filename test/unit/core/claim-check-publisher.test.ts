import { describe, expect, it } from 'vitest';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import { claimCheckKey } from '../../../functions/core/claim-check.ts';
import { ClaimCheckPublisher } from '../../../functions/core/claim-check-publisher.ts';
import { ConfigurationError, PublishError } from '../../../functions/core/errors.ts';
import type { ClaimCheckLocation, ClaimCheckStore, EntryOutcome } from '../../../functions/core/ports.ts';
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
    super({ maxEntriesPerBatch: 10, maxBatchBytes: 100_000 });
  }

  override async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    this.requests.push(batch.map((event) => event.sequence_number));
    const sizes = batch.map((event) => this.entrySize(event));
    if (this.refuse === 'requests' && sizes.reduce((a, b) => a + b, 0) > this.busLimit) {
      throw new PublishError('refused', {
        awsError: 'ValidationException',
        tooLarge: true,
        retryable: false,
      });
    }
    const outcomes = await super.send(batch, signal);
    return outcomes.map((outcome, index) =>
      sizes[index]! > this.busLimit
        ? { ok: false, errorCode: 'ValidationException', errorMessage: 'Event size exceeds the limit' }
        : outcome,
    );
  }
}

function big(sequence: number, bytes: number): BankingEvent {
  return makeEvent(sequence, { data: { note: 'x'.repeat(bytes) } });
}

function setup(inner = new InMemoryPublisher({ maxEntriesPerBatch: 10, maxBatchBytes: 100_000 })) {
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
      { ok: false, errorCode: 'ClaimCheckFailed', errorMessage: 'S3 slow down' },
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
            inner: new InMemoryPublisher({ maxEntriesPerBatch: 10, maxBatchBytes: 1_000 }),
            store: new MemoryStore(),
            metrics: new RecordingMetrics(),
            logger: new RecordingLogger(),
          },
          { maxEntryBytes: 2_000 },
        ),
    ).toThrow(/claim-check threshold 2000 is above/);
  });

  it("names the inner bus's event group, for a pointer as for its event; none when the bus names none", () => {
    class GroupedBus extends InMemoryPublisher {
      eventGroup(event: BankingEvent): string {
        return `group-${event.sequence_number % 2}`;
      }
    }
    const grouped = setup(new GroupedBus({ maxEntriesPerBatch: 10, maxBatchBytes: 100_000 })).publisher;
    const ungrouped = setup().publisher;

    expect(grouped.eventGroup(makeEvent(3))).toBe('group-1');
    expect(grouped.eventGroup(big(4, 8_000))).toBe('group-0');
    expect(ungrouped.eventGroup(makeEvent(3))).toBeUndefined();
  });
});
