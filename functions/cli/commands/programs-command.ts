/**
 * `programs list | add | pause | resume | remove`: the deployment's programs as data, in its
 * programs table (the stack's `ProgramsTableName` output). Every worker reads the table at each
 * run, so a change counts from the next run, with no deploy. Writes are conditional on the
 * revision read (another operator's or a deploy's change in between is refused, never
 * overwritten). The stack's own programs (its `programs` prop) may be paused and resumed, not
 * removed: the next deploy would seed them again.
 */
import type { Command } from 'commander';
import { DynamoDbProgramRegistry } from '../../adapters/aws/dynamodb-program-registry.ts';
import { ProgramSecretScope, programSecretName } from '../../adapters/aws/program-secret-scope.ts';
import { ProgramRevisionConflictError } from '../../core/errors.ts';
import { assignedWorker } from '../../core/fleet/assignment.ts';
import type { ProgramRecord, ProgramSettingValue, ProgramState } from '../../core/fleet/program-record.ts';
import { isProgramName, PROGRAM_NAME_EXPECTED } from '../../core/name-rules.ts';
import { PER_PROGRAM_SETTINGS, parseProgramSettings } from '../../settings/program-settings.ts';
import { RefusedError, UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import type { Deployment } from '../deployment.ts';
import { gridTable, toJson } from '../output-format.ts';

interface TableFlags {
  readonly programsTable?: string;
}

interface AddFlags extends TableFlags {
  readonly secretId?: string;
  readonly setting: readonly string[];
  readonly paused?: boolean;
}

export function registerProgramsCommand(program: Command): void {
  const programs = program
    .command('programs')
    .summary("list and change the deployment's programs (no deploy needed)")
    .description(
      "The deployment's programs are records of its programs table: the stack's own (its programs prop, seeded at " +
        'each deploy) and those added here. Workers read the table at every run, so a change counts from the next ' +
        'run. A program is polled by one worker, chosen from its name and the number of workers.',
    );
  const tableOption = ['--programs-table <name>', 'the programs table (default: from --stack)'] as const;
  programs
    .command('list')
    .summary('every program: its state, owner, worker and secret')
    .option(...tableOption)
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller programs list --stack BankingEventsPoller
  $ banking-events-poller programs list --stack BankingEventsPoller --json | jq -r '.programs[] | select(.state == "paused") | .name'`,
    )
    .action(async (flags: TableFlags, command: Command) => {
      await withContext(command, (context) => list(context, flags));
    });
  programs
    .command('add')
    .summary('add a program, polled from the next run')
    .argument('<name>', 'the program: letters, digits, ".", "_" or "-", at most 64')
    .option(
      '--secret-id <id>',
      "its credentials secret: under the deployment's secrets prefix, or one of the stack's (default: <secrets prefix><name>, which secret set --program writes)",
    )
    .option(
      '--setting <name=value>',
      `a setting of its own, repeatable: ${PER_PROGRAM_SETTINGS.join(', ')}`,
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .option('--paused', 'add it paused: kept, not polled until resumed')
    .option(...tableOption)
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller secret set --stack BankingEventsPoller --program cards < cards.json
  $ banking-events-poller programs add --stack BankingEventsPoller cards --setting feedMode=stream`,
    )
    .action(async (name: string, flags: AddFlags, command: Command) => {
      await withContext(command, (context) => add(context, name, flags));
    });
  for (const [verb, state, summary] of [
    ['pause', 'paused', 'stop polling a program from the next run; its checkpoint and secret stay'],
    ['resume', 'active', 'poll a paused program again from the next run, from its checkpoint'],
  ] as const) {
    programs
      .command(verb)
      .summary(summary)
      .argument('<name>', 'the program')
      .option(...tableOption)
      .addHelpText(
        'after',
        `\nExample:\n  $ banking-events-poller programs ${verb} --stack BankingEventsPoller cards`,
      )
      .action(async (name: string, flags: TableFlags, command: Command) => {
        await withContext(command, (context) => setState(context, name, state, flags));
      });
  }
  programs
    .command('remove')
    .summary('forget a program added here; its checkpoint and secret stay')
    .argument('<name>', 'the program')
    .option(...tableOption)
    .addHelpText(
      'after',
      `
A program of the stack (its programs prop) is not removed here: drop it from the prop and deploy,
or pause it. Adding a removed program again resumes from its checkpoint.

Example:
  $ banking-events-poller programs remove --stack BankingEventsPoller cards`,
    )
    .action(async (name: string, flags: TableFlags, command: Command) => {
      await withContext(command, (context) => remove(context, name, flags));
    });
}

/** The `<name>` argument, checked as every program name is (a bad one is a bad command line). */
function programName(raw: string): string {
  if (isProgramName(raw)) return raw;
  throw new UsageError(
    `the program name must be ${PROGRAM_NAME_EXPECTED} (got ${JSON.stringify(String(raw).slice(0, 80))})`,
    'name the program as its record and checkpoint row do',
  );
}

async function registryOf(
  context: CommandContext,
  flags: TableFlags,
): Promise<{ deployment: Deployment; registry: DynamoDbProgramRegistry; tableName: string }> {
  const deployment = await context.deployment({ programsTable: flags.programsTable });
  const tableName = deployment.programsTable;
  return {
    deployment,
    tableName,
    registry: new DynamoDbProgramRegistry({ client: context.aws.dynamodb, tableName }),
  };
}

/** What `list` and `--json` show of a record: the record, and the worker that polls it when known. */
function view(record: ProgramRecord, workers: number | undefined) {
  return {
    name: record.name,
    state: record.state,
    owner: record.owner,
    ...(workers === undefined ? {} : { worker: assignedWorker(record.name, workers) }),
    secretId: record.secretId,
    settings: record.settings,
    revision: record.revision,
  };
}

async function list(context: CommandContext, flags: TableFlags): Promise<void> {
  const { deployment, registry, tableName } = await registryOf(context, flags);
  const listing = await registry.list();
  const workers = deployment.workerCount;
  const programs = listing.records.map((record) => view(record, workers));
  const refused = listing.refused.map(({ key, error }) => ({ key, error: error.message }));
  const { terminal } = context;
  if (context.globals.json) {
    terminal.out(toJson({ programsTable: tableName, workers: workers ?? null, programs, refused }));
    return;
  }
  if (programs.length === 0 && refused.length === 0) {
    terminal.out(`No program in table ${tableName}: add one with \`banking-events-poller programs add\`.\n`);
    return;
  }
  const settingsText = (settings: Readonly<Record<string, ProgramSettingValue>>) =>
    Object.entries(settings)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
  terminal.out(
    `${gridTable(
      ['program', 'state', 'owner', 'worker', 'secret', 'settings'],
      programs.map((program) => [
        program.name,
        program.state,
        program.owner,
        program.worker === undefined ? '?' : String(program.worker),
        program.secretId,
        settingsText(program.settings),
      ]),
      terminal.color,
    )}\n`,
  );
  const active = programs.filter((program) => program.state === 'active').length;
  terminal.out(
    `${programs.length} program(s), ${active} active` +
      `${workers === undefined ? '' : `, over ${workers} worker(s)`} (table ${tableName}).\n`,
  );
  for (const { key, error } of refused) {
    terminal.err(`Item ${key} is not a program record, and no worker polls it: ${error}\n`);
  }
}

function settingsOf(program: string, given: readonly string[]): Record<string, ProgramSettingValue> {
  const raw: Record<string, string> = {};
  for (const entry of given) {
    const equals = entry.indexOf('=');
    if (equals <= 0)
      throw new UsageError(`--setting ${entry} is not name=value`, 'write it as --setting pollLimit=50');
    const name = entry.slice(0, equals);
    if (Object.hasOwn(raw, name))
      throw new UsageError(`--setting ${name} is given twice`, 'give each setting once');
    raw[name] = entry.slice(equals + 1);
  }
  try {
    return { ...parseProgramSettings(program, raw) };
  } catch (error) {
    throw new UsageError(
      error instanceof Error ? error.message : String(error),
      'fix the --setting named above',
    );
  }
}

async function add(context: CommandContext, rawName: string, flags: AddFlags): Promise<void> {
  const name = programName(rawName);
  const settings = settingsOf(name, flags.setting);
  const { deployment, registry, tableName } = await registryOf(context, flags);
  const prefix = deployment.secretsPrefix;
  const secretId = flags.secretId ?? (prefix === undefined ? undefined : programSecretName(prefix, name));
  if (secretId === undefined) {
    throw new UsageError(
      `No secret for program ${name}: the deployment's secrets prefix is not known without --stack`,
      'pass --secret-id, or --stack',
    );
  }
  const scope = new ProgramSecretScope({
    prefix,
    stackSecrets: deployment.stackSecretIds(),
    region: await context.aws.dynamodb.config.region(),
  });
  if (deployment.stackName !== undefined && !scope.includes(secretId)) {
    throw new UsageError(
      `Secret ${secretId} is not one of stack ${deployment.stackName}'s: its function reads only the secrets under ` +
        `${prefix ?? '(no prefix)'} and those of its programs prop`,
      `leave --secret-id out to use ${prefix ?? '<prefix>'}${name} (banking-events-poller secret set --program ${name} writes it)`,
    );
  }
  let stored: ProgramRecord;
  try {
    stored = await registry.put(
      { name, secretId, state: flags.paused ? 'paused' : 'active', owner: 'operator', settings },
      'absent',
    );
  } catch (error) {
    if (error instanceof ProgramRevisionConflictError) {
      throw new RefusedError(
        `Program ${name} is already in table ${tableName}`,
        `change it with programs pause or resume, or remove it first (programs remove ${name})`,
      );
    }
    throw error;
  }
  const { terminal } = context;
  if (context.globals.json) {
    terminal.out(toJson({ programsTable: tableName, added: view(stored, deployment.workerCount) }));
    return;
  }
  const worker = deployment.workerCount;
  terminal.out(
    `Program ${name} added (${stored.state}), secret ${secretId}` +
      `${worker === undefined ? '' : `, polled by worker ${assignedWorker(name, worker)}`} from the next run.\n` +
      `Store its credentials if not done yet: banking-events-poller secret set --program ${name}` +
      `${deployment.stackName === undefined ? '' : ` --stack ${deployment.stackName}`}\n`,
  );
}

async function existing(
  registry: DynamoDbProgramRegistry,
  name: string,
  tableName: string,
): Promise<ProgramRecord> {
  const record = await registry.get(name);
  if (record === undefined) {
    throw new UsageError(
      `No program ${name} in table ${tableName}`,
      'see the programs with `banking-events-poller programs list`',
    );
  }
  return record;
}

function conflicted(error: unknown, name: string): unknown {
  if (!(error instanceof ProgramRevisionConflictError)) return error;
  return new RefusedError(
    `Program ${name} changed while this command ran (another operator, or a deploy); nothing was written`,
    'look at it again (programs list) and repeat the command',
  );
}

async function setState(
  context: CommandContext,
  rawName: string,
  state: ProgramState,
  flags: TableFlags,
): Promise<void> {
  const name = programName(rawName);
  const { deployment, registry, tableName } = await registryOf(context, flags);
  const { revision, ...record } = await existing(registry, name, tableName);
  const previous = record.state;
  const stored =
    previous === state
      ? { ...record, revision }
      : await registry.put({ ...record, state }, revision).catch((error: unknown) => {
          throw conflicted(error, name);
        });
  const { terminal } = context;
  if (context.globals.json) {
    terminal.out(
      toJson({ programsTable: tableName, previous, program: view(stored, deployment.workerCount) }),
    );
    return;
  }
  terminal.out(
    previous === state
      ? `Program ${name} is already ${state}; nothing changed.\n`
      : state === 'paused'
        ? `Program ${name} paused: no run polls it from the next one (a run under way finishes its turn). Its checkpoint and secret stay.\n`
        : `Program ${name} resumed: the next run of its worker polls it from its checkpoint.\n`,
  );
}

async function remove(context: CommandContext, rawName: string, flags: TableFlags): Promise<void> {
  const name = programName(rawName);
  const { registry, tableName } = await registryOf(context, flags);
  const record = await existing(registry, name, tableName);
  if (record.owner === 'stack') {
    throw new RefusedError(
      `Program ${name} is one of the stack's programs (its programs prop): the next deploy would add it again`,
      `drop it from the programs prop and deploy, or pause it (programs pause ${name})`,
    );
  }
  await registry.remove(name, record.revision).catch((error: unknown) => {
    throw conflicted(error, name);
  });
  const { terminal } = context;
  if (context.globals.json) {
    terminal.out(toJson({ programsTable: tableName, removed: name }));
    return;
  }
  terminal.out(
    `Program ${name} removed: no run polls it from the next one. Its checkpoint row and secret ${record.secretId} ` +
      'stay: adding it again resumes from its checkpoint.\n',
  );
}
