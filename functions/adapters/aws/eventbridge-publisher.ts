/**
 * Publishes banking events to an EventBridge bus, one `PutEvents` call per batch, signed by hand
 * and sent with undici (`put-events-transport.ts`: a quarter of the SDK's CPU per call), with the
 * credentials, region and endpoint the SDK resolves.
 */
import { EventBridgeClient, type PutEventsResultEntry } from '@aws-sdk/client-eventbridge';
import type { BankingEvent } from '../../core/banking-event.ts';
import { DEFAULT_MAX_ENTRY_BYTES } from '../../core/claim-check.ts';
import { ConfigurationError } from '../../core/errors.ts';
import type { EntryOutcome, EventPublisher, PublishLimits } from '../../core/ports.ts';
import { translatePutEventsFailure } from './put-events-failure.ts';
import { type PutEventsTransport, SignedPutEvents } from './put-events-transport.ts';

export interface EventBridgePublisherOptions {
  /** Name or ARN of the bus. */
  readonly eventBusName: string;
  /** `Source` of every entry, e.g. `com.example.banking`; rules match on it. */
  readonly source: string;
  /**
   * Where credentials, region and endpoint come from (its configuration, as the SDK resolves it).
   * Build it once per container at module scope and pass it in.
   * @default a new `EventBridgeClient` with the SDK's default configuration
   */
  readonly client?: EventBridgeClient;
  /** How requests are sent; a test or benchmark seam. @default `SignedPutEvents` on `client` */
  readonly transport?: PutEventsTransport;
  /**
   * Bytes one PutEvents request (and so one entry) may carry, entry sizes added up as AWS documents.
   * @default DEFAULT_MAX_ENTRY_BYTES (1,000,000: see `claim-check.ts` for why)
   */
  readonly maxRequestBytes?: number;
}

/** Entries per PutEvents request on the classic bus (100 on the Custom Event Bus). */
export const CLASSIC_BUS_MAX_ENTRIES = 10;

/**
 * "Calculating Amazon EventBridge PutEvents event entry size",
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html :
 * `Time`, if specified, is 14 bytes; `Source` and `DetailType` are the byte length of their UTF-8
 * form; `Detail`, if specified, likewise; each `Resources` entry likewise. `EventBusName` is not
 * counted. We always set `Time` and never set `Resources`.
 */
const TIME_BYTES = 14;

/** The classic bus's name for a refused input, a refusal for size among them. */
const VALIDATION_ERROR_NAMES: ReadonlySet<string> = new Set(['ValidationException']);

/**
 * `EventPublisher` on EventBridge `PutEvents`: `Source` from the options, `DetailType` the event
 * type, `Detail` the event's own text (`BankingEvent.detail`), `Time` its `created_dt`.
 *
 * @example
 * const eventBridge = new EventBridgeClient({}); // module scope
 * const publisher = new EventBridgePublisher({ client: eventBridge, eventBusName: config.busName, source: config.source });
 */
export class EventBridgePublisher implements EventPublisher {
  readonly limits: PublishLimits;

  readonly #transport: PutEventsTransport;
  readonly #eventBusName: string;
  readonly #source: string;
  readonly #sourceBytes: number;

  constructor(options: EventBridgePublisherOptions) {
    if (options.source.trim() === '') {
      throw new ConfigurationError('EventBridge source must be a non-empty string', { field: 'source' });
    }
    this.limits = Object.freeze({
      maxEntriesPerBatch: CLASSIC_BUS_MAX_ENTRIES,
      maxBatchBytes: options.maxRequestBytes ?? DEFAULT_MAX_ENTRY_BYTES,
    });
    this.#transport =
      options.transport ?? new SignedPutEvents({ client: options.client ?? new EventBridgeClient({}) });
    this.#eventBusName = options.eventBusName;
    this.#source = options.source;
    this.#sourceBytes = Buffer.byteLength(options.source, 'utf8');
  }

  /** The bank's own text, sized on the exact bytes sent. */
  entrySize(event: BankingEvent): number {
    return (
      TIME_BYTES +
      this.#sourceBytes +
      Buffer.byteLength(event.type, 'utf8') +
      Buffer.byteLength(event.detail, 'utf8')
    );
  }

  async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    if (batch.length === 0) return [];
    const entries = batch.map((event) => ({
      source: this.#source,
      detailType: event.type,
      detail: event.detail,
      time: Date.parse(event.created_dt),
      eventBusName: this.#eventBusName,
    }));
    let results: readonly PutEventsResultEntry[];
    try {
      results = await this.#transport.putEvents(entries, signal);
    } catch (error) {
      throw this.#translate(error, batch, signal);
    }
    // Entries come back in request order. Anything that is not a clear success counts as a
    // failure, so the core retries it rather than moving the checkpoint past it.
    return batch.map((_, index): EntryOutcome => {
      const result = results[index];
      if (result === undefined) {
        return {
          ok: false,
          errorCode: 'MissingResult',
          errorMessage: 'PutEvents returned no result for this entry',
        };
      }
      if (result.ErrorCode !== undefined && result.ErrorCode !== '') {
        return { ok: false, errorCode: result.ErrorCode, errorMessage: result.ErrorMessage ?? '' };
      }
      if (result.EventId === undefined || result.EventId === '') {
        return {
          ok: false,
          errorCode: 'MissingEventId',
          errorMessage: 'PutEvents returned neither an event id nor an error',
        };
      }
      return { ok: true };
    });
  }

  #translate(error: unknown, batch: readonly BankingEvent[], signal: AbortSignal): unknown {
    return translatePutEventsFailure(error, {
      busLabel: `EventBridge bus ${this.#eventBusName}`,
      busContext: { eventBusName: this.#eventBusName },
      validationErrorNames: VALIDATION_ERROR_NAMES,
      batch,
      signal,
    });
  }
}
