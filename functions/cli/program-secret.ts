/**
 * The secret of a program as a command reads it on this machine (`--local`, `run --secret-id`,
 * `secret set`): `--secret-id` when given; else the one its deployment polls it with, found as the
 * function finds it for an operator request (`lookUpProgramSecret`): the stack's outputs, else the
 * program's record in the programs table, which must name one of the deployment's secrets. So a
 * program the outputs do not name (added with `programs add`, or one of more than the stack's
 * outputs list) needs no `--secret-id`, and a stack of an older version still reads its outputs.
 */
import { DynamoDbProgramRegistry } from '../adapters/aws/dynamodb-program-registry.ts';
import { lookUpProgramSecret } from '../adapters/aws/program-secret-lookup.ts';
import { ProgramSecretScope } from '../adapters/aws/program-secret-scope.ts';
import type { AwsClients } from './aws-clients.ts';
import { ProgramUnknownError } from './cli-errors.ts';
import type { Deployment } from './deployment.ts';
import { STACK_OUTPUTS } from './stack-outputs.ts';

/**
 * The program's secret as its deployment names it, or `undefined` when neither the stack's outputs
 * nor its programs table know the program (and, without `--stack`, always).
 *
 * @throws ProgramSecretRefusedError when its record names a secret that is not the deployment's.
 * @throws ProgramRecordInvalidError when its item in the programs table is not a record.
 */
export async function deploymentSecretOf(
  aws: AwsClients,
  deployment: Deployment,
  program: string,
): Promise<string | undefined> {
  if (deployment.stackName === undefined) return undefined;
  const stackSecrets = deployment.stackSecrets();
  return lookUpProgramSecret(program, {
    stackSecrets,
    registry: deployment.hasProgramsTable
      ? new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: deployment.programsTable })
      : undefined,
    scope: new ProgramSecretScope({
      prefix: deployment.secretsPrefix,
      stackSecrets: stackSecrets.values(),
      region: await aws.dynamodb.config.region(),
    }),
  });
}

/**
 * `--secret-id`, else the program's secret as its deployment names it.
 *
 * @throws UsageError without `--secret-id` nor `--stack`, or on a stack without a programs table
 *   whose outputs do not name the program.
 * @throws ProgramUnknownError naming the program, the stack and its programs table when neither
 *   knows the program.
 */
export async function localSecretId(
  aws: AwsClients,
  deployment: Deployment,
  program: string,
): Promise<string> {
  if (deployment.secretIdFlag !== undefined || deployment.stackName === undefined)
    return deployment.secretId(program);
  const secretId = await deploymentSecretOf(aws, deployment, program);
  if (secretId !== undefined) return secretId;
  // A stack of an older version: its outputs are all it knows, and `secretId` says which is missing.
  if (!deployment.hasProgramsTable) return deployment.secretId(program);
  throw new ProgramUnknownError(
    program,
    `Program ${program} is not one of stack ${deployment.stackName}'s: no output ${STACK_OUTPUTS.secretArn(program)}, ` +
      `and no record in its programs table ${deployment.programsTable}`,
    `check --program (banking-events-poller programs list), add it (programs add ${program}), or pass --secret-id`,
  );
}
