/**
 * The programs of the `programs` prop as records of the programs table, owned by the stack: a
 * custom resource whose provider function (`functions/program-seeder/`, prebuilt into the package
 * like the poller's handler) reconciles the stack's records with the props at every deploy. It
 * adds the programs the props name, updates a stack program's secret, and removes the stack's
 * records the props no longer name (their checkpoints and secrets stay); it never touches a
 * record an operator added, and never a record's state (an operator may pause a stack program).
 *
 * The list travels inside the provider's code asset (`seed.json` beside the handler), not in the
 * custom resource's properties: 5,000 programs are ~400 KB, beyond what a template or a custom
 * resource request holds, and an S3 asset of the function's own needs no grant on the bootstrap
 * bucket (nor on its key, when it has one). The properties carry the list's digest, so a changed
 * list updates the resource, and the ARNs of the secrets the stack creates (tokens, unknown at
 * synth), which exist only for programs that cost resources of their own anyway.
 *
 * Its resources do not grow with the programs: one function, its role and policy, its log group
 * and the custom resource.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomResource, Duration, Token, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import {
  SEED_FILE,
  SEED_FORMAT,
  SEED_RESOURCE_TYPE,
  type SeedFile,
  type SeedProperties,
} from '../../functions/program-seeder/seed-request.ts';
import { grantKeyThrough } from './encryption-key.ts';
import { POLLER_ARCHITECTURE, POLLER_RUNTIME } from './poller-bundling.ts';

/** The prebuilt provider's directory: two levels below the package root, as `poller-code.ts` finds the handler. */
export const PREBUILT_SEEDER_DIR = fileURLToPath(
  new URL('../../dist/assets/program-seeder', import.meta.url),
);

/** The file Lambda loads and its export. */
export const PREBUILT_SEEDER_HANDLER = 'program-seeder.handler';

/** A program the stack seeds: its name and its secret's id or ARN (a token for a secret the stack creates). */
export interface SeededProgramSecret {
  readonly name: string;
  readonly secretId: string;
}

export interface ProgramSeedingProps {
  readonly table: dynamodb.ITable;
  readonly programs: readonly SeededProgramSecret[];
  readonly encryptionKey?: kms.IKey;
  readonly logRetention: logs.RetentionDays;
}

/** The custom resource and its provider, in `ProgramSeeding`. */
export class ProgramSeeding extends Construct {
  readonly resource: CustomResource;
  readonly providerFunction: lambda.Function;

  constructor(scope: Construct, id: string, props: ProgramSeedingProps) {
    super(scope, id);
    const { table, encryptionKey } = props;
    const created = props.programs.filter((program) => Token.isUnresolved(program.secretId));
    const seed: SeedFile = {
      format: SEED_FORMAT,
      programs: props.programs.map(({ name, secretId }) =>
        Token.isUnresolved(secretId) ? { name } : { name, secretId },
      ),
    };
    const seedText = `${JSON.stringify(seed)}\n`;
    const digest = createHash('sha256').update(seedText).digest('hex');

    const logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention,
      encryptionKey,
    });
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: "Banking events poller: seeds the stack's programs into its programs table at deploy",
    });
    logGroup.grantWrite(role);
    // What reconciling needs and nothing more: read every record, write and remove one at a time.
    table.grant(role, 'dynamodb:Scan', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem');
    if (table.encryptionKey !== undefined) grantKeyThrough(table.encryptionKey, role, 'dynamodb');
    this.providerFunction = new lambda.Function(this, 'Function', {
      description:
        "Reconciles the stack's programs (the programs prop) with the records of the programs table",
      runtime: POLLER_RUNTIME,
      architecture: POLLER_ARCHITECTURE,
      memorySize: 256,
      // 5,000 programs written 16 at a time take well under a minute; the handler answers before this.
      timeout: Duration.minutes(5),
      role,
      logGroup,
      code: seederCode(seedText),
      handler: PREBUILT_SEEDER_HANDLER,
    });
    const properties: SeedProperties = {
      ProgramsTable: table.tableName,
      SeedDigest: digest,
      // The secrets the stack creates: their ARNs are known at deploy only.
      StackSecrets: Object.fromEntries(created.map((program) => [program.name, program.secretId])),
    };
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: this.providerFunction.functionArn,
      resourceType: SEED_RESOURCE_TYPE,
      properties,
    });
    acknowledgeFindings(this.providerFunction, role);
  }
}

/**
 * The provider's code: the prebuilt handler and the seed list, in a directory named by the digest
 * of both (the same list and handler, the same directory and asset, from any app). Made in a
 * directory of its own and renamed into place, so synths running at once never read a file
 * another is writing.
 *
 * @throws Error naming the missing file and how to get it
 */
function seederCode(seedText: string): lambda.Code {
  const handler = path.join(PREBUILT_SEEDER_DIR, 'program-seeder.mjs');
  if (!existsSync(handler)) {
    throw new Error(
      `The prebuilt program seeder is missing (${handler}): in a clone of banking-events-poller run ` +
        '`npm run build`; in an app, reinstall the package.',
    );
  }
  const files = readdirSync(PREBUILT_SEEDER_DIR).sort();
  const digest = createHash('sha256').update(seedText);
  for (const file of files) digest.update(file).update(readFileSync(path.join(PREBUILT_SEEDER_DIR, file)));
  const dir = path.join(tmpdir(), `banking-events-poller-seed-${digest.digest('hex').slice(0, 32)}`);
  if (!existsSync(dir)) {
    const staging = mkdtempSync(`${dir}-`);
    for (const file of files) copyFileSync(path.join(PREBUILT_SEEDER_DIR, file), path.join(staging, file));
    writeFileSync(path.join(staging, SEED_FILE), seedText);
    try {
      renameSync(staging, dir);
    } catch {
      // Another synth put the same directory in place first.
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return lambda.Code.fromAsset(dir);
}

function acknowledgeFindings(fn: lambda.Function, role: iam.Role): void {
  const dlq =
    'CloudFormation invokes the provider and waits for its answer; a failure fails the deploy, which is what ' +
    'CloudFormation retries (or rolls back), so a dead-letter queue would hold nothing anyone acts on.';
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5']) {
    Validations.of(fn).acknowledge({ id: `${pack}-LambdaDLQ`, reason: dlq });
  }
  const concurrency =
    'CloudFormation calls it once per deploy of the stack; it needs no reserved concurrency.';
  for (const pack of ['HIPAA.Security', 'NIST.800.53.R5', 'PCI.DSS.321']) {
    Validations.of(fn).acknowledge({ id: `${pack}-LambdaConcurrency`, reason: concurrency });
    Validations.of(fn).acknowledge({
      id: `${pack}-LambdaInsideVPC`,
      reason:
        'It calls DynamoDB only, through its public endpoint and its own role; it never reaches the banking service.',
    });
    Validations.of(role).acknowledge({
      id: `${pack}-IAMNoInlinePolicy`,
      reason:
        "CDK's grants write the role's own inline policy: item reads and writes on the one programs table and its " +
        'log group; a managed policy would hold the same statements and could be attached elsewhere.',
    });
  }
}
