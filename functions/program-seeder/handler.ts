/**
 * The provider of the stack's program seeding (`Custom::ProgramSeeding`, made by
 * `infra/constructs/program-seeding.ts`): on Create and Update it reconciles the programs table
 * with the seed list beside this code (`core/fleet/seed-plan.ts` says what changes), and answers
 * CloudFormation; on Delete it changes nothing (the table is retained, and its records with it,
 * like the checkpoints). Composition only.
 *
 * Every path answers CloudFormation, before the function's own timeout: the work gets the time
 * left less a margin, and a failure's reason is the error's message (the errors of this family
 * quote no secret). The physical id is the table's name, the same at every update, so
 * CloudFormation never replaces the resource (a replacement would send a Delete after the Create).
 */
import { readFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { boundedClientConfig } from '../adapters/aws/bounded-client-config.ts';
import { sendCustomResourceAnswer } from '../adapters/aws/custom-resource-response.ts';
import { DynamoDbProgramRegistry } from '../adapters/aws/dynamodb-program-registry.ts';
import { withScrubbedErrors } from '../adapters/aws/service-error-redaction.ts';
import { type SeedOutcome, seedRegistry } from '../core/fleet/seed-plan.ts';
import {
  parseSeedRequest,
  responseUrlOf,
  SEED_FILE,
  type SeedRequest,
  stackProgramsOf,
} from './seed-request.ts';

/** Kept back from the function's timeout to answer CloudFormation (up to three PUTs). */
const ANSWER_MARGIN_MS = 20_000;

const dynamodb = withScrubbedErrors(new DynamoDBClient(boundedClientConfig));

function log(level: 'INFO' | 'ERROR', message: string, fields: Record<string, unknown> = {}): void {
  process.stdout.write(`${JSON.stringify({ level, message, service: 'program-seeder', ...fields })}\n`);
}

export async function handler(
  event: unknown,
  context: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<void> {
  // Without a usable ResponseURL no answer can be sent: CloudFormation times the resource out.
  const url = responseUrlOf(event);
  const deadline = AbortSignal.timeout(
    Math.max(1_000, context.getRemainingTimeInMillis() - ANSWER_MARGIN_MS),
  );
  let request: SeedRequest | undefined;
  try {
    request = parseSeedRequest(event);
    const outcome = await reconcile(request, deadline);
    log('INFO', 'Programs seeded', { requestType: request.requestType, ...outcome });
    await sendCustomResourceAnswer(url, {
      status: 'SUCCESS',
      ...identity(event, request),
      data: { ...outcome },
    });
  } catch (error) {
    const reason = reasonOf(error, deadline);
    log('ERROR', 'Programs not seeded', { reason, code: (error as { code?: unknown }).code });
    await sendCustomResourceAnswer(url, { status: 'FAILED', reason, ...identity(event, request) });
  }
}

async function reconcile(request: SeedRequest, signal: AbortSignal): Promise<SeedOutcome> {
  const { properties } = request;
  if (request.requestType === 'Delete' || properties === undefined) {
    return { added: 0, updated: 0, removed: 0, unchanged: 0 };
  }
  const seed: unknown = JSON.parse(await readFile(new URL(`./${SEED_FILE}`, import.meta.url), 'utf8'));
  const programs = stackProgramsOf(seed, properties);
  const registry = new DynamoDbProgramRegistry({ client: dynamodb, tableName: properties.ProgramsTable });
  return seedRegistry(registry, programs, { signal });
}

/** The ids the answer must echo; from the raw event when the request itself could not be read. */
function identity(event: unknown, request: SeedRequest | undefined) {
  const raw = (typeof event === 'object' && event !== null ? event : {}) as Record<string, unknown>;
  const text = (value: unknown): string => (typeof value === 'string' ? value.slice(0, 1024) : '');
  return {
    physicalResourceId:
      request?.properties?.ProgramsTable ??
      request?.physicalResourceId ??
      (text(raw.PhysicalResourceId) || 'program-seeding'),
    stackId: request?.stackId ?? text(raw.StackId),
    requestId: request?.requestId ?? text(raw.RequestId),
    logicalResourceId: request?.logicalResourceId ?? text(raw.LogicalResourceId),
  };
}

function reasonOf(error: unknown, deadline: AbortSignal): string {
  if (deadline.aborted) {
    return 'The programs were not all seeded before the provider had to answer; deploy again to finish (what was written stays)';
  }
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : `${error.name}: ${error.message}`;
  }
  return 'The programs could not be seeded';
}
