/**
 * `secret set`: stores a program's banking credentials. The value comes from stdin (the JSON, or
 * just the client secret with --base-url and --client-id) or from prompts, the secret one hidden;
 * never from a flag, so it stays out of shell history and process lists. It is validated (an
 * https base URL, no placeholder, a usable client certificate), optionally tried against the token
 * endpoint, and never printed. The mutual TLS fields come with the JSON; a client secret given
 * alone (or at the prompts) keeps those of the current value.
 */
import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  type PutSecretValueCommandOutput,
} from '@aws-sdk/client-secrets-manager';
import type { Command } from 'commander';
import { programSecretName } from '../../adapters/aws/program-secret-scope.ts';
import { BankConnections } from '../../adapters/banking-http/bank-connections.ts';
import { checkBankTls, checkValidity } from '../../adapters/banking-http/client-certificate.ts';
import { ClientCredentialsTokenProvider } from '../../adapters/banking-http/token-cache.ts';
import { StaticCredentialsProvider } from '../../adapters/local/static-credentials.ts';
import { parseBankingCredentials } from '../../core/banking-credentials.ts';
import { ClientCertificateError } from '../../core/errors.ts';
import { isJsonObject } from '../../core/json-object.ts';
import type { BankingCredentials } from '../../core/ports.ts';
import { CliError, UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import type { Deployment } from '../deployment.ts';
import { toJson } from '../output-format.ts';
import { deploymentSecretOf } from '../program-secret.ts';
import { askHidden, askVisible } from '../prompts.ts';

interface SecretSetFlags {
  readonly secretId?: string;
  readonly program?: string;
  readonly kmsKeyId?: string;
  readonly baseUrl?: string;
  readonly clientId?: string;
  readonly verify?: boolean;
}

export function registerSecretCommand(program: Command): void {
  const secret = program.command('secret').summary("manage a program's banking credentials secret");
  secret
    .command('set')
    .summary('store banking credentials in the secret, read from stdin or a hidden prompt')
    .description(
      'Writes {"base_url", "client_id", "client_secret"} to the secret. Reads the JSON from stdin, or only the client ' +
        'secret from stdin with --base-url and --client-id, or asks on the terminal (the client secret hidden). ' +
        'Validates it (base_url must be https://; a client certificate must parse, match its key and be valid) and, ' +
        'with --verify, gets a token with it before writing. The JSON may hold client_certificate, client_key, ' +
        'client_key_passphrase and ca_certificate (mutual TLS); given the client secret alone or at the prompts, ' +
        'those of the current value are kept. The secret is never printed.',
    )
    .option('--secret-id <id>', "the secret (default: the program's, from --stack)")
    .option(
      '--program <name>',
      "whose secret, with --stack (default: the stack's first program). A program without a secret of the stack's " +
        "has its record's, else <secrets prefix><name>; one under the prefix is created here if missing",
    )
    .option(
      '--kms-key-id <key>',
      'the KMS key a secret created here is encrypted with (default: aws/secretsmanager)',
    )
    .option('--base-url <url>', 'base_url (not secret)')
    .option('--client-id <id>', 'client_id (not secret)')
    .option('--verify', 'get a token with the new credentials before writing them')
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller secret set --stack BankingEventsPoller --program default --verify < creds.json
  $ banking-events-poller secret set --stack BankingEventsPoller --program cards < cards.json   # <prefix>cards
  $ pass show bank/client-secret | banking-events-poller secret set --secret-id my-secret \\
      --base-url https://bank.example.com --client-id my-client
  $ banking-events-poller secret set --stack BankingEventsPoller        # asks, the secret hidden`,
    )
    .action(async (flags: SecretSetFlags, command: Command) => {
      await withContext(command, (context) => setSecret(context, flags));
    });
}

async function setSecret(context: CommandContext, flags: SecretSetFlags): Promise<void> {
  const { terminal, globals } = context;
  const deployment = await context.deployment({ secretId: flags.secretId });
  const program = deployment.program(flags.program);
  const target = await secretOf(context, deployment, program, flags);
  const given = terminal.stdinIsTerminal
    ? await askForFields(flags)
    : fieldsFromStdin(await readStdin(), flags);
  const secretId = target.secretId;
  const raw = given.json ? given.fields : { ...(await currentTlsFields(context, secretId)), ...given.fields };
  const credentials = parseBankingCredentials(JSON.stringify(raw), 'the new secret value');
  checkCertificate(credentials);
  if (flags.verify) await verify(context, credentials);
  const { written, created } = await writeSecret(context, target, program, JSON.stringify(raw), flags);
  const summary = {
    secretId: written.ARN ?? secretId,
    versionId: written.VersionId,
    created,
    baseUrl: credentials.baseUrl,
    clientId: credentials.clientId,
    verified: flags.verify === true,
  };
  if (globals.json) terminal.out(toJson(summary));
  else {
    terminal.out(
      `Secret ${summary.secretId} ${created ? 'created' : 'updated'} (version ${summary.versionId}): base_url ${summary.baseUrl}, client_id ${summary.clientId}` +
        `${flags.verify ? ', token obtained' : ''}. The poller reads it within 5 minutes, at once after a 401.\n`,
    );
  }
}

/** Where the value goes: a secret that must exist, or the program's under the prefix, created if missing. */
interface SecretTarget {
  readonly secretId: string;
  /** The secret is `<prefix><program>`: created (tagged) when it does not exist yet. */
  readonly underPrefix: boolean;
}

/**
 * `--secret-id`, else the secret the deployment polls the program with (its stack's
 * `SecretArn<Program>`, else its record's in the programs table), else, on a stack with a secrets
 * prefix, `<prefix><program>`: where the deployment's function looks for a program added next.
 */
async function secretOf(
  context: CommandContext,
  deployment: Deployment,
  program: string,
  flags: SecretSetFlags,
): Promise<SecretTarget> {
  if (flags.secretId !== undefined) return { secretId: flags.secretId, underPrefix: false };
  const prefix = deployment.secretsPrefix;
  const known = await deploymentSecretOf(context.aws, deployment, program);
  // A name under the prefix is the deployment's to create; an ARN names a secret that exists.
  if (known !== undefined)
    return { secretId: known, underPrefix: prefix !== undefined && known.startsWith(prefix) };
  if (prefix !== undefined) return { secretId: programSecretName(prefix, program), underPrefix: true };
  return { secretId: deployment.secretId(program), underPrefix: false };
}

/**
 * PutSecretValue; a program's secret under the prefix that does not exist yet is created with the
 * value, tagged with its stack and program (created by another command meanwhile: written).
 */
async function writeSecret(
  context: CommandContext,
  target: SecretTarget,
  program: string,
  value: string,
  flags: SecretSetFlags,
): Promise<{ written: PutSecretValueCommandOutput; created: boolean }> {
  const client = context.aws.secretsManager;
  const put = () =>
    client.send(new PutSecretValueCommand({ SecretId: target.secretId, SecretString: value }));
  try {
    return { written: await put(), created: false };
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'ResourceNotFoundException') throw error;
    if (!target.underPrefix) {
      throw new UsageError(
        `Secret ${target.secretId} does not exist`,
        'check --secret-id (or --stack and --region)',
      );
    }
  }
  const stack = context.globals.stack ?? 'unknown';
  try {
    const created = await client.send(
      new CreateSecretCommand({
        Name: target.secretId,
        SecretString: value,
        Description: `Banking service credentials of program ${program} of stack ${stack} (banking-events-poller)`,
        ...(flags.kmsKeyId === undefined ? {} : { KmsKeyId: flags.kmsKeyId }),
        Tags: [
          { Key: 'banking-events-poller:stack', Value: stack },
          { Key: 'banking-events-poller:program', Value: program },
        ],
      }),
    );
    return {
      written: { ARN: created.ARN, VersionId: created.VersionId, $metadata: created.$metadata },
      created: true,
    };
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceExistsException')
      return { written: await put(), created: false };
    throw error;
  }
}

type SecretFields = { base_url?: unknown; client_id?: unknown; client_secret?: unknown } & {
  [field in (typeof TLS_FIELDS)[number]]?: unknown;
};

/** The new value's fields, and whether they came as the whole JSON value. */
interface GivenFields {
  readonly fields: SecretFields;
  readonly json: boolean;
}

/** The secret's mutual TLS fields (see `parseBankingCredentials`). */
const TLS_FIELDS = ['client_certificate', 'client_key', 'client_key_passphrase', 'ca_certificate'] as const;

/** The mutual TLS fields of the value stored now, kept when only the client secret changes. */
async function currentTlsFields(context: CommandContext, secretId: string): Promise<SecretFields> {
  let parsed: unknown;
  try {
    const output = await context.aws.secretsManager.send(new GetSecretValueCommand({ SecretId: secretId }));
    parsed = JSON.parse(output.SecretString ?? '');
  } catch {
    // Not readable (no such value yet, no right to read it) or not JSON: nothing to keep.
    return {};
  }
  if (!isJsonObject(parsed)) return {};
  return Object.fromEntries(
    TLS_FIELDS.filter((field) => parsed[field] !== undefined).map((field) => [field, parsed[field]]),
  );
}

/** A client certificate that the poller would refuse at its first run is refused here, before writing. */
function checkCertificate(credentials: BankingCredentials): void {
  if (credentials.tls === undefined) return;
  try {
    const { certificate } = checkBankTls(credentials.tls);
    if (certificate !== undefined) checkValidity(certificate, Date.now());
  } catch (error) {
    if (error instanceof ClientCertificateError) {
      throw new UsageError(error.message, `fix ${String(error.context.field)}; the secret was not changed`);
    }
    throw error;
  }
}

/** stdin holds the JSON value, or the client secret alone (the other two from flags). */
function fieldsFromStdin(text: string, flags: SecretSetFlags): GivenFields {
  const trimmed = text.trim();
  if (trimmed === '') {
    throw new UsageError(
      'Nothing on stdin',
      'pipe the JSON (or the client secret with --base-url and --client-id) into the command',
    );
  }
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      // The parser's message would quote the text, which holds the secret.
      throw new UsageError(
        'stdin starts with "{" but is not valid JSON',
        'pipe {"base_url", "client_id", "client_secret"}',
      );
    }
    if (!isJsonObject(parsed))
      throw new UsageError('stdin is not a JSON object', 'pipe {"base_url", "client_id", "client_secret"}');
    const tls = Object.fromEntries(
      TLS_FIELDS.filter((field) => parsed[field] !== undefined).map((field) => [field, parsed[field]]),
    );
    return {
      json: true,
      fields: {
        base_url: flags.baseUrl ?? parsed.base_url,
        client_id: flags.clientId ?? parsed.client_id,
        client_secret: parsed.client_secret,
        ...tls,
      },
    };
  }
  if (flags.baseUrl === undefined || flags.clientId === undefined) {
    throw new UsageError(
      'stdin holds only a client secret, so base_url and client_id are missing',
      'pass --base-url and --client-id, or pipe the whole JSON',
    );
  }
  if (trimmed.includes('\n')) {
    throw new UsageError('stdin holds several lines', 'pipe the client secret alone, or the whole JSON');
  }
  return {
    json: false,
    fields: { base_url: flags.baseUrl, client_id: flags.clientId, client_secret: trimmed },
  };
}

async function askForFields(flags: SecretSetFlags): Promise<GivenFields> {
  const baseUrl = flags.baseUrl ?? (await askVisible('base_url (https://…):'));
  const clientId = flags.clientId ?? (await askVisible('client_id:'));
  const clientSecret = await askHidden('client_secret (hidden):');
  return { json: false, fields: { base_url: baseUrl, client_id: clientId, client_secret: clientSecret } };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function verify(context: CommandContext, credentials: BankingCredentials): Promise<void> {
  const provider = new StaticCredentialsProvider(credentials, 'the new secret value');
  const connections = new BankConnections();
  context.closeAtEnd(connections);
  try {
    await new ClientCredentialsTokenProvider({ credentials: provider, connections }).getAccessToken(
      AbortSignal.timeout(15_000),
    );
  } catch (error) {
    throw new CliError(
      `Could not get a token with these credentials (${error instanceof Error ? error.message : String(error)})`,
      'check base_url, client_id and client_secret; the secret was not changed',
    );
  }
}
