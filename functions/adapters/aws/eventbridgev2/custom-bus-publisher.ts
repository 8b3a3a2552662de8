/**
 * Publishes banking events to an EventBridge Custom Event Bus (API `EventBridgeV2`): one
 * `PutEvents` call per batch of up to 100 entries, its CBOR body written directly
 * (`put-events-request.ts`) and sent signed (`rpc-v2-cbor-client.ts`).
 *
 * Each entry carries `SystemMetadata`:
 * - `DeduplicationId`: the bank's event `id` (a quarantined event's `fingerprint`, the SHA-256 of
 *   its text: its own `id` may be missing or shared). Within the bus's 5-minute window, in the
 *   account and the group, a second publish of it is answered `DEDUPLICATED` and not delivered
 *   again: a re-send after a crash, a timeout or a lease takeover reaches no subscriber twice.
 * - `EventGroupId`: the event's group (`event-groups.ts`; none with `none`). A FIFO subscriber
 *   delivers each group in publish order; `eventGroup` names it for the publish pipeline, which
 *   sends an entry only after every earlier entry of its group was accepted.
 *
 * `DEDUPLICATED` is an accepted entry like `PUBLISHED`: the bus has the event.
 */
import { createHash } from 'node:crypto';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import type { BankingEvent } from '../../../core/banking-event.ts';
import { DEFAULT_MAX_ENTRY_BYTES } from '../../../core/claim-check.ts';
import { ConfigurationError } from '../../../core/errors.ts';
import { boundedBusId, type EventGroupBy, eventGroupOf } from '../../../core/event-groups.ts';
import type { EntryOutcome, EventPublisher, PublishLimits } from '../../../core/ports.ts';
import { boundedClientConfig } from '../bounded-client-config.ts';
import { translatePutEventsFailure } from '../put-events-failure.ts';
import { parseEventBusV2Arn } from './event-bus-arn.ts';
import { type CustomBusEntry, encodePutEventsRequest } from './put-events-request.ts';
import { type CredentialsAndRegionSource, EventBridgeV2Rpc } from './rpc-v2-cbor-client.ts';

/** Entries per PutEvents request on the Custom Event Bus (10 on the classic bus). */
export const CUSTOM_BUS_MAX_ENTRIES = 100;

/**
 * The API reference and the quotas page we could read give no size limit of their own for a
 * Custom Event Bus PutEvents entry or request; the classic bus's are kept (1 MiB, counted as
 * `eb-putevent-size` documents: `Time` 14 bytes, `Source`, `DetailType` and `Detail` their UTF-8
 * bytes), with the same default setting (`DEFAULT_MAX_ENTRY_BYTES`). A refusal for size is
 * still recognised (`translatePutEventsFailure`) and goes through the claim check.
 */
const TIME_BYTES = 14;

/** The Custom Event Bus's name for a refused input (`InvalidInputException`, HTTP 400). */
const VALIDATION_ERROR_NAMES: ReadonlySet<string> = new Set(['InvalidInputException', 'ValidationException']);

/** `EventDeduplicationId`'s rule: at least one character that is not white space. */
const NOT_ONLY_WHITESPACE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the service model's own white-space class, control characters included
  /[^\u0009-\u000D\u001C-\u0020\u1680\u2000-\u2006\u2008-\u200A\u2028\u2029\u205F\u3000]/;

export interface CustomBusPublisherOptions {
  /** The bus's ARN (`arn:aws:events:<region>:<account>:event-busv2/<name>/<id>`). */
  readonly eventBusArn: string;
  /** `Source` of every entry, e.g. `banking.events`. */
  readonly source: string;
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
  /**
   * Bytes one PutEvents request (and so one entry) may carry, entry sizes added up as AWS documents.
   * @default DEFAULT_MAX_ENTRY_BYTES (see the comment on `TIME_BYTES`)
   */
  readonly maxRequestBytes?: number;
}

/** One result entry of PutEvents, as the service model names its members. */
interface PutEventsResultEntry {
  readonly EventId?: string;
  readonly SequenceNumber?: string;
  readonly SuccessCode?: string;
  readonly ErrorCode?: string;
  readonly ErrorMessage?: string;
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

  readonly #rpc: EventBridgeV2Rpc;
  readonly #eventBusArn: string;
  readonly #source: string;
  readonly #sourceBytes: number;
  readonly #program: string;
  readonly #groupBy: EventGroupBy;

  constructor(options: CustomBusPublisherOptions) {
    if (options.source.trim() === '') {
      throw new ConfigurationError('EventBridge source must be a non-empty string', { field: 'source' });
    }
    this.#eventBusArn = parseEventBusV2Arn(options.eventBusArn, 'The custom bus ARN (eventBusArn)');
    this.limits = Object.freeze({
      maxEntriesPerBatch: CUSTOM_BUS_MAX_ENTRIES,
      maxBatchBytes: options.maxRequestBytes ?? DEFAULT_MAX_ENTRY_BYTES,
    });
    this.#rpc =
      options.rpc ??
      new EventBridgeV2Rpc({
        client: options.client ?? (new EventBridgeClient(boundedClientConfig) as CredentialsAndRegionSource),
      });
    this.#source = options.source;
    this.#sourceBytes = Buffer.byteLength(options.source, 'utf8');
    this.#program = options.program;
    this.#groupBy = options.groupBy ?? 'program';
  }

  /** The same bus, client and settings, for another program's events. */
  forProgram(program: string): CustomBusPublisher {
    return new CustomBusPublisher({
      eventBusArn: this.#eventBusArn,
      source: this.#source,
      program,
      groupBy: this.#groupBy,
      rpc: this.#rpc,
      maxRequestBytes: this.limits.maxBatchBytes,
    });
  }

  /** The group `event` is published in: events of one group must be accepted in sequence order. */
  eventGroup(event: BankingEvent): string | undefined {
    return eventGroupOf(event, this.#groupBy, this.#program);
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
    const entries = batch.map((event): CustomBusEntry => {
      const group = this.eventGroup(event);
      return {
        source: this.#source,
        detailType: event.type,
        detail: event.detail,
        time: Date.parse(event.created_dt),
        ...(group === undefined ? {} : { eventGroupId: group }),
        deduplicationId: deduplicationIdOf(event),
      };
    });
    let results: readonly PutEventsResultEntry[];
    try {
      const answer = await this.#rpc.callEncoded<{ Entries?: PutEventsResultEntry[] }>(
        'PutEvents',
        encodePutEventsRequest(this.#eventBusArn, entries),
        signal,
      );
      results = Array.isArray(answer.Entries) ? answer.Entries : [];
    } catch (error) {
      throw translatePutEventsFailure(error, {
        busLabel: `custom bus ${this.#eventBusArn}`,
        busContext: { eventBusArn: this.#eventBusArn },
        validationErrorNames: VALIDATION_ERROR_NAMES,
        batch,
        signal,
      });
    }
    // Entries come back in request order. Anything that is not a clear success counts as a
    // failure, so the core retries it rather than moving the checkpoint past it.
    return batch.map((_, index) => outcomeOf(results[index]));
  }
}

function outcomeOf(result: PutEventsResultEntry | undefined): EntryOutcome {
  if (result === undefined || result === null || typeof result !== 'object') {
    return {
      ok: false,
      errorCode: 'MissingResult',
      errorMessage: 'PutEvents returned no result for this entry',
    };
  }
  if (typeof result.ErrorCode === 'string' && result.ErrorCode !== '') {
    return {
      ok: false,
      errorCode: result.ErrorCode,
      errorMessage: typeof result.ErrorMessage === 'string' ? result.ErrorMessage : '',
    };
  }
  // PUBLISHED or DEDUPLICATED (the bus already has it); the model documents SuccessCode as
  // present on every successful entry, so a code it may add later is a success too.
  if (typeof result.SuccessCode === 'string' && result.SuccessCode !== '') return { ok: true };
  if (typeof result.EventId === 'string' && result.EventId !== '') return { ok: true };
  return {
    ok: false,
    errorCode: 'MissingSuccessCode',
    errorMessage: 'PutEvents returned neither a success code nor an error for this entry',
  };
}

/**
 * The entry's `DeduplicationId`: the bank's `id`, a quarantined event's fingerprint; hashed when
 * the bus would refuse it as it is (over 128 characters, or only white space).
 */
export function deduplicationIdOf(event: BankingEvent): string {
  const key = event.invalid?.fingerprint ?? event.id;
  if (NOT_ONLY_WHITESPACE.test(key)) return boundedBusId(key);
  return `sha256:${createHash('sha256').update(key, 'utf8').digest('hex')}`;
}
