/**
 * An `EventPublisher` that sends events too large for the bus through the claim check
 * (`claim-check.ts`): their text goes to object storage and a pointer event goes to the bus in
 * their place, within the same `send`, so the cycle checkpoints them like any other event: once
 * the pointer is accepted. It decorates the bus's publisher; batching, retries and the checkpoint
 * stay the core's.
 *
 * Two ways an event is claim-checked: its entry is larger than `maxEntryBytes`, or the bus refused
 * it for its size (its publisher says `too-large`: for an entry on its own, or for a request whose
 * entries are then sent one at a time to find the one too large).
 *
 * With event groups (`eventGroup`, forwarded from the bus) the extra requests keep each group in
 * order: an entry after one of its group that already failed in this send is not sent (it fails
 * too, for the pipeline to resend in order), and an entry refused for its size after a later one
 * of its group was accepted is reported rejected rather than resent as a pointer behind it, so
 * that the pipeline counts the break (`OrderBroken`); it is claim-checked when resent.
 */

import type { BankingEvent } from './banking-event.ts';
import type { BusEntryRules } from './bus-entry-rules.ts';
import { claimCheckKey, claimCheckPointer } from './claim-check.ts';
import { ConfigurationError, PublishError } from './errors.ts';
import { EARLIER_ENTRY_FAILED } from './group-sequencer.ts';
import type {
  ClaimCheckStore,
  CycleLogger,
  EntryOutcome,
  EventPublisher,
  MetricsSink,
  PublishLimits,
} from './ports.ts';

export interface ClaimCheckPublisherDeps {
  /** The bus. */
  readonly inner: EventPublisher;
  readonly store: ClaimCheckStore;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
}

export interface ClaimCheckPublisherOptions {
  /** Entries larger than this (as `inner.entrySize` counts) are claim-checked; at most `inner.limits.maxEntryBytes`. */
  readonly maxEntryBytes: number;
}

/** One entry of a `send`: its place in the batch, the event asked for, and what goes to the bus. */
interface Outgoing {
  readonly index: number;
  readonly event: BankingEvent;
  readonly sent: BankingEvent;
}

/** S3 bucket names are at most 63 characters: a pointer sized with one that long is never larger. */
const LONGEST_BUCKET = 'b'.repeat(63);

export class ClaimCheckPublisher implements EventPublisher {
  readonly limits: PublishLimits;
  readonly entryRules: BusEntryRules;
  /** The bus's, when it has groups: a claim-checked event keeps the group of the event it stands for. */
  readonly eventGroup?: (event: BankingEvent) => string | undefined;
  readonly #deps: ClaimCheckPublisherDeps;
  readonly #maxEntryBytes: number;
  /** One store per event however often it is sent (resends, duplicates in flight). */
  readonly #pointers = new WeakMap<BankingEvent, Promise<BankingEvent>>();
  /** Refused for their size and reported rejected (see above): claim-checked when sent again. */
  readonly #claimCheckNext = new WeakSet<BankingEvent>();

  constructor(deps: ClaimCheckPublisherDeps, options: ClaimCheckPublisherOptions) {
    if (options.maxEntryBytes > deps.inner.limits.maxEntryBytes) {
      throw new ConfigurationError(
        `The claim-check threshold ${options.maxEntryBytes} is above what one entry on the bus may carry (${deps.inner.limits.maxEntryBytes})`,
        { maxEntryBytes: options.maxEntryBytes },
      );
    }
    this.#deps = deps;
    this.#maxEntryBytes = options.maxEntryBytes;
    this.limits = deps.inner.limits;
    this.entryRules = deps.inner.entryRules;
    const { inner } = deps;
    // Defined only when the bus has it: the pipeline keeps no group bookkeeping for a bus without groups.
    if (inner.eventGroup !== undefined) this.eventGroup = (event) => inner.eventGroup?.(event);
  }

  entrySize(event: BankingEvent): number {
    const size = this.#deps.inner.entrySize(event);
    if (size <= this.#maxEntryBytes) return size;
    return this.#deps.inner.entrySize(
      claimCheckPointer(event, { bucket: LONGEST_BUCKET, key: claimCheckKey(event) }),
    );
  }

  async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    const outcomes: EntryOutcome[] = new Array(batch.length);
    let outgoing: Outgoing[] = [];
    const large: Outgoing[] = [];
    batch.forEach((event, index) => {
      const entry = { index, event, sent: event };
      const small = this.#deps.inner.entrySize(event) <= this.#maxEntryBytes;
      if (small && !this.#claimCheckNext.has(event)) outgoing.push(entry);
      else large.push(entry);
    });
    // Almost every batch has nothing to store: it goes out without waiting for anything.
    if (large.length > 0) {
      const pointers = await Promise.all(large.map((entry) => this.#claimCheck(entry, outcomes, signal)));
      for (const pointer of pointers) if (pointer !== undefined) outgoing.push(pointer);
      outgoing.sort((a, b) => a.index - b.index);
      outgoing = this.#inGroupOrder(batch, outgoing, outcomes);
    }
    await this.#sendAll(batch, outgoing, outcomes, signal);
    return outcomes;
  }

  /** Sends `entries` in one request and fills in their outcomes, claim-checking what the bus refused for its size. */
  async #sendAll(
    batch: readonly BankingEvent[],
    entries: readonly Outgoing[],
    outcomes: EntryOutcome[],
    signal: AbortSignal,
  ): Promise<void> {
    if (entries.length === 0) return;
    let results: readonly EntryOutcome[];
    try {
      results = await this.#deps.inner.send(
        entries.map((entry) => entry.sent),
        signal,
      );
    } catch (error) {
      if (!(error instanceof PublishError && error.failure === 'too-large')) throw error;
      if (entries.length > 1) {
        // Which entry is too large the answer does not say: one request each finds it.
        for (const entry of entries) {
          await this.#sendAll(batch, this.#inGroupOrder(batch, [entry], outcomes), outcomes, signal);
        }
        return;
      }
      results = [
        {
          ok: false,
          failure: 'too-large',
          errorCode: error.code,
          errorMessage: `The bus refused the entry for its size: ${error.message}`,
        },
      ];
    }
    const refused: Outgoing[] = [];
    entries.forEach((entry, position) => {
      const result: EntryOutcome = results[position] ?? {
        ok: false,
        failure: 'transient',
        errorCode: 'MissingOutcome',
        errorMessage: 'The bus returned no outcome for this entry',
      };
      const tooLarge = !result.ok && result.failure === 'too-large';
      // A pointer refused for its size would be refused again: report it rather than loop.
      if (tooLarge && entry.sent === entry.event && !this.#overtaken(position, entries, results)) {
        refused.push(entry);
      } else if (tooLarge && entry.sent === entry.event) {
        // Overtaken in its group: reported for the pipeline to resend, and claim-checked then.
        this.#claimCheckNext.add(entry.event);
        outcomes[entry.index] = { ...result, failure: 'transient' };
      } else {
        outcomes[entry.index] = result;
      }
    });
    const pointers = await Promise.all(refused.map((entry) => this.#claimCheck(entry, outcomes, signal)));
    await this.#sendAll(
      batch,
      pointers.filter((entry): entry is Outgoing => entry !== undefined),
      outcomes,
      signal,
    );
  }

  /** Whether the bus accepted, in the same request, a later entry of this entry's group. */
  #overtaken(position: number, entries: readonly Outgoing[], results: readonly EntryOutcome[]): boolean {
    const group = this.eventGroup?.(entries[position]!.event);
    if (group === undefined) return false;
    return entries.some(
      (other, at) => at > position && results[at]?.ok === true && this.eventGroup?.(other.event) === group,
    );
  }

  /**
   * With event groups, `entries` without those after an entry of their group that already failed
   * in this send: they would reach the bus ahead of it. They fail too, for the pipeline to resend.
   */
  #inGroupOrder(batch: readonly BankingEvent[], entries: Outgoing[], outcomes: EntryOutcome[]): Outgoing[] {
    const { eventGroup } = this;
    if (eventGroup === undefined) return entries;
    const failedAt = new Map<string, number>();
    batch.forEach((event, index) => {
      const group = outcomes[index]?.ok === false ? eventGroup(event) : undefined;
      if (group !== undefined && !failedAt.has(group)) failedAt.set(group, index);
    });
    if (failedAt.size === 0) return entries;
    return entries.filter((entry) => {
      const group = eventGroup(entry.event);
      const at = group === undefined ? undefined : failedAt.get(group);
      if (at === undefined || entry.index < at) return true;
      const earlier = outcomes[at];
      outcomes[entry.index] = {
        ok: false,
        // As retryable as the entry it waits for: it goes again once that one is accepted.
        failure: earlier !== undefined && !earlier.ok ? earlier.failure : 'transient',
        errorCode: EARLIER_ENTRY_FAILED,
        errorMessage: `Not sent: event ${batch[at]!.sequence_number}, earlier in its event group, failed in this request`,
      };
      return false;
    });
  }

  /**
   * The entry with its event stored and a pointer to send instead; `undefined` (its outcome a
   * failure the pipeline retries) when the store failed for a reason that may pass.
   */
  async #claimCheck(
    entry: Outgoing,
    outcomes: EntryOutcome[],
    signal: AbortSignal,
  ): Promise<Outgoing | undefined> {
    try {
      return { ...entry, sent: await this.#pointerFor(entry.event, signal) };
    } catch (error) {
      if (signal.aborted || error instanceof ConfigurationError) throw error;
      outcomes[entry.index] = {
        ok: false,
        failure: 'transient',
        errorCode: 'ClaimCheckFailed',
        errorMessage: error instanceof Error ? error.message : String(error),
      };
      return undefined;
    }
  }

  #pointerFor(event: BankingEvent, signal: AbortSignal): Promise<BankingEvent> {
    let pointer = this.#pointers.get(event);
    if (pointer === undefined) {
      const { store, metrics, logger } = this.#deps;
      const key = claimCheckKey(event);
      pointer = store.put(key, event.detail, signal).then((location) => {
        metrics.add('ClaimChecks', 'Count', 1);
        logger.info('Event too large for the bus: stored in the claim-check bucket, publishing a pointer', {
          eventId: event.id,
          sequenceNumber: event.sequence_number,
          sizeBytes: Buffer.byteLength(event.detail, 'utf8'),
          bucket: location.bucket,
          key: location.key,
        });
        return claimCheckPointer(event, location);
      });
      this.#pointers.set(event, pointer);
      // A failed store is tried again on the next send.
      pointer.catch(() => this.#pointers.delete(event));
    }
    return pointer;
  }
}
