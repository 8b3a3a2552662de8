/**
 * The claim-check bucket on S3: `PutObject` of an event's text under its key. The S3 client is
 * loaded on the first claim check only (most runs never need one), and built with the same
 * bounded timeouts as every other client of the poller.
 */
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { ConfigurationError, DeadlineExceededError, PublishError } from '../../core/errors.ts';
import type { ClaimCheckLocation, ClaimCheckStore } from '../../core/ports.ts';
import { withScrubbedErrors } from './service-error-redaction.ts';

export interface S3ClaimCheckStoreOptions {
  readonly bucket: string;
  /**
   * Settings for the client built on first use (region, credentials and endpoint still come from
   * the SDK's default chain). @default {}
   */
  readonly clientConfig?: S3ClientConfig;
  /** A client to use instead (tests). @default one built from `clientConfig` */
  readonly client?: S3Client;
}

/** What an S3 service error carries. */
interface S3ErrorShape {
  readonly name: string;
  readonly $metadata?: { readonly httpStatusCode?: number; readonly requestId?: string };
}

/**
 * @example
 * const store = new S3ClaimCheckStore({ bucket: config.claimCheckBucket, clientConfig: boundedClientConfig });
 * await store.put('program/12-id.json', event.detail, signal);
 */
export class S3ClaimCheckStore implements ClaimCheckStore {
  readonly #bucket: string;
  readonly #clientConfig: S3ClientConfig;
  #client:
    | Promise<{ client: S3Client; PutObjectCommand: typeof import('@aws-sdk/client-s3').PutObjectCommand }>
    | undefined;

  constructor(options: S3ClaimCheckStoreOptions) {
    if (options.bucket.trim() === '') {
      throw new ConfigurationError('The claim-check bucket name must not be empty', { field: 'bucket' });
    }
    this.#bucket = options.bucket;
    this.#clientConfig = options.clientConfig ?? {};
    if (options.client !== undefined) {
      const client = options.client;
      this.#client = import('@aws-sdk/client-s3').then(({ PutObjectCommand }) => ({
        client,
        PutObjectCommand,
      }));
    }
  }

  async put(key: string, body: string, signal: AbortSignal): Promise<ClaimCheckLocation> {
    const { client, PutObjectCommand } = await this.#load();
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: this.#bucket,
          Key: key,
          Body: body,
          ContentType: 'application/json; charset=utf-8',
        }),
        { abortSignal: signal },
      );
    } catch (error) {
      throw this.#translate(error, key, signal);
    }
    return { bucket: this.#bucket, key };
  }

  #load() {
    this.#client ??= import('@aws-sdk/client-s3').then(({ S3Client, PutObjectCommand }) => ({
      client: withScrubbedErrors(new S3Client(this.#clientConfig)),
      PutObjectCommand,
    }));
    return this.#client;
  }

  #translate(error: unknown, key: string, signal: AbortSignal): unknown {
    if (signal.aborted) {
      return signal.reason instanceof DeadlineExceededError
        ? signal.reason
        : new DeadlineExceededError(`S3 PutObject of ${key} was cut short by the invocation deadline`, {
            bucket: this.#bucket,
            key,
          });
    }
    const shape = (error instanceof Error ? error : new Error(String(error))) as Error & S3ErrorShape;
    const context = {
      bucket: this.#bucket,
      key,
      awsError: shape.name,
      status: shape.$metadata?.httpStatusCode,
      requestId: shape.$metadata?.requestId,
    };
    if (shape.name === 'NoSuchBucket') {
      return new ConfigurationError(`The claim-check bucket ${this.#bucket} does not exist`, context, error);
    }
    if (shape.name === 'AccessDenied' || shape.$metadata?.httpStatusCode === 403) {
      return new ConfigurationError(
        `The function role may not write to the claim-check bucket ${this.#bucket} (needs s3:PutObject on its objects)`,
        context,
        error,
      );
    }
    return new PublishError(
      `S3 PutObject of ${key} to the claim-check bucket ${this.#bucket} failed (${shape.name})`,
      { ...context, retryable: true },
      error,
    );
  }
}
