/**
 * Publishes banking events to an EventBridge bus, one `PutEvents` call per batch, signed by hand
 * and sent with undici (`put-events-transport.ts`: a quarter of the SDK's CPU per call), with the
 * credentials, region and endpoint the SDK resolves.
 */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { BankingEvent } from '../../core/banking-event.ts';
import type { BusEntryRules } from '../../core/bus-entry-rules.ts';
import type { EntryOutcome, EventPublisher, PublishLimits } from '../../core/ports.ts';
import { CLASSIC_BUS_ENTRY_RULES } from './eventbridge-entry-rules.ts';
import {
  type BusRules,
  nonEmpty,
  PutEventsEntries,
  type PutEventsEntriesOptions,
} from './put-events-entries.ts';
import { translatePutEventsFailure } from './put-events-failure.ts';
import { CLASSIC_BUS_MAX_ENTRIES } from './put-events-limits.ts';
import { type PutEventsTransport, SignedPutEvents } from './put-events-transport.ts';

export interface EventBridgePublisherOptions extends PutEventsEntriesOptions {
  /** Name or ARN of the bus. */
  readonly eventBusName: string;
  /**
   * Where credentials, region and endpoint come from (its configuration, as the SDK resolves it).
   * Build it once per container at module scope and pass it in.
   * @default a new `EventBridgeClient` with the SDK's default configuration
   */
  readonly client?: EventBridgeClient;
  /** How requests are sent; a test or benchmark seam. @default `SignedPutEvents` on `client` */
  readonly transport?: PutEventsTransport;
}

/** Entry error codes the API reference (`PutEventsResultEntry`) lists as not retryable. */
export const CLASSIC_REFUSED_ENTRY_CODES: ReadonlySet<string> = new Set([
  'AccessDeniedException',
  'InvalidAccountIdException',
  'InvalidArgument',
  'MalformedDetail',
  'RedactionFailure',
  'NotAuthorizedForSourceException',
  'NotAuthorizedForDetailTypeException',
]);

/**
 * The classic bus: 10 entries a request; an entry was published when its answer carries an
 * `EventId` (the API reference: "If the submission was successful, the entry has the event ID in
 * it"); the entry codes it documents as not retryable.
 */
function classicRules(eventBusName: string): BusRules {
  return {
    maxEntries: CLASSIC_BUS_MAX_ENTRIES,
    accepted: (result) => nonEmpty(result.EventId),
    notAcceptedCode: 'MissingEventId',
    names: {
      busLabel: `EventBridge bus ${eventBusName}`,
      busContext: { eventBusName },
      validationErrorNames: new Set(['ValidationException']),
      refusedEntryCodes: CLASSIC_REFUSED_ENTRY_CODES,
    },
  };
}

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
  readonly entryRules: BusEntryRules = CLASSIC_BUS_ENTRY_RULES;

  readonly #entries: PutEventsEntries;
  readonly #rules: BusRules;
  readonly #transport: PutEventsTransport;
  readonly #eventBusName: string;

  constructor(options: EventBridgePublisherOptions) {
    this.#rules = classicRules(options.eventBusName);
    this.#entries = new PutEventsEntries(options, this.#rules);
    this.limits = this.#entries.limits;
    this.#transport =
      options.transport ?? new SignedPutEvents({ client: options.client ?? new EventBridgeClient({}) });
    this.#eventBusName = options.eventBusName;
  }

  entrySize(event: BankingEvent): number {
    return this.#entries.size(event);
  }

  async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    if (batch.length === 0) return [];
    const entries = batch.map((event) => ({
      source: this.#entries.source,
      detailType: event.type,
      detail: event.detail,
      time: Date.parse(event.created_dt),
      eventBusName: this.#eventBusName,
    }));
    let results: unknown;
    try {
      results = await this.#transport.putEvents(entries, signal);
    } catch (error) {
      throw translatePutEventsFailure(error, { names: this.#rules.names, batch, signal });
    }
    return this.#entries.outcomes(batch, results);
  }
}
