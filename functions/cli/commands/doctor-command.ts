/**
 * `doctor`: checks a deployment end to end as the caller and says what is wrong in plain words:
 * each program's secret (readable, well formed, an https base URL), its client certificate if it
 * has one (subject, issuer, expiry), a token, `GET /events`, for every program of the programs
 * table, a few at a time; the checkpoint table and the bus (exist, and writable by the caller:
 * probes that change nothing the poller reads); on a Custom Event Bus, the bus ACTIVE, its
 * retention, and the stack's subscribers RUNNING; each worker's schedule enabled; the stack's
 * alarms in OK. Exit code 1 if any failed.
 */
import { type CloudWatchClient, DescribeAlarmsCommand, type MetricAlarm } from '@aws-sdk/client-cloudwatch';
import { DescribeTableCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { GetScheduleCommand } from '@aws-sdk/client-scheduler';
import type { Command } from 'commander';
import { SecretsManagerCredentialsProvider } from '../../adapters/aws/secrets-manager-credentials.ts';
import { bankCheckNames, checkBank, failed, ok, skipped } from '../../adapters/banking-http/bank-checks.ts';
import { assignedWorker } from '../../core/fleet/assignment.ts';
import { boundedParallelMap } from '../bounded-parallel-map.ts';
import { PROBE_SOURCE } from '../classic-operator-bus.ts';
import { CliError, UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import type { Deployment } from '../deployment.ts';
import { type DeploymentPrograms, deploymentPrograms } from '../deployment-programs.ts';
import { type CheckResult, failedChecks, renderReport } from '../doctor-report.ts';
import type { OperatorBus } from '../operator-bus.ts';
import { operatorBusOf } from '../operator-bus-kinds.ts';
import {
  type BankRoute,
  bankRoute,
  LOCAL_OPTION_HELP,
  type RouteFlags,
  SECRET_ID_OPTION_HELP,
} from '../operator-client.ts';
import { integerUpTo, positiveNumber } from '../option-parsers.ts';
import { toJson } from '../output-format.ts';
import { settingOption } from '../setting-options.ts';

/** The most programs checked at once: each holds a connection to the bank, or one of the function's executions. */
const MAX_CONCURRENCY = 16;

interface DoctorFlags extends RouteFlags {
  readonly program?: string;
  readonly checkpointTable?: string;
  readonly eventBus?: string;
  readonly writeProbes: boolean;
  readonly timeout: number;
  readonly concurrency: number;
  readonly cursorParam: string;
  readonly limitParam: string;
}

export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .summary('check a deployment end to end and say what is wrong')
    .description(
      "Checks each program's secret is readable and well formed (https base_url), its client certificate if any " +
        '(subject, expiry), a token can be obtained and GET /events answers: with --stack in the deployed function, ' +
        'as its role (lambda:InvokeFunction), with --local from this machine with your credentials. Checks, as the ' +
        'caller: the checkpoint table and the bus exist and the caller may write to them (a ' +
        `conditional write that cannot succeed, and one probe event with source ${PROBE_SOURCE}, which no rule of ` +
        "the stack matches); each worker's schedule is enabled; the stack's alarms are OK. Without --program, every " +
        'program of the programs table (paused ones reported as skipped), --concurrency at a time. On a Custom Event Bus (the ' +
        "stack's EventBusKind output is custom, or --event-bus is an event-busv2 ARN): the bus is ACTIVE (its StateReason " +
        "if not), its retention (and that it is the stack's BusRetentionDays), and each subscriber of the stack (its " +
        'SubscriberArn… outputs; without --stack, every subscriber of the bus but those tail and archive-replay create) ' +
        'is RUNNING; no write probe (the bus would retain it). Exit code 1 if a check failed.',
    )
    .option('--program <name>', 'one program (default: all of the stack)')
    .option('--checkpoint-table <name>', 'the checkpoint table (default: from --stack)')
    .option('--event-bus <name-or-arn>', 'the bus (default: from --stack)')
    .option('--local', LOCAL_OPTION_HELP)
    .option('--secret-id <id>', SECRET_ID_OPTION_HELP)
    .option('--no-write-probes', 'skip the write probes of the table and the bus')
    .option('--timeout <seconds>', 'how long to wait for the banking service', positiveNumber, 15)
    .option(
      '--concurrency <n>',
      'programs checked at once (each: a token and a poll, or an invocation of the function)',
      integerUpTo(MAX_CONCURRENCY),
      4,
    )
    .addOption(settingOption('pollCursorParam', 'query parameter carrying the cursor'))
    .addOption(settingOption('pollLimitParam', 'query parameter carrying the page size'))
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller doctor --stack BankingEventsPoller
  $ banking-events-poller doctor --secret-id my-secret --checkpoint-table T --event-bus B --json`,
    )
    .action(async (flags: DoctorFlags, command: Command) => {
      await withContext(command, (context) => doctor(context, flags));
    });
}

async function doctor(context: CommandContext, flags: DoctorFlags): Promise<void> {
  const deployment = await context.deployment({
    checkpointTable: flags.checkpointTable,
    eventBus: flags.eventBus,
    secretId: flags.secretId,
  });
  if (
    deployment.stackName === undefined &&
    flags.secretId === undefined &&
    flags.checkpointTable === undefined &&
    flags.eventBus === undefined
  ) {
    throw new UsageError(
      'Nothing to check',
      'pass --stack NAME, or --secret-id, --checkpoint-table and --event-bus',
    );
  }
  const results: CheckResult[] = [];
  let programs: readonly string[];
  if (flags.program !== undefined) programs = [deployment.program(flags.program)];
  else {
    const listed = await programsToCheck(context, deployment);
    programs = listed.polled;
    results.push(...listed.results);
  }
  // Each program's checks in turn are a token request and a poll (or an invocation of the
  // function): a few at once, the report in the programs' order.
  for (const checks of await boundedParallelMap(programs, flags.concurrency, (program) =>
    checkProgram(context, deployment, program, flags),
  ))
    results.push(...checks);
  results.push(await checkTable(context, deployment, flags));
  results.push(...(await checkEventBus(context, deployment, flags)));
  results.push(...(await checkSchedules(context, deployment, programs, flags)));
  results.push(await checkAlarms(context.aws.cloudWatch, deployment));

  const { terminal, globals } = context;
  const failed = failedChecks(results);
  if (globals.json) terminal.out(toJson({ ok: failed === 0, checks: results }));
  else terminal.out(renderReport(results, terminal));
  if (failed > 0) throw new CliError(`${failed} check(s) failed`, 'see the fixes above');
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Secret, token and feed of one program: in the deployed function, or with `--local` from here. */
async function checkProgram(
  context: CommandContext,
  deployment: Deployment,
  program: string,
  flags: DoctorFlags,
): Promise<CheckResult[]> {
  const names = bankCheckNames(program);
  const unchecked = (result: CheckResult, why: string): CheckResult[] => [
    result,
    skipped(names.token, why),
    skipped(names.feed, why),
  ];
  let route: BankRoute;
  try {
    route = await bankRoute(context.aws, deployment, program, flags);
  } catch (error) {
    if (error instanceof UsageError && deployment.stackName !== undefined && flags.local !== true)
      return unchecked(failed(names.secret, error.message, error.fix), 'needs the poller function');
    if (error instanceof UsageError)
      return unchecked(skipped(names.secret, message(error)), 'needs the secret');
    // Not a flag missing: the program is not the deployment's, or its record names no secret of it.
    const fix =
      error instanceof CliError
        ? error.fix
        : "check the program's record (banking-events-poller programs list)";
    return unchecked(failed(names.secret, message(error), fix), 'needs the secret');
  }
  if (route.kind === 'local') {
    return checkBank({
      program,
      secretId: route.secretId,
      credentials: new SecretsManagerCredentialsProvider({
        client: context.aws.secretsManager,
        secretId: route.secretId,
        cache: new Map(),
      }),
      timeoutMs: flags.timeout * 1000,
      entryRules: operatorBusOf(deployment).entryRules,
      cursorParam: flags.cursorParam,
      limitParam: flags.limitParam,
    });
  }
  try {
    const answer = await route.client.send({
      version: 1,
      kind: 'doctor-bank',
      program,
      timeoutMs: flags.timeout * 1000,
    });
    return [...answer.checks];
  } catch (error) {
    const fix = error instanceof CliError ? error.fix : 'check the poller function';
    return unchecked(failed(names.secret, message(error), fix), 'needs the poller function');
  }
}

async function checkTable(
  context: CommandContext,
  deployment: Deployment,
  flags: DoctorFlags,
): Promise<CheckResult> {
  const check = 'checkpoint table';
  let tableName: string;
  try {
    tableName = deployment.checkpointTable;
  } catch (error) {
    return skipped(check, message(error));
  }
  const { dynamodb } = context.aws;
  try {
    await dynamodb.send(new DescribeTableCommand({ TableName: tableName }));
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') {
      return failed(
        check,
        `${tableName} does not exist`,
        'check --checkpoint-table or --stack, and the region',
      );
    }
    return failed(check, message(error), 'use credentials that may describe the table');
  }
  if (!flags.writeProbes) return ok(check, `${tableName} exists (write probe skipped)`);
  try {
    // A condition that can never hold: the answer proves the right to write, and nothing is written.
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: 'doctor#probe' } },
        UpdateExpression: 'SET probe = :probe',
        ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(pk)',
        ExpressionAttributeValues: { ':probe': { S: 'never written' } },
      }),
    );
    return failed(
      check,
      `${tableName}: the impossible condition was met`,
      'report this; the probe item doctor#probe can be deleted',
    );
  } catch (error) {
    if (error instanceof Error && error.name === 'ConditionalCheckFailedException')
      return ok(check, `${tableName} exists and you may write to it`);
    return failed(
      check,
      `${tableName}: ${message(error)}`,
      'operators need dynamodb:UpdateItem on the table (rewind)',
    );
  }
}

/** The bus's checks, as its kind makes them; a kind that cannot be told is a skipped check. */
async function checkEventBus(
  context: CommandContext,
  deployment: Deployment,
  flags: DoctorFlags,
): Promise<CheckResult[]> {
  let bus: OperatorBus;
  try {
    bus = operatorBusOf(deployment);
  } catch (error) {
    return [skipped('event bus', message(error))];
  }
  return bus.doctorChecks(context, { writeProbes: flags.writeProbes });
}

/**
 * The programs whose bank is checked: every program of the deployment but the paused ones, which
 * are reported as such, with a failed check for what no worker polls (an item of the programs
 * table that is not a record, a program of the stack without its record).
 */
async function programsToCheck(
  context: CommandContext,
  deployment: Deployment,
): Promise<{ polled: readonly string[]; results: CheckResult[] }> {
  let listed: DeploymentPrograms | undefined;
  try {
    listed = await deploymentPrograms(context, deployment);
  } catch (error) {
    // The stack's own programs are still known from its outputs: check those.
    return {
      polled: deployment.programs ?? [deployment.program(undefined)],
      results: [
        failed(
          'programs table',
          `${deployment.programsTable}: ${message(error)}`,
          'operators need dynamodb:Scan on the programs table (programs list); the programs of the stack outputs are checked',
        ),
      ],
    };
  }
  if (listed === undefined) return { polled: [deployment.program(undefined)], results: [] };
  const results: CheckResult[] = [];
  for (const { name, state } of listed.programs) {
    if (state === 'paused')
      results.push(skipped(`program (${name})`, `paused: not polled until \`programs resume ${name}\``));
    if (state === 'unrecorded') {
      results.push(
        failed(
          `program (${name})`,
          `a program of the stack with no record in its programs table ${deployment.programsTable}: no worker polls it`,
          "deploy the stack again (cdk deploy): a deploy writes the records of the stack's programs",
        ),
      );
    }
  }
  for (const { key, error } of listed.refused) {
    results.push(
      failed(
        `program record (${key})`,
        error.message,
        'correct the item in the programs table, or delete it: no worker polls it until it is a valid record',
      ),
    );
  }
  return {
    polled: listed.programs.filter((program) => program.state === 'active').map((program) => program.name),
    results,
  };
}

/**
 * Each worker's schedule, enabled, on a stack that names them (`WorkerScheduleNames`); with
 * `--program`, only its worker's. On a stack of an older version, each program's schedule its
 * outputs name, once per schedule.
 */
async function checkSchedules(
  context: CommandContext,
  deployment: Deployment,
  programs: readonly string[],
  flags: DoctorFlags,
): Promise<CheckResult[]> {
  const workerSchedules = deployment.workerSchedules;
  if (workerSchedules === undefined) {
    const byName = new Map<string, string[]>();
    for (const program of programs) {
      const name = deployment.scheduleName(program);
      if (name === undefined) continue;
      byName.set(name, [...(byName.get(name) ?? []), program]);
    }
    if (byName.size === 0)
      return [skipped('schedule', 'needs --stack (the schedules are named in its outputs)')];
    return boundedParallelMap([...byName], flags.concurrency, ([name, polled]) =>
      checkSchedule(context, `schedule (${polled.join(', ')})`, name, polled),
    );
  }
  const byWorker = workerSchedules.map((): string[] => []);
  for (const program of programs) byWorker[assignedWorker(program, workerSchedules.length)]!.push(program);
  const workers = workerSchedules.flatMap((name, worker) =>
    flags.program === undefined || byWorker[worker]!.length > 0 ? [{ name, worker }] : [],
  );
  return boundedParallelMap(workers, flags.concurrency, ({ name, worker }) =>
    checkSchedule(context, `schedule (worker ${worker})`, name, byWorker[worker]!),
  );
}

/** How many program names a check's detail lists before it counts the rest. */
const NAMED_IN_DETAIL = 5;

async function checkSchedule(
  context: CommandContext,
  check: string,
  name: string,
  polled: readonly string[],
): Promise<CheckResult> {
  const named =
    polled.length <= NAMED_IN_DETAIL
      ? polled.join(', ')
      : `${polled.slice(0, NAMED_IN_DETAIL).join(', ')} and ${polled.length - NAMED_IN_DETAIL} more`;
  const what =
    polled.length === 0
      ? 'it polls no program yet'
      : polled.length === 1
        ? `it polls ${named}`
        : `it polls ${polled.length} programs: ${named}`;
  try {
    const schedule = await context.aws.scheduler.send(new GetScheduleCommand({ Name: name }));
    if (schedule.State === 'ENABLED')
      return ok(check, `${name} is enabled (${schedule.ScheduleExpression}); ${what}`);
    return failed(
      check,
      `${name} is ${schedule.State}: ${
        polled.length === 0
          ? 'its worker does not run'
          : polled.length === 1
            ? `${named} is not polled`
            : `${polled.length} programs are not polled: ${named}`
      }`,
      `enable it: aws scheduler update-schedule (see docs/runbook.md), or cdk deploy`,
    );
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') {
      return failed(check, `${name} does not exist`, 'deploy the stack again (cdk deploy)');
    }
    return failed(check, message(error), 'use credentials that may read schedules (scheduler:GetSchedule)');
  }
}

/** The stack's alarms: CloudFormation names them `<stack>-<logical id>-<suffix>`. */
async function checkAlarms(cloudWatch: CloudWatchClient, deployment: Deployment): Promise<CheckResult> {
  const check = 'alarms';
  if (deployment.stackName === undefined) return skipped(check, 'needs --stack');
  const alarms: MetricAlarm[] = [];
  let nextToken: string | undefined;
  do {
    const page = await cloudWatch.send(
      new DescribeAlarmsCommand({ AlarmNamePrefix: `${deployment.stackName}-`, NextToken: nextToken }),
    );
    alarms.push(...(page.MetricAlarms ?? []));
    nextToken = page.NextToken;
  } while (nextToken !== undefined);
  if (alarms.length === 0)
    return {
      check,
      verdict: 'warning',
      detail: `no alarm named ${deployment.stackName}-…`,
      fix: 'check --stack',
    };
  const firing = alarms.filter((alarm) => alarm.StateValue === 'ALARM');
  if (firing.length > 0) {
    return failed(
      check,
      `${firing.length} of ${alarms.length} in ALARM: ${firing.map((alarm) => alarm.AlarmName).join(', ')}`,
      'see what each means and what to do in docs/runbook.md',
    );
  }
  const unknown = alarms.filter((alarm) => alarm.StateValue !== 'OK').length;
  return unknown === 0
    ? ok(check, `all ${alarms.length} OK`)
    : { check, verdict: 'ok', detail: `${alarms.length - unknown} OK, ${unknown} without enough data yet` };
}
