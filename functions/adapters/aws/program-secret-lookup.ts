/**
 * Which secret a program's banking credentials are in, as its deployment knows it: one of the
 * stack's own programs' (the function's `PROGRAM_SECRETS`, the stack's `SecretArn<Program>`
 * outputs), else its record's in the programs table (a program added with `programs add`, or one
 * of more programs than the stack's outputs name), which must be one of the deployment's secrets
 * (`ProgramSecretScope`). The function's operator requests and the CLI's `--local` commands look
 * it up here, so they agree with each other and with the worker that polls the program.
 */
import type { ProgramRegistry } from '../../core/fleet/program-registry.ts';
import type { ProgramSecretScope } from './program-secret-scope.ts';

export interface ProgramSecretSources {
  /** The secrets of the stack's own programs, by program; taken as they are (the stack gave them). */
  readonly stackSecrets: ReadonlyMap<string, string>;
  /** The programs table. @default none: a deployment that keeps its programs in the stack alone */
  readonly registry?: ProgramRegistry;
  /** The secrets a record may name. */
  readonly scope: ProgramSecretScope;
}

/**
 * The secret of `program`, or `undefined` when the deployment has no such program.
 *
 * @throws ProgramSecretRefusedError when its record names a secret that is not the deployment's.
 * @throws ProgramRecordInvalidError when its item in the programs table is not a record.
 */
export async function lookUpProgramSecret(
  program: string,
  sources: ProgramSecretSources,
  signal?: AbortSignal,
): Promise<string | undefined> {
  const own = sources.stackSecrets.get(program);
  if (own !== undefined) return own;
  const record = await sources.registry?.get(program, signal);
  return record === undefined ? undefined : sources.scope.check(program, record.secretId);
}
