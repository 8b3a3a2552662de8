/**
 * Where a command that needs the banking service runs. For a deployed stack (`--stack`), in the
 * poller function: the CLI sends it an operator request (`lambda:InvokeFunction`, RequestResponse)
 * and the function answers with the secret it already holds, so the secret never reaches this
 * machine. With `--local`, or without a stack, here: the CLI reads the secret itself
 * (`secretsmanager:GetSecretValue`) and calls the banking service from this machine.
 *
 * An answer too large for Lambda to return (`operator-answer.ts`) is left in the claim-check
 * bucket: the client reads it there (`s3:GetObject` on `operator-answers/*`), checks its size and
 * SHA-256, and hands the command the whole answer as if it had come back from the invocation.
 */
import { createHash } from 'node:crypto';
import { InvokeCommand } from '@aws-sdk/client-lambda';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { OversizeAnswer, StoredAnswer } from '../poller/operator-answer.ts';
import { type OperatorRequest, type OperatorResult, operatorInvocation } from '../poller/operator-request.ts';
import type { AwsClients } from './aws-clients.ts';
import { CliError, UsageError } from './cli-errors.ts';
import type { Deployment } from './deployment.ts';
import { OPERATOR_ANSWER_PREFIX } from './operator-resource-names.ts';
import { localSecretId } from './program-secret.ts';

/** The flags that choose where: `--local`, and `--secret-id` (which only the local path reads). */
export interface RouteFlags {
  readonly local?: boolean;
  readonly secretId?: string;
}

/** The help line of `--local`, the same for every command that has it. */
export const LOCAL_OPTION_HELP =
  'run here: read the secret with your credentials and call the banking service from this machine ' +
  '(the simulator, or a service this machine may reach); default with --stack: the deployed function does it';

/** The help line of `--secret-id` beside `--local`, the same for every command that has both. */
export const SECRET_ID_OPTION_HELP =
  "the program's secret, read here (--local, or without --stack; default: the stack's SecretArn<Program> " +
  "output, else the program's record in its programs table)";

export type BankRoute =
  | { readonly kind: 'function'; readonly client: OperatorClient }
  | { readonly kind: 'local'; readonly secretId: string };

/**
 * The function for a stack, unless `--local`; else the secret named by `--secret-id`, or the
 * program's as its deployment names it (its stack's outputs, else its record: `program-secret.ts`).
 * `--secret-id` with a stack but without `--local` is refused: it would read the secret here.
 */
export async function bankRoute(
  aws: AwsClients,
  deployment: Deployment,
  program: string,
  flags: RouteFlags,
): Promise<BankRoute> {
  if (flags.local === true || deployment.stackName === undefined)
    return { kind: 'local', secretId: await localSecretId(aws, deployment, program) };
  if (flags.secretId !== undefined) {
    throw new UsageError(
      '--secret-id reads the secret on this machine, but with --stack the deployed function reads its own',
      'leave --secret-id out, or add --local to read that secret and call the banking service from here',
    );
  }
  return { kind: 'function', client: new OperatorClient(aws, deployment.pollerFunction) };
}

/** Sends operator requests to the deployed poller function. */
export class OperatorClient {
  readonly functionName: string;
  readonly #aws: AwsClients;

  constructor(aws: AwsClients, functionName: string) {
    this.#aws = aws;
    this.functionName = functionName;
  }

  /**
   * Invokes the function with `request` and returns its result, checked to be of the same kind.
   *
   * @throws CliError when the invocation fails, the function answers with an error (a refused
   *   request, the banking service's failure), or its answer is not a result of that kind.
   */
  async send<K extends OperatorRequest['kind']>(
    request: OperatorRequest & { readonly kind: K },
  ): Promise<Extract<OperatorResult, { kind: K }>> {
    const answer = await this.#aws.lambda
      .send(
        new InvokeCommand({
          FunctionName: this.functionName,
          InvocationType: 'RequestResponse',
          Payload: new TextEncoder().encode(JSON.stringify(operatorInvocation(request))),
        }),
      )
      .catch((error: unknown) => {
        throw new CliError(
          `Could not invoke the poller function ${this.functionName}: ${error instanceof Error ? error.message : String(error)}`,
          'operators need lambda:InvokeFunction on it (grantOperatorRecovery, docs/security.md "Operator permissions"); or pass --local to work from this machine',
        );
      });
    const text = answer.Payload === undefined ? '' : new TextDecoder().decode(answer.Payload);
    if (answer.FunctionError !== undefined) {
      const { errorType, errorMessage } = parseFunctionError(text);
      throw new CliError(
        `The poller function ${this.functionName} answered ${request.kind} with ${errorType}: ${errorMessage}`,
        'see its log group for the invocation; nothing was changed unless the message says so',
      );
    }
    let result: unknown;
    try {
      result = JSON.parse(text);
    } catch {
      result = undefined;
    }
    if (isAnswer<StoredAnswer>(result, 'stored-answer', 'stored', request.kind))
      result = await this.#readStored(request.kind, result.stored);
    else if (isAnswer<OversizeAnswer>(result, 'oversize-answer', 'oversize', request.kind)) {
      throw new CliError(
        `The poller function ${this.functionName} answered ${request.kind} with ${result.oversize.bytes} bytes, more than ` +
          `Lambda returns from an invocation (${result.oversize.maxBytes}), and it has no claim-check bucket to leave the answer in`,
        'run the command with --local: it reads the secret and calls the banking service from this machine',
      );
    }
    if (
      typeof result !== 'object' ||
      result === null ||
      (result as { kind?: unknown }).kind !== request.kind
    ) {
      throw new CliError(
        `The poller function ${this.functionName} did not answer ${request.kind} with its result`,
        'deploy this version of the package (cdk deploy): the function predates operator requests',
      );
    }
    return result as Extract<OperatorResult, { kind: K }>;
  }

  /** The answer the function left in the claim-check bucket, checked against its size and digest. */
  async #readStored(kind: string, stored: StoredAnswer['stored']): Promise<unknown> {
    const where = `s3://${stored.bucket}/${stored.key}`;
    const readable =
      typeof stored.bucket === 'string' &&
      typeof stored.key === 'string' &&
      stored.key.startsWith(OPERATOR_ANSWER_PREFIX) &&
      typeof stored.sha256 === 'string' &&
      Number.isSafeInteger(stored.bytes) &&
      stored.bytes <= MAX_STORED_ANSWER_BYTES;
    if (!readable) {
      throw new CliError(
        `The poller function ${this.functionName} answered ${kind} with an answer at ${where} that this CLI does not read`,
        'use the CLI of the deployed version of the package, or deploy this one',
      );
    }
    let body: Uint8Array;
    try {
      const object = await this.#aws.s3.send(
        new GetObjectCommand({ Bucket: stored.bucket, Key: stored.key }),
      );
      body = (await object.Body?.transformToByteArray()) ?? new Uint8Array();
    } catch (error) {
      throw new CliError(
        `Could not read the poller function's answer to ${kind}, left at ${where} (too large to return): ` +
          `${error instanceof Error ? error.message : String(error)}`,
        `operators need s3:GetObject on ${OPERATOR_ANSWER_PREFIX}* of the claim-check bucket (grantOperatorRecovery, ` +
          'docs/security.md "Operator permissions"; deploy this version), or run the command with --local',
      );
    }
    const sha256 = createHash('sha256').update(body).digest('hex');
    if (body.length !== stored.bytes || sha256 !== stored.sha256) {
      throw new CliError(
        `The answer at ${where} is not the one the poller function ${this.functionName} left there (its size or SHA-256 differs)`,
        'run the command again',
      );
    }
    try {
      return JSON.parse(new TextDecoder().decode(body));
    } catch {
      // Not an answer: reported as one that is not of its kind.
      return undefined;
    }
  }
}

/** A stored answer is a few times the largest event the bank may send (10 MiB): more is not ours. */
const MAX_STORED_ANSWER_BYTES = 64 * 1024 * 1024;

/** Whether `value` is an answer of kind `kind` (`stored-answer`, …) to a request of `answers`, carrying `field`. */
function isAnswer<T>(value: unknown, kind: string, field: string, answers: string): value is T {
  if (typeof value !== 'object' || value === null) return false;
  const answer = value as Record<string, unknown>;
  return (
    answer.kind === kind &&
    answer.answers === answers &&
    typeof answer[field] === 'object' &&
    answer[field] !== null
  );
}

function parseFunctionError(text: string): { errorType: string; errorMessage: string } {
  try {
    const parsed = JSON.parse(text) as { errorType?: unknown; errorMessage?: unknown };
    return {
      errorType: typeof parsed.errorType === 'string' ? parsed.errorType : 'an error',
      errorMessage: typeof parsed.errorMessage === 'string' ? parsed.errorMessage : text.slice(0, 500),
    };
  } catch {
    return { errorType: 'an error', errorMessage: text.slice(0, 500) };
  }
}
