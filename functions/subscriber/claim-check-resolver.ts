/**
 * Claim-check resolution, as the SQS and SNS Extended Client Libraries do it for their pointers:
 * a pointer event (an event too large for the bus) becomes the full event, its detail read from
 * S3 and verified against the pointer (size and SHA-256 of the exact bytes, then the event's id,
 * program, sequence number and type) before it is parsed. A body that does not match is refused
 * with `ClaimCheckMismatchError`: a tampered or replaced object never reaches a handler.
 */
import { createHash } from 'node:crypto';
import { GetObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import type { ClaimCheckPointerDetail } from '../event-schema/event-types.generated.ts';
import { busFieldsOf } from './bus-delivery.ts';
import {
  ClaimCheckMismatchError,
  ClaimCheckReadError,
  EventValidationError,
  SubscriberConfigurationError,
} from './errors.ts';
import { completeEvent } from './event-parser.ts';
import type { ClaimCheckedEvent, ReceivedEvent, SubscriberEvent } from './subscriber-events.ts';

export interface ClaimCheckOptions {
  /**
   * The S3 client to read bodies with (a client you configured, instrumented, or pointed at a test
   * endpoint). Not with `s3ClientConfig`.
   *
   * @default - `new S3Client(s3ClientConfig ?? {})`, created on the first pointer
   */
  readonly s3Client?: Pick<S3Client, 'send'>;
  /** Configuration of the client the resolver creates. Not with `s3Client`. @default {} */
  readonly s3ClientConfig?: S3ClientConfig;
  /**
   * The claim-check bucket (stack output `ClaimCheckBucketName`). A pointer naming any other
   * bucket is refused, whatever the function's role may read.
   *
   * @default - any bucket the role may read
   */
  readonly bucket?: string;
}

/** The members a body must share with its pointer: a body of another event is not this event's. */
const IDENTITY_MEMBERS = ['id', 'program_id', 'sequence_number'] as const;

/**
 * Resolves claim-check pointers; build one per function, at module scope, so its S3 client is
 * reused across invocations.
 *
 * @example
 * const claimChecks = new ClaimCheckResolver({ s3Client: new S3Client({}), bucket: process.env.CLAIM_CHECK_BUCKET });
 * const event = await claimChecks.resolve(parseEvent(record.body));
 */
export class ClaimCheckResolver {
  readonly #options: ClaimCheckOptions;
  #client: Pick<S3Client, 'send'> | undefined;

  constructor(options: ClaimCheckOptions = {}) {
    if (options.s3Client !== undefined && options.s3ClientConfig !== undefined) {
      throw new SubscriberConfigurationError('ClaimCheckOptions: give s3Client or s3ClientConfig, not both', {
        option: 's3Client',
      });
    }
    if (options.bucket !== undefined && options.bucket.length === 0) {
      throw new SubscriberConfigurationError('ClaimCheckOptions.bucket must be a bucket name, got ""', {
        option: 'bucket',
      });
    }
    this.#options = options;
    this.#client = options.s3Client;
  }

  /** The event itself: a complete event as it is, a pointer's event read from S3 and verified. */
  async resolve(event: ReceivedEvent): Promise<SubscriberEvent> {
    if (event.kind !== 'claim_check') return event;
    const { claim_check: location } = event.detail;
    if (this.#options.bucket !== undefined && location.bucket !== this.#options.bucket) {
      throw new ClaimCheckMismatchError(
        `Claim check of event ${event.detail.id} names bucket ${location.bucket}, not the claim-check bucket ${this.#options.bucket}`,
        { eventId: event.detail.id, bucket: location.bucket },
      );
    }
    const body = await this.#read(event);
    return claimCheckedEvent(event, body);
  }

  async #read(event: ClaimCheckedEvent): Promise<Uint8Array> {
    const { bucket, key } = event.detail.claim_check;
    this.#client ??= new S3Client(this.#options.s3ClientConfig ?? {});
    try {
      const output = await this.#client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (output.Body === undefined) throw new Error('GetObject returned no body');
      return await output.Body.transformToByteArray();
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      throw new ClaimCheckReadError(
        `Could not read the claim check of event ${event.detail.id} (s3://${bucket}/${key}): ${reason}`,
        { eventId: event.detail.id, bucket, key },
        error,
      );
    }
  }
}

/**
 * The event a pointer stands for, from the bytes stored for it: refused unless they are exactly
 * the bytes the pointer describes (size, SHA-256) and the detail of the same event.
 */
export function claimCheckedEvent(pointer: ClaimCheckedEvent, body: Uint8Array): SubscriberEvent {
  const { claim_check: location, id } = pointer.detail;
  const context = { eventId: id, bucket: location.bucket, key: location.key };
  const sha256 = createHash('sha256').update(body).digest('hex');
  if (body.byteLength !== location.size_bytes || sha256 !== location.sha256) {
    throw new ClaimCheckMismatchError(
      `Claim check of event ${id} (s3://${location.bucket}/${location.key}) is not the body its pointer names: ` +
        `${body.byteLength} bytes with SHA-256 ${sha256}, expected ${location.size_bytes} bytes with ${location.sha256}`,
      context,
    );
  }
  let detail: unknown;
  try {
    detail = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch (error) {
    throw new EventValidationError(
      `Claim check of event ${id} is not JSON text: ${error instanceof Error ? error.message : String(error)}`,
      'detail',
      context,
      error,
    );
  }
  const event = completeEvent(pointer.envelope, pointer.detailType, detail, location, busFieldsOf(pointer));
  assertSameEvent(pointer.detail, event);
  return event;
}

function assertSameEvent(pointer: ClaimCheckPointerDetail, event: SubscriberEvent): void {
  const body = event.detail as unknown as Readonly<Record<string, unknown>>;
  // A quarantined event's pointer carries the poller's own id and position; its body, the bank's.
  const members =
    event.kind === 'invalid_event' ? (['fingerprint'] as const) : ([...IDENTITY_MEMBERS, 'type'] as const);
  for (const member of members) {
    const expected = (pointer as unknown as Readonly<Record<string, unknown>>)[member];
    if (body[member] !== expected) {
      throw new ClaimCheckMismatchError(
        `Claim check of event ${pointer.id} holds another event: detail.${member} is ${JSON.stringify(body[member])}, the pointer says ${JSON.stringify(expected)}`,
        { eventId: pointer.id, field: `detail.${member}` },
      );
    }
  }
}
