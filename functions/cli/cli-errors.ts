/**
 * The CLI's errors and their one-line rendering. Every error a user sees names the problem and the
 * fix on one line, and maps to an exit code scripts can trust (`exit-codes.ts`). Messages never
 * carry a secret: the core's errors are built that way, and SDK messages are passed through only
 * for AWS errors, which name resources, not credentials.
 */
import { PollerError } from '../core/errors.ts';
import { EXIT_CODES, type ExitCode } from './exit-codes.ts';

/**
 * A problem the CLI detected itself, with the fix to print after it; one of the poller's errors
 * (a stable `code`), with the exit code it ends the command with.
 */
export class CliError extends PollerError {
  /** The code of a failure with no code of its own. */
  static readonly code: string = 'OPERATION_FAILED';

  readonly exitCode: ExitCode;
  readonly fix: string;

  constructor(problem: string, fix: string, options: { code?: string; exitCode?: ExitCode } = {}) {
    super(options.code ?? CliError.code, problem, { context: { fix } });
    this.fix = fix;
    this.exitCode = options.exitCode ?? EXIT_CODES.failed;
  }
}

/** The command line is wrong; nothing was done. */
export class UsageError extends CliError {
  static override readonly code = 'USAGE_INVALID';

  constructor(problem: string, fix: string) {
    super(problem, fix, { code: UsageError.code, exitCode: EXIT_CODES.usage });
  }
}

/** A safety check refused the change; nothing was changed. */
export class RefusedError extends CliError {
  static override readonly code = 'REFUSED';

  constructor(problem: string, fix: string) {
    super(problem, fix, { code: RefusedError.code, exitCode: EXIT_CODES.refused });
  }
}

/** The user stopped the command (a Ctrl-C during a prompt, or a second one). */
export class InterruptedError extends CliError {
  static override readonly code = 'INTERRUPTED';

  constructor(what = 'Interrupted') {
    super(what, 'nothing more was done', { code: InterruptedError.code, exitCode: EXIT_CODES.interrupted });
  }
}

/**
 * A program its deployment does not have: no output of its stack and no record of its programs
 * table name it. Nothing was read or changed.
 */
export class ProgramUnknownError extends CliError {
  static override readonly code = 'PROGRAM_UNKNOWN';

  readonly program: string;

  constructor(program: string, problem: string, fix: string) {
    super(problem, fix, { code: ProgramUnknownError.code, exitCode: EXIT_CODES.usage });
    this.program = program;
  }
}

/** The CLI's own errors, each with its stable `code`. */
export const CLI_ERRORS = [
  CliError,
  UsageError,
  RefusedError,
  InterruptedError,
  ProgramUnknownError,
] as const;

export interface Failure {
  readonly message: string;
  readonly exitCode: ExitCode;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ECONNRESET',
  'EHOSTUNREACH',
]);

/** Fixes for the core's error codes when they reach the command line. */
const POLLER_FIXES: Readonly<Record<string, string>> = {
  CONFIGURATION_INVALID: 'fix the value named above (see `--help`)',
  AUTHENTICATION_FAILED:
    'check client_id, client_secret and base_url in the secret (`banking-events-poller secret set --verify`)',
  UPSTREAM_HTTP_ERROR: 'check that base_url points at the banking service and that it is up, then try again',
  PAYLOAD_INVALID:
    'the banking service answered something unexpected; check base_url, or contact the service',
  PAGE_UNREADABLE:
    'the banking service answered a page that is not JSON; check base_url (a proxy page?), or contact the service',
  DEADLINE_EXCEEDED:
    'the banking service did not answer in time; check base_url and your network, then try again',
  FEED_CURSOR_IGNORED: 'set --cursor-param to the name the banking service uses',
  FEED_PROGRAM_MISMATCH: "put the program's own credentials in its secret",
};

/** One line naming the problem and the fix, and the exit code, for anything a command threw. */
export function describeFailure(error: unknown): Failure {
  if (error instanceof CliError)
    return { message: oneLine(`${error.message}: ${error.fix}`), exitCode: error.exitCode };
  if (error instanceof PollerError) {
    const fix = POLLER_FIXES[error.code];
    return {
      message: oneLine(fix === undefined ? error.message : `${error.message}: ${fix}`),
      exitCode: EXIT_CODES.failed,
    };
  }
  if (!(error instanceof Error)) return { message: oneLine(String(error)), exitCode: EXIT_CODES.failed };
  return { message: oneLine(describeSdkError(error)), exitCode: EXIT_CODES.failed };
}

/** AWS SDK and network errors, in the words of the AWS CLI's own advice. */
function describeSdkError(error: Error): string {
  const code = (error as { code?: unknown }).code ?? (error.cause as { code?: unknown } | undefined)?.code;
  if (error.name === 'CredentialsProviderError' || /Could not load credentials/i.test(error.message)) {
    return 'No AWS credentials found: run `aws configure` or `aws sso login`, set AWS_PROFILE, or pass --profile';
  }
  if (/Region is missing/i.test(error.message)) {
    return 'No AWS region: pass --region, set AWS_REGION, or give your profile a region';
  }
  if (typeof code === 'string' && NETWORK_CODES.has(code)) {
    return `Cannot reach the AWS endpoint (${code}): check your network, or AWS_ENDPOINT_URL if you set it`;
  }
  if (error.name === 'TimeoutError' || error.name === 'RequestTimeout') {
    return 'The AWS endpoint did not answer in time: check your network, or AWS_ENDPOINT_URL if you set it';
  }
  if (/AccessDenied|UnauthorizedOperation|NotAuthorized/.test(error.name)) {
    return `Permission denied by AWS (${error.name}): ${error.message}; use credentials allowed to do this (--profile)`;
  }
  if (/ExpiredToken|InvalidClientTokenId|UnrecognizedClient|InvalidSignature/.test(error.name)) {
    return `AWS refused the credentials (${error.name}): refresh them (\`aws sso login\`) or pick another --profile`;
  }
  return `${error.name}: ${error.message}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
