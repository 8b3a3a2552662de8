/**
 * A custom resource's answer to CloudFormation: one JSON document PUT to the request's presigned
 * `ResponseURL` (CloudFormation's "custom resource response objects"). Without it CloudFormation
 * waits an hour for the resource, so every path of the provider ends here, and the PUT is tried a
 * few times within the provider's own time. The URL is a credential of sorts: it is never logged
 * and never part of an error.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface CustomResourceAnswer {
  readonly status: 'SUCCESS' | 'FAILED';
  /** Why it failed; shown in the stack's events. Cut to `MAX_REASON_CHARS`. */
  readonly reason?: string;
  readonly physicalResourceId: string;
  readonly stackId: string;
  readonly requestId: string;
  readonly logicalResourceId: string;
  /** Attributes for `Fn::GetAtt`: small, flat values. */
  readonly data?: Readonly<Record<string, string | number>>;
}

/** The response object may be at most 4,096 bytes; the reason is kept well within it. */
export const MAX_REASON_CHARS = 1000;

const ATTEMPTS = 3;

/**
 * Sends `answer` to `url`, trying again after a failure (1 s, then 2 s) unless `signal` ends first.
 *
 * @throws Error saying how many attempts failed and the last status or error name (never the URL).
 */
export async function sendCustomResourceAnswer(
  url: URL,
  answer: CustomResourceAnswer,
  signal?: AbortSignal,
): Promise<void> {
  const reason =
    answer.reason === undefined
      ? undefined
      : answer.reason.length > MAX_REASON_CHARS
        ? `${answer.reason.slice(0, MAX_REASON_CHARS - 1)}…`
        : answer.reason;
  const body = JSON.stringify({
    Status: answer.status,
    Reason: reason ?? (answer.status === 'SUCCESS' ? 'OK' : 'Failed'),
    PhysicalResourceId: answer.physicalResourceId,
    StackId: answer.stackId,
    RequestId: answer.requestId,
    LogicalResourceId: answer.logicalResourceId,
    NoEcho: false,
    ...(answer.data === undefined ? {} : { Data: answer.data }),
  });
  let last = 'no attempt';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
    if (signal?.aborted) break;
    try {
      const status = await put(url, body, signal);
      if (status >= 200 && status < 300) return;
      last = `HTTP ${status}`;
    } catch (error) {
      last = error instanceof Error ? error.name : 'an error';
    }
    if (attempt < ATTEMPTS) await pause(1000 * 2 ** (attempt - 1), signal);
  }
  throw new Error(`The answer to CloudFormation could not be sent (${last}, after ${ATTEMPTS} attempts)`);
}

/** One PUT; the presigned URL was signed without a content type, so none is sent. */
function put(url: URL, body: string, signal?: AbortSignal): Promise<number> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      {
        method: 'PUT',
        headers: { 'content-type': '', 'content-length': Buffer.byteLength(body) },
        signal,
        timeout: 10_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () =>
      request.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })),
    );
    request.on('error', reject);
    request.end(body);
  });
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
