/**
 * The bank checks of `doctor`, in plain words: the secret is readable and well formed, its client
 * certificate (if any) can be used and is not about to expire, a token is issued, `GET /events`
 * answers; each only if the one before passed. Run by the CLI with
 * `--local`, and by the deployed function for a `doctor-bank` operator request. The results name
 * the base URL's host and the client id, never the secret or a token (every text is redacted
 * with both before it is returned).
 */
import { ClientCertificateError, DeadlineExceededError } from '../../core/errors.ts';
import type { BankingCredentials, CredentialsProvider } from '../../core/ports.ts';
import { redact } from '../secret-redaction.ts';
import { BankConnections } from './bank-connections.ts';
import { BankingEventFeed } from './banking-event-feed.ts';
import { checkBankTls, checkValidity, daysLeft } from './client-certificate.ts';
import { ClientCredentialsTokenProvider } from './token-cache.ts';

export type CheckVerdict = 'ok' | 'failed' | 'warning' | 'skipped';

export interface CheckResult {
  readonly check: string;
  readonly verdict: CheckVerdict;
  /** What was found, in plain words. */
  readonly detail: string;
  /** What to do, for a failure or a warning. */
  readonly fix?: string;
}

export interface BankCheckOptions {
  readonly program: string;
  /** Named in the fix for an unreadable secret. */
  readonly secretId: string;
  /** Read afresh: a cached value would hide a secret changed since. */
  readonly credentials: CredentialsProvider;
  readonly timeoutMs: number;
  readonly cursorParam?: string;
  readonly limitParam?: string;
}

/** Fewer days left than this on the client certificate is a warning: time to renew it. */
const CERTIFICATE_RENEWAL_DAYS = 30;

/** A check that passed, failed (with what to do) or was not run; also `doctor`'s own checks. */
export const ok = (check: string, detail: string): CheckResult => ({ check, verdict: 'ok', detail });
export const failed = (check: string, detail: string, fix: string): CheckResult => ({
  check,
  verdict: 'failed',
  detail,
  fix,
});
export const skipped = (check: string, detail: string): CheckResult => ({
  check,
  verdict: 'skipped',
  detail,
});
const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** The three check names of a program, as `doctor` prints them. */
export function bankCheckNames(program: string): { secret: string; token: string; feed: string } {
  return { secret: `secret (${program})`, token: `token (${program})`, feed: `GET /events (${program})` };
}

/** Secret, token and feed of one program, each only if the one before passed. */
export async function checkBank(options: BankCheckOptions): Promise<CheckResult[]> {
  const names = bankCheckNames(options.program);
  let value: BankingCredentials;
  try {
    value = await options.credentials.get();
  } catch (error) {
    return [
      failed(
        names.secret,
        message(error),
        `store the credentials: banking-events-poller secret set --secret-id ${options.secretId}`,
      ),
      skipped(names.token, 'needs a valid secret'),
      skipped(names.feed, 'needs a valid secret'),
    ];
  }
  const held: string[] = [value.clientSecret];
  const results = [
    ok(names.secret, `readable and well formed; base_url ${value.baseUrl}, client_id ${value.clientId}`),
  ];
  const certificate = checkCertificate(options.program, value);
  if (certificate?.verdict === 'failed') {
    results.push(
      certificate,
      skipped(names.token, 'needs a usable client certificate'),
      skipped(names.feed, 'needs a token'),
    );
  } else {
    if (certificate !== undefined) results.push(certificate);
    results.push(...(await checkTokenAndFeed(options, value, names, held)));
  }
  return results.map((result) => redactResult(result, held));
}

async function checkTokenAndFeed(
  options: BankCheckOptions,
  value: BankingCredentials,
  names: ReturnType<typeof bankCheckNames>,
  held: string[],
): Promise<CheckResult[]> {
  // The checks' own connections, destroyed once they are done: a check is one-shot, in the CLI
  // (whose process would otherwise hold them) as in a warm function (which would keep them open).
  const connections = new BankConnections();
  try {
    return await checkTokenAndFeedOver(connections, options, value, names, held);
  } finally {
    await connections.destroy();
  }
}

async function checkTokenAndFeedOver(
  connections: BankConnections,
  options: BankCheckOptions,
  value: BankingCredentials,
  names: ReturnType<typeof bankCheckNames>,
  held: string[],
): Promise<CheckResult[]> {
  const { credentials, timeoutMs } = options;
  const tokens = new ClientCredentialsTokenProvider({ credentials, connections });
  try {
    held.push(await tokens.getToken(AbortSignal.timeout(timeoutMs)));
  } catch (error) {
    return [
      failed(
        names.token,
        message(error),
        'check base_url, client_id and client_secret (banking-events-poller secret set --verify)',
      ),
      skipped(names.feed, 'needs a token'),
    ];
  }
  const results = [ok(names.token, `POST ${new URL(value.baseUrl).host}/oauth2/token issued a token`)];
  const feed = new BankingEventFeed({
    credentials,
    tokens,
    cursorParam: options.cursorParam,
    limitParam: options.limitParam,
    limit: 1,
  });
  try {
    const page = await feed.poll({ after: null, signal: AbortSignal.timeout(timeoutMs) });
    const first = page.events[0];
    results.push(
      ok(
        names.feed,
        first === undefined
          ? 'answered: no events yet'
          : `answered: the oldest event is ${first.sequence_number}`,
      ),
    );
  } catch (error) {
    if (error instanceof DeadlineExceededError) {
      results.push({
        check: names.feed,
        verdict: 'warning',
        detail: `no answer within ${timeoutMs / 1000} s`,
        fix: 'a long poll holds while there is nothing new: an empty feed looks like this; otherwise check the service',
      });
    } else
      results.push(failed(names.feed, message(error), 'check base_url and that the client may read events'));
  }
  return results;
}

/** The secret's mutual TLS material: whose certificate, until when; nothing when the secret has none. */
function checkCertificate(program: string, value: BankingCredentials): CheckResult | undefined {
  if (value.tls === undefined) return undefined;
  const check = `client certificate (${program})`;
  const fix =
    'store a valid client_certificate and its client_key in the secret (see docs/deploy.md, mutual TLS)';
  try {
    const { certificate } = checkBankTls(value.tls);
    if (certificate === undefined) return ok(check, 'none; ca_certificate names the CA of the bank');
    const now = Date.now();
    checkValidity(certificate, now);
    const left = daysLeft(certificate, now);
    const detail = `${certificate.subject}, issued by ${certificate.issuer}, expires ${certificate.validTo.toISOString()} (${left} days left)`;
    if (left < CERTIFICATE_RENEWAL_DAYS) {
      return {
        check,
        verdict: 'warning',
        detail,
        fix: 'renew it with the bank and store the new one in the secret',
      };
    }
    return ok(check, detail);
  } catch (error) {
    if (error instanceof ClientCertificateError) return failed(check, error.message, fix);
    throw error;
  }
}

function redactResult(result: CheckResult, held: readonly string[]): CheckResult {
  return {
    ...result,
    detail: redact(result.detail, held),
    ...(result.fix === undefined ? {} : { fix: redact(result.fix, held) }),
  };
}
