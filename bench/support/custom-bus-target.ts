/**
 * The Custom Event Bus for the benchmarks: the tests' stand-in (`test/support/custom-bus/`, RPC v2
 * CBOR, every request's SigV4 signature recomputed and its input checked against botocore's model)
 * behind a loopback proxy that delays each direction by half the publish latency, so a PutEvents
 * answer comes `latencyMs` after it was sent, as with the classic bus's stand-in. Records when each
 * sequence number was first accepted (PUBLISHED, or DEDUPLICATED: the bus has it), with the same
 * members the classic stand-in (`put-events-standin.ts`) offers the drain and no-loss checks.
 *
 * Both run in the benchmark's process, not the handler's: their CPU is not the function's.
 */
import { type CustomBus, startCustomBus } from '../../test/support/custom-bus/index.ts';
import { LatencyProxy } from './latency-proxy.ts';
import type { AcceptedEvent } from './put-events-standin.ts';

export interface CustomBusTargetOptions {
  /** Where the stand-in's subscribers would deliver (none are made here). */
  readonly motoEndpoint: string;
  /** Keys whose signatures the stand-in accepts. */
  readonly credentials: { readonly accessKeyId: string; readonly secretAccessKey: string };
  readonly region: string;
  /** Time from a request leaving to its answer arriving, split evenly between the two ways. @default 15 */
  readonly latencyMs?: number;
}

const SEQUENCE = /"sequence_number":(\d+)/;
const CREATED = /"created_dt":"([^"]+)"/;

export class CustomBusTarget {
  /** Give it to the handler as `AWS_ENDPOINT_URL_EVENTBRIDGEV2`. */
  readonly endpoint: string;
  /** The bus to give as `EVENT_BUS_NAME`. */
  readonly busArn: string;
  /** First acceptance per sequence number. */
  readonly accepted = new Map<number, AcceptedEvent>();
  /** performance.now() of every PutEvents request that reached the entries' checks. */
  readonly requestTimes: number[] = [];
  duplicates = 0;
  readonly #bus: CustomBus;
  readonly #proxy: LatencyProxy;
  #waiters: Array<{ count: number; resolve: () => void }> = [];

  private constructor(bus: CustomBus, proxy: LatencyProxy, busArn: string) {
    this.#bus = bus;
    this.#proxy = proxy;
    this.endpoint = proxy.url;
    this.busArn = busArn;
    // The stand-in asks its entry rules about every entry that passed validation; past that point an
    // entry is PUBLISHED or DEDUPLICATED. Observing there (never rejecting) is where it is accepted.
    bus.faults.rejectEntries((entry) => {
      this.#observe(entry.index, entry.detail ?? '');
      return undefined;
    });
  }

  static async start(options: CustomBusTargetOptions): Promise<CustomBusTarget> {
    const bus = await startCustomBus({
      motoEndpoint: options.motoEndpoint,
      region: options.region,
      credentials: [options.credentials],
      seed: 27,
      // As the classic bus's stand-in: connections kept, as AWS endpoints keep them for minutes.
      keepAliveTimeoutMs: 60_000,
    });
    const busArn = bus.admin.createEventBus('bench-bus');
    const proxy = await LatencyProxy.start(Number(new URL(bus.endpoint).port), (options.latencyMs ?? 15) / 2);
    return new CustomBusTarget(bus, proxy, busArn);
  }

  /** Resolves once `count` distinct sequence numbers have been accepted. */
  waitForAccepted(count: number): Promise<void> {
    if (this.accepted.size >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }

  /** The most requests that arrived within any window of `windowMs`. */
  maxRequestsInWindow(windowMs = 1000): number {
    let most = 0;
    let start = 0;
    for (let end = 0; end < this.requestTimes.length; end += 1) {
      while (this.requestTimes[end]! - this.requestTimes[start]! >= windowMs) start += 1;
      most = Math.max(most, end - start + 1);
    }
    return most;
  }

  /** Connections the publisher opened. */
  get connections(): number {
    return this.#proxy.connections;
  }

  async close(): Promise<void> {
    await this.#proxy.close();
    await this.#bus.close();
  }

  #observe(index: number, detail: string): void {
    const now = performance.now();
    if (index === 0) this.requestTimes.push(now);
    const sequence = Number(SEQUENCE.exec(detail)?.[1]);
    if (this.accepted.has(sequence)) this.duplicates += 1;
    else {
      const created = Date.parse(CREATED.exec(detail)?.[1] ?? '');
      this.accepted.set(sequence, { acceptedAt: now, acceptedEpochMs: Date.now(), createdEpochMs: created });
    }
    // Resolved after the answer is written: the waiter reads `accepted` on a later turn anyway.
    if (this.#waiters.length > 0) {
      this.#waiters = this.#waiters.filter((waiter) => {
        if (this.accepted.size < waiter.count) return true;
        waiter.resolve();
        return false;
      });
    }
  }
}
