/**
 * AWS error bodies kept from quoting the caller's credentials. A signature error may quote the
 * canonical request AWS expected, headers included: the session token in `x-amz-security-token`
 * (in the message for JSON services; as `CanonicalRequest`/`StringToSign` fields for S3, which the
 * SDK copies onto the error it throws). Loggers print an error's fields and its cause chain, so
 * the error itself is scrubbed where the SDK hands it over.
 */
import { redact } from '../secret-redaction.ts';

/** What is left of a message is bounded: an AWS message is a sentence or two. */
const MESSAGE_MAX_CHARS = 500;
/** Fields that quote the signed request, or the raw body, and are dropped whole. */
const QUOTING_FIELD = /canonical|stringtosign|signatureprovided|^\$responseBodyText$|^\$response$/i;
/** Fields of an SDK error that carry no text from the body. */
const KEPT_AS_THEY_ARE = new Set(['name', '$fault', '$metadata', '$retryable', 'stack']);

export interface AwsCredentialsLike {
  readonly secretAccessKey?: string;
  readonly sessionToken?: string;
}

/**
 * An AWS error message without a quoted canonical request or string to sign, with the credentials
 * redacted (in any encoding, see `redact`), bounded.
 */
export function safeAwsMessage(message: string, credentials: AwsCredentialsLike | undefined): string {
  const before = message.split(/The Canonical String|The String-to-Sign/i)[0]!.trim();
  return redact(before, [credentials?.sessionToken, credentials?.secretAccessKey]).slice(
    0,
    MESSAGE_MAX_CHARS,
  );
}

/**
 * Scrubs `error` in place: the message made safe (`safeAwsMessage`), fields that quote the
 * signed request or the raw body dropped, every other text field redacted. Never throws.
 */
export function scrubServiceError(error: unknown, credentials: AwsCredentialsLike | undefined): void {
  if (typeof error !== 'object' || error === null) return;
  const fields = error as Record<string, unknown>;
  try {
    for (const key of Object.keys(fields)) {
      if (KEPT_AS_THEY_ARE.has(key)) continue;
      if (QUOTING_FIELD.test(key)) {
        delete fields[key];
      } else if (typeof fields[key] === 'string') {
        fields[key] = redact(fields[key], [credentials?.sessionToken, credentials?.secretAccessKey]);
      }
    }
    if (error instanceof Error) replaceMessage(error, safeAwsMessage(error.message, credentials));
  } catch {
    if (error instanceof Error) replaceMessage(error, 'an AWS error whose message could not be made safe');
  }
}

/** The stack starts with the message as it was when the error was made: it goes too. */
function replaceMessage(error: Error, message: string): void {
  error.message = message;
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  error.stack = [`${error.name}: ${message}`, ...frames].join('\n');
}

/** The part of an SDK v3 client this needs (every `@aws-sdk/client-*` client has it). */
export interface ScrubbableClient {
  readonly middlewareStack: {
    add(middleware: unknown, options: { step: 'initialize'; name: string; override: boolean }): void;
  };
  readonly config: { credentials?: unknown };
}

/**
 * Adds to `client` an outermost middleware (after every retry) that scrubs each error it throws
 * (`scrubServiceError`) with the client's own credentials. Returns the client.
 *
 * @example
 * const dynamodb = withScrubbedErrors(new DynamoDBClient(boundedClientConfig));
 */
export function withScrubbedErrors<C extends ScrubbableClient>(client: C): C {
  const credentialsOf = async (): Promise<AwsCredentialsLike | undefined> => {
    const provider = client.config.credentials;
    try {
      return typeof provider === 'function'
        ? ((await provider()) as AwsCredentialsLike)
        : (provider as AwsCredentialsLike | undefined);
    } catch {
      return undefined;
    }
  };
  client.middlewareStack.add(
    (next: (args: unknown) => Promise<unknown>) => async (args: unknown) => {
      try {
        return await next(args);
      } catch (error) {
        scrubServiceError(error, await credentialsOf());
        throw error;
      }
    },
    { step: 'initialize', name: 'scrubServiceErrors', override: true },
  );
  return client;
}
