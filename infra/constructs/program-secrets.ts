/**
 * Where each program's credentials are, and which secrets the function may read. A deployment's
 * program secrets live under its secrets prefix (`<prefix><program>`, what `secret set --program`
 * writes); the function may read `secret:<prefix>*` and the secrets its props name, nothing else.
 * A path rather than tags: IAM matches a secret's name in the resource ARN of the grant itself,
 * while a tag condition (`secretsmanager:ResourceTag/…`) would let anyone who may tag a secret
 * hand it to the function; and the name is what the worker checks a record against before it
 * reads anything (`ProgramSecretScope`).
 *
 * The props' programs keep today's secrets: one created per program without `existingSecret`
 * (`Secret<Program>`, pinned as stateful), unless `createProgramSecrets: false`, which reads
 * `<prefix><program>` instead and adds no resource per program.
 */
import { ArnFormat, Stack, Token } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import {
  programSecretName,
  SECRETS_PREFIX_PATTERN,
} from '../../functions/adapters/aws/program-secret-scope.ts';
import { ConfigurationError } from '../../functions/core/errors.ts';
import type { PollerProgram } from './poller-props.ts';
import { createProgramSecret } from './poller-storage.ts';

/** A program of the props and its secret. */
export interface ProgramSecretBinding {
  readonly name: string;
  /** The secret the stack created or was given; `undefined` for one under the prefix. */
  readonly secret: secretsmanager.ISecret | undefined;
  /** Its id as the function and the program's record name it: the secret's ARN, or `<prefix><name>`. */
  readonly secretId: string;
}

/** The prefixes taken in each stack: two pollers must not share one (each would read the other's secrets). */
const PREFIXES_OF_STACK = new WeakMap<Stack, Set<string>>();

/**
 * The deployment's secrets prefix: the prop, or `banking-events-poller/<stack name>/`.
 *
 * @throws ConfigurationError when another poller of the stack has the same prefix
 */
export function resolveSecretsPrefix(scope: Construct, given: string | undefined): string {
  const stack = Stack.of(scope);
  const prefix = given ?? `banking-events-poller/${stack.stackName}/`;
  if (!Token.isUnresolved(prefix) && !SECRETS_PREFIX_PATTERN.test(prefix)) {
    // Only a stack name CloudFormation would refuse gets here; the prop itself is checked by the settings table.
    throw new ConfigurationError(
      `BankingEventsPoller: the secrets prefix ${JSON.stringify(prefix)} is not a secret name path; set secretsPrefix`,
      { prop: 'secretsPrefix' },
    );
  }
  if (PREFIXES_OF_STACK.get(stack)?.has(prefix) === true) {
    throw new ConfigurationError(
      `BankingEventsPoller: secretsPrefix ${prefix} is already the prefix of another BankingEventsPoller in ` +
        `stack ${stack.stackName}: each would read the other's program secrets. Give each its own secretsPrefix`,
      { prop: 'secretsPrefix' },
    );
  }
  return prefix;
}

/**
 * Records the prefix as taken in the poller's stack: called once the poller is built, so that one
 * refused by another prop (a thrown constructor) does not hold the prefix against the next.
 */
export function claimSecretsPrefix(scope: Construct, prefix: string): void {
  const stack = Stack.of(scope);
  const taken = PREFIXES_OF_STACK.get(stack) ?? new Set<string>();
  PREFIXES_OF_STACK.set(stack, taken);
  taken.add(prefix);
}

/**
 * Each program of the props with its secret: its `existingSecret`; else a secret created in `scope`
 * (`create`), or `<prefix><name>` (no resource).
 */
export function programSecretsOf(
  scope: Construct,
  programs: readonly PollerProgram[],
  options: { readonly create: boolean; readonly prefix: string; readonly encryptionKey?: kms.IKey },
): ProgramSecretBinding[] {
  return programs.map((program): ProgramSecretBinding => {
    const secret =
      program.existingSecret ??
      (options.create ? createProgramSecret(scope, program.name, options.encryptionKey) : undefined);
    return {
      name: program.name,
      secret,
      secretId: secret?.secretArn ?? programSecretName(options.prefix, program.name),
    };
  });
}

/** The IAM resource of every secret under `prefix`: `arn:…:secret:<prefix>*`. */
export function secretsUnderPrefixArn(scope: Construct, prefix: string): string {
  return Stack.of(scope).formatArn({
    service: 'secretsmanager',
    resource: 'secret',
    resourceName: `${prefix}*`,
    arnFormat: ArnFormat.COLON_RESOURCE_NAME,
  });
}
