/**
 * Every program of a deployment, for the commands that cover them all (`status`, `doctor`): the
 * stack's own (its outputs, the default one first), then those only its programs table holds
 * (added with `programs add`) in name order, each with what its record says. Outputs name at most
 * a few programs, so the table is the whole list on a stack of this release.
 */
import { DynamoDbProgramRegistry } from '../adapters/aws/dynamodb-program-registry.ts';
import type { ProgramState } from '../core/fleet/program-record.ts';
import type { RefusedRecord } from '../core/fleet/program-registry.ts';
import type { CommandContext } from './command-context.ts';
import type { Deployment } from './deployment.ts';

export interface DeploymentProgram {
  readonly name: string;
  /** Its record's state; `unrecorded` for a program the outputs name and the table lacks (no worker polls it). */
  readonly state: ProgramState | 'unrecorded';
}

export interface DeploymentPrograms {
  readonly programs: readonly DeploymentProgram[];
  /** Items of the programs table that are not program records: no worker polls them. */
  readonly refused: readonly RefusedRecord[];
}

/**
 * The deployment's programs; `undefined` without `--stack`. A stack of an older version (no
 * programs table) has its outputs' programs, all polled.
 *
 * @throws the programs table's read error (missing table, no `dynamodb:Scan`).
 */
export async function deploymentPrograms(
  context: CommandContext,
  deployment: Deployment,
): Promise<DeploymentPrograms | undefined> {
  const stackPrograms = deployment.programs;
  if (stackPrograms === undefined) return undefined;
  if (!deployment.hasProgramsTable) {
    return { programs: stackPrograms.map((name) => ({ name, state: 'active' })), refused: [] };
  }
  const registry = new DynamoDbProgramRegistry({
    client: context.aws.dynamodb,
    tableName: deployment.programsTable,
  });
  const { records, refused } = await registry.list();
  const states = new Map(records.map((record) => [record.name, record.state]));
  const added = records.map((record) => record.name).filter((name) => !stackPrograms.includes(name));
  return {
    programs: [...stackPrograms, ...added].map((name) => ({ name, state: states.get(name) ?? 'unrecorded' })),
    refused,
  };
}
