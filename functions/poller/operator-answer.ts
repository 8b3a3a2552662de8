/**
 * Operator answers within Lambda's response limit. A synchronous invocation's answer is the
 * handler's result as the runtime serializes it (`JSON.stringify`), and Lambda refuses one over
 * 6,291,556 bytes of that text (`Function.ResponseSizeTooLarge`, "Response payload size exceeded
 * maximum allowed payload size (6291556 bytes)"): the CLI would get that error instead of the
 * answer. So answers are measured whole, in UTF-8 bytes of their JSON, `detail`'s escapes, `data`
 * and the envelope included:
 *
 * - a replay pages by size (`ReplayPage`): each event (a dry run) and each missing number is
 *   measured before it joins the answer, and the first that would not fit ends the page, its
 *   `through` just before it; the CLI asks again from there, as it does after a deadline;
 * - an answer still over the limit (an `event` lookup of a large event, a page of one such event)
 *   is left in the claim-check bucket under `operator-answers/` and the function answers where
 *   (`stored-answer`: bucket, key, size, SHA-256); the CLI reads it there (`s3:GetObject` on that prefix
 *   only, the recovery grant) and checks it before use. Without a bucket (`CLAIM_CHECK_BUCKET`
 *   unset) it answers how large it would have been (`oversize-answer`), and the CLI names `--local`.
 */
import { createHash } from 'node:crypto';
import { OPERATOR_ANSWER_PREFIX } from '../cli/operator-resource-names.ts';
import type { BankingEvent } from '../core/banking-event.ts';
import type { ClaimCheckStore } from '../core/ports.ts';
import type { OperatorRequestKind, OperatorResult } from './operator-request.ts';

/** Lambda's limit on a synchronous invocation's answer, in bytes of its JSON. */
export const LAMBDA_RESPONSE_MAX_BYTES = 6_291_556;

/**
 * How full a replay's page may get: under the limit by enough that redaction (the answer's
 * strings are redacted after the page is made) cannot push it over.
 */
export const REPLAY_PAGE_MAX_BYTES = 6_000_000;

/**
 * An answer too large to return, left in the claim-check bucket: the CLI reads it there. A kind
 * of its own, so that a CLI older than this takes it for no result at all, never for one.
 */
export interface StoredAnswer {
  readonly kind: 'stored-answer';
  /** The kind of the request it answers. */
  readonly answers: OperatorRequestKind;
  readonly stored: {
    readonly bucket: string;
    readonly key: string;
    /** Bytes of the object: the answer's JSON. */
    readonly bytes: number;
    /** Hex SHA-256 of the object, checked before the answer is used. */
    readonly sha256: string;
  };
}

/** An answer too large to return, with nowhere to leave it (no claim-check bucket). */
export interface OversizeAnswer {
  readonly kind: 'oversize-answer';
  /** The kind of the request it answers. */
  readonly answers: OperatorRequestKind;
  readonly oversize: { readonly bytes: number; readonly maxBytes: number };
}

/** What an operator request answers: its result, or where it is, or that it could not be carried. */
export type OperatorAnswer = OperatorResult | StoredAnswer | OversizeAnswer;

/** Bytes of `value` as the runtime sends it. */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

export interface DeliveryOptions {
  /** The request's program: stored answers are kept per program. */
  readonly program: string;
  /** The claim-check bucket; none: an answer over the limit is answered `oversize`. */
  readonly store: ClaimCheckStore | undefined;
  readonly signal: AbortSignal;
}

/**
 * `result` itself when its JSON is within the limit; else stored, and where it is (or, with no
 * bucket, how large it was).
 *
 * @example
 * return deliverAnswer(result, { program: 'default', store, signal });
 */
export async function deliverAnswer(
  result: OperatorResult,
  options: DeliveryOptions,
): Promise<OperatorAnswer> {
  const text = JSON.stringify(result);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= LAMBDA_RESPONSE_MAX_BYTES) return result;
  if (options.store === undefined)
    return {
      kind: 'oversize-answer',
      answers: result.kind,
      oversize: { bytes, maxBytes: LAMBDA_RESPONSE_MAX_BYTES },
    };
  const sha256 = createHash('sha256').update(text, 'utf8').digest('hex');
  // Named by content: asking twice leaves one object.
  const key = `${OPERATOR_ANSWER_PREFIX}${options.program}/${result.kind}-${sha256}.json`;
  const location = await options.store.put(key, text, options.signal);
  return {
    kind: 'stored-answer',
    answers: result.kind,
    stored: { bucket: location.bucket, key: location.key, bytes, sha256 },
  };
}

/** What of one replay step the page took. */
export interface AdmittedStep {
  /** The events taken (a dry run); none when publishing. */
  readonly events: readonly BankingEvent[];
  readonly missing: readonly number[];
  /** Every number up to here is in the answer (or published); the next request starts after it. */
  readonly through: number;
  /** The page is full: the step was cut, and the answer goes now. */
  readonly full: boolean;
}

/** Room for the envelope's numbers (`published`, `through`) to grow after it is measured. */
const ENVELOPE_RESERVE_BYTES = 64;

/**
 * A replay's answer filling up chunk by chunk. Events (a dry run) and missing numbers join in
 * sequence order, each measured before it is added; the first that would not fit ends the page.
 * The first item of a page always joins, so every answer moves the replay on; an answer that is
 * then still too large is stored (`deliverAnswer`).
 */
export class ReplayPage {
  readonly #maxBytes: number;
  #bytes: number;
  #items = 0;

  /** `envelope`: the answer without events or missing numbers. */
  constructor(envelope: unknown, maxBytes = REPLAY_PAGE_MAX_BYTES) {
    this.#maxBytes = maxBytes;
    this.#bytes = jsonBytes(envelope) + ENVELOPE_RESERVE_BYTES;
  }

  /** Bytes of the answer so far (the envelope and its reserve included). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Takes what fits of a step (events only when `withEvents`: a dry run), in sequence order.
   * A step's numbers are contiguous (each an event or missing), so a cut before number `n` leaves
   * the page complete through `n - 1`.
   */
  admit(
    step: {
      readonly events: readonly BankingEvent[];
      readonly missing: readonly number[];
      readonly through: number;
    },
    withEvents: boolean,
  ): AdmittedStep {
    const items = [
      ...(withEvents ? step.events.map((event) => ({ sequence: event.sequence_number, event })) : []),
      ...step.missing.map((sequence) => ({ sequence, event: undefined })),
    ].sort((a, b) => a.sequence - b.sequence);
    const events: BankingEvent[] = [];
    const missing: number[] = [];
    for (const item of items) {
      // A comma before each item but the first: counted for all, a byte over at most.
      const cost = (item.event === undefined ? String(item.sequence).length : jsonBytes(item.event)) + 1;
      if (this.#items > 0 && this.#bytes + cost > this.#maxBytes) {
        return { events, missing, through: item.sequence - 1, full: true };
      }
      this.#bytes += cost;
      this.#items += 1;
      if (item.event === undefined) missing.push(item.sequence);
      else events.push(item.event);
    }
    return { events, missing, through: step.through, full: false };
  }
}
