/**
 * What the two PutEvents publishers share (the classic bus's, `eventbridge-publisher.ts`, and the
 * Custom Event Bus's, `eventbridgev2/custom-bus-publisher.ts`): their options checked, their limits
 * stated, entries sized as AWS counts them, and the answer's entries mapped to outcomes in the
 * core's words. What differs is stated once in each adapter, as its `BusRules`: entries per
 * request, which answer entry says the bus has the event, and the bus's names for its errors.
 *
 * Sizing, from "Calculating Amazon EventBridge PutEvents event entry size",
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html : `Time`, if
 * specified, is 14 bytes; `Source` and `DetailType` are the byte length of their UTF-8 form;
 * `Detail`, if specified, likewise; each `Resources` entry likewise. `EventBusName` is not
 * counted. We always set `Time` and never set `Resources`. The Custom Event Bus documents no sizing
 * of its own: its entries are sized alike (`SystemMetadata` not counted, as `EventBusName` is not).
 */
import type { BankingEvent } from '../../core/banking-event.ts';
import { ConfigurationError } from '../../core/errors.ts';
import type { EntryOutcome, PublishLimits } from '../../core/ports.ts';
import { type BusErrorNames, entryFailure } from './put-events-failure.ts';
import { DEFAULT_MAX_ENTRY_BYTES, MIN_MAX_ENTRY_BYTES, PUT_EVENTS_MAX_BYTES } from './put-events-limits.ts';

const TIME_BYTES = 14;

/** The members of an answer entry either bus may send; read defensively, it came over the wire. */
export interface PutEventsResultEntry {
  readonly EventId?: unknown;
  readonly SuccessCode?: unknown;
  readonly ErrorCode?: unknown;
  readonly ErrorMessage?: unknown;
}

/** What differs between the buses, stated once in each adapter. */
export interface BusRules {
  /** Entries per request. */
  readonly maxEntries: number;
  /** Whether an answer entry that carries no error code says the bus has the event. */
  readonly accepted: (result: PutEventsResultEntry) => boolean;
  /** What an entry that carries neither is called in the outcome, e.g. `MissingEventId`. */
  readonly notAcceptedCode: string;
  readonly names: BusErrorNames;
}

export interface PutEventsEntriesOptions {
  /** `Source` of every entry; rules match on it. */
  readonly source: string;
  /**
   * Bytes one request (and so one entry) may carry, entry sizes added up as AWS documents.
   * @default DEFAULT_MAX_ENTRY_BYTES (see `put-events-limits.ts` for why)
   */
  readonly maxRequestBytes?: number;
}

/** The shared part of a PutEvents publisher; see the module comment. */
export class PutEventsEntries {
  readonly limits: PublishLimits;
  readonly source: string;
  readonly #sourceBytes: number;
  readonly #rules: BusRules;

  /** @throws ConfigurationError for an empty source, or a byte limit that is not a whole number within the bus's */
  constructor(options: PutEventsEntriesOptions, rules: BusRules) {
    if (options.source.trim() === '') {
      throw new ConfigurationError('EventBridge source must be a non-empty string', { field: 'source' });
    }
    const bytes = options.maxRequestBytes ?? DEFAULT_MAX_ENTRY_BYTES;
    if (!Number.isSafeInteger(bytes) || bytes < MIN_MAX_ENTRY_BYTES || bytes > PUT_EVENTS_MAX_BYTES) {
      throw new ConfigurationError(
        `maxRequestBytes must be a whole number from ${MIN_MAX_ENTRY_BYTES} to ${PUT_EVENTS_MAX_BYTES} (PutEvents' own cap), got ${bytes}`,
        { field: 'maxRequestBytes' },
      );
    }
    // One entry may fill a request; requests are held to the same bound as entries, so that the
    // bytes in flight per request never exceed what was configured.
    this.limits = Object.freeze({
      maxEntriesPerBatch: rules.maxEntries,
      maxBatchBytes: bytes,
      maxEntryBytes: bytes,
    });
    this.source = options.source;
    this.#sourceBytes = Buffer.byteLength(options.source, 'utf8');
    this.#rules = rules;
  }

  /** The bank's own text, sized on the exact bytes sent. */
  size(event: BankingEvent): number {
    return (
      TIME_BYTES +
      this.#sourceBytes +
      Buffer.byteLength(event.type, 'utf8') +
      Buffer.byteLength(event.detail, 'utf8')
    );
  }

  /**
   * The outcome of each entry of `batch` from the answer's entries, which come back in request
   * order. Anything that is not a clear success counts as a failure, so the core retries it rather
   * than moving the checkpoint past it.
   */
  outcomes(batch: readonly BankingEvent[], results: unknown): EntryOutcome[] {
    const entries: readonly unknown[] = Array.isArray(results) ? results : [];
    return batch.map((_, index) => this.#outcomeOf(entries[index]));
  }

  #outcomeOf(result: unknown): EntryOutcome {
    if (result === null || typeof result !== 'object') {
      return {
        ok: false,
        failure: 'transient',
        errorCode: 'MissingResult',
        errorMessage: 'PutEvents returned no result for this entry',
      };
    }
    const entry = result as PutEventsResultEntry;
    if (nonEmpty(entry.ErrorCode)) {
      const errorMessage = typeof entry.ErrorMessage === 'string' ? entry.ErrorMessage : '';
      return {
        ok: false,
        failure: entryFailure(entry.ErrorCode, errorMessage, this.#rules.names),
        errorCode: entry.ErrorCode,
        errorMessage,
      };
    }
    if (this.#rules.accepted(entry)) return { ok: true };
    return {
      ok: false,
      failure: 'transient',
      errorCode: this.#rules.notAcceptedCode,
      errorMessage: 'PutEvents returned neither a success nor an error for this entry',
    };
  }
}

/** A string with something in it: how either bus marks a member as present. */
export function nonEmpty(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}
