/**
 * Publishes banking events to an EventBridge Custom Event Bus (API `EventBridgeV2`): one
 * `PutEvents` call per batch of up to 100 entries, its CBOR body encoded by the library's codec
 * (`put-events-request.ts`) and sent signed (`rpc-v2-cbor-client.ts`).
 *
 * Each entry carries `SystemMetadata`:
 * - `DeduplicationId`: the bank's event `id` with its `sequence_number` (`id@number`; a quarantined
 *   event's `fingerprint`, the SHA-256 of its text: its own `id` may be missing or shared). Within
 *   the bus's 5-minute window, in the account and the group, a second publish of it is answered
 *   `DEDUPLICATED` and not delivered again: a re-send after a crash, a timeout or a lease takeover
 *   reaches no subscriber twice. The number is part of the key because the bank has reused an id
 *   at a new number (`DuplicateEventIds`): keyed on the id alone, the bus would drop that second
 *   event while the checkpoint moved past it, a loss; the classic bus delivers both, and so do we
 *   (the subscriber kit keeps the first by id).
 * - `EventGroupId`: the event's group (`event-groups.ts`; none with `none`). A FIFO subscriber
 *   delivers each group in publish order; `eventGroup` names it for the publish pipeline, which
 *   sends an entry only after every earlier entry of its group was accepted.
 *
 * `DEDUPLICATED` is an accepted entry like `PUBLISHED`: the bus has the event.
 */
import { createHash } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { BankingEvent } from '../../../core/banking-event.ts';
import type { BusEntryRules } from '../../../core/bus-entry-rules.ts';
import { type EventGroupBy, eventGroupOf } from '../../../core/event-groups.ts';
import type { EntryOutcome, EventPublisher, PublishLimits } from '../../../core/ports.ts';
import { boundedClientConfig } from '../bounded-client-config.ts';
import { CUSTOM_BUS_ENTRY_RULES } from '../eventbridge-entry-rules.ts';
import {
  type BusRules,
  nonEmpty,
  PutEventsEntries,
  type PutEventsEntriesOptions,
} from '../put-events-entries.ts';
import { translatePutEventsFailure } from '../put-events-failure.ts';
import { CUSTOM_BUS_MAX_ENTRIES } from '../put-events-limits.ts';
import { boundedBusId } from './bus-ids.ts';
import { parseEventBusV2Arn } from './event-bus-arn.ts';
import { type CustomBusEntry, encodePutEventsRequest } from './put-events-request.ts';
import { type CredentialsAndRegionSource, EventBridgeV2Rpc } from './rpc-v2-cbor-client.ts';

/** `EventDeduplicationId`'s rule: at least one character that is not white space. */
const NOT_ONLY_WHITESPACE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the service model's own white-space class, control characters included
  /[^\u0009-\u000D\u001C-\u0020\u1680\u2000-\u2006\u2008-\u200A\u2028\u2029\u205F\u3000]/;

/**
 * The Custom Event Bus: 100 entries a request; an entry was taken when its answer carries a
 * `SuccessCode` (`PUBLISHED`, `DEDUPLICATED`: the bus has it; the model documents it on every
 * successful entry, so a code it may add later is a success too) or, failing that, an `EventId`;
 * `InvalidInputException` (HTTP 400) for a refused input. No entry code is documented as final:
 * an unknown one is retried within the pipeline's attempts.
 */
function customBusRules(eventBusArn: string): BusRules {
  return {
    maxEntries: CUSTOM_BUS_MAX_ENTRIES,
    accepted: (result) => nonEmpty(result.SuccessCode) || nonEmpty(result.EventId),
    notAcceptedCode: 'MissingSuccessCode',
    names: {
      busLabel: `custom bus ${eventBusArn}`,
      busContext: { eventBusArn },
      validationErrorNames: new Set(['InvalidInputException', 'ValidationException']),
      refusedEntryCodes: new Set(),
    },
  };
}

export interface CustomBusPublisherOptions extends PutEventsEntriesOptions {
  /** The bus's ARN (`arn:aws:events:<region>:<account>:event-busv2/<name>/<id>`). */
  readonly eventBusArn: string;
  /** The program whose events this publishes: the group of `program`, and the fallback of `account`. */
  readonly program: string;
  /** How events are grouped for order (`event-groups.ts`). @default 'program' */
  readonly groupBy?: EventGroupBy;
  /**
   * The signed caller. Build it once per container at module scope and share it.
   * @default a new `EventBridgeV2Rpc` over `client`
   */
  readonly rpc?: EventBridgeV2Rpc;
  /** Where credentials and region come from, when `rpc` is not given. @default an `EventBridgeClient` */
  readonly client?: CredentialsAndRegionSource;
}

/**
 * `EventPublisher` on the Custom Event Bus's `PutEvents`: `Source` from the options, `DetailType`
 * the event type, `Detail` the event's own text, `Time` its `created_dt`, and `SystemMetadata`
 * (see the module comment).
 *
 * @example
 * const rpc = new EventBridgeV2Rpc({ client: new EventBridgeClient(boundedClientConfig) }); // module scope
 * const publisher = new CustomBusPublisher({ rpc, eventBusArn, source: 'banking.events', program: 'retail', groupBy: 'account' });
 */
export class CustomBusPublisher implements EventPublisher {
  readonly limits: PublishLimits;
  readonly entryRules: BusEntryRules = CUSTOM_BUS_ENTRY_RULES;

  readonly #rpc: EventBridgeV2Rpc;
  readonly #eventBusArn: string;
  readonly #entries: PutEventsEntries;
  readonly #rules: BusRules;
  readonly #program: string;
  readonly #groupBy: EventGroupBy;

  constructor(options: CustomBusPublisherOptions) {
    this.#eventBusArn = parseEventBusV2Arn(options.eventBusArn, 'The custom bus ARN (eventBusArn)');
    this.#rules = customBusRules(this.#eventBusArn);
    this.#entries = new PutEventsEntries(options, this.#rules);
    this.limits = this.#entries.limits;
    this.#rpc =
      options.rpc ??
      new EventBridgeV2Rpc({
        client: options.client ?? (new EventBridgeClient(boundedClientConfig) as CredentialsAndRegionSource),
      });
    this.#program = options.program;
    this.#groupBy = options.groupBy ?? 'program';
  }

  /** The same bus, client and settings, for another program's events. */
  forProgram(program: string): CustomBusPublisher {
    return new CustomBusPublisher({
      eventBusArn: this.#eventBusArn,
      source: this.#entries.source,
      program,
      groupBy: this.#groupBy,
      rpc: this.#rpc,
      maxRequestBytes: this.limits.maxBatchBytes,
    });
  }

  /** The group `event` is published in: events of one group must be accepted in sequence order. */
  eventGroup(event: BankingEvent): string | undefined {
    const group = eventGroupOf(event, this.#groupBy, this.#program);
    return group === undefined ? undefined : boundedBusId(group);
  }

  entrySize(event: BankingEvent): number {
    return this.#entries.size(event);
  }

  async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    if (batch.length === 0) return [];
    const entries = batch.map((event): CustomBusEntry => {
      const group = this.eventGroup(event);
      return {
        source: this.#entries.source,
        detailType: event.type,
        detail: event.detail,
        time: Date.parse(event.created_dt),
        ...(group === undefined ? {} : { eventGroupId: group }),
        deduplicationId: deduplicationIdOf(event),
      };
    });
    let answer: { Entries?: unknown };
    try {
      answer = await this.#rpc.callEncoded<{ Entries?: unknown }>(
        'PutEvents',
        encodePutEventsRequest(this.#eventBusArn, entries),
        signal,
      );
    } catch (error) {
      throw translatePutEventsFailure(error, { names: this.#rules.names, batch, signal });
    }
    return this.#entries.outcomes(batch, answer.Entries);
  }
}

/**
 * The entry's `DeduplicationId`: `id@sequence_number`, or a quarantined event's fingerprint; hashed
 * when the bus would refuse it as it is (over 128 characters, or only white space).
 */
export function deduplicationIdOf(event: BankingEvent): string {
  const key = event.invalid?.fingerprint ?? `${event.id}@${event.sequence_number}`;
  if (NOT_ONLY_WHITESPACE.test(key)) return boundedBusId(key);
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}
