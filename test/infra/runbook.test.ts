/**
 * The runbook's procedures, run as written: their shell blocks are executed by bash with an `aws`
 * stand-in that records each call, validates it as the CLI would (botocore's service model), and
 * answers from the synthesized stack (outputs, resources, the schedule as GetSchedule returns it),
 * applying `--query` with the CLI's JMESPath library. The checkpoint writes they would make are
 * then sent to moto against a checkpoint item written by the real `DynamoDbCheckpointStore`.
 * Beside the procedures, only what can break without anyone rewording a sentence is checked: the
 * links between its sections, an entry for every error code.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { POLLER_ERRORS } from '../../functions/core/errors.ts';
import { assignedWorker } from '../../functions/core/fleet/assignment.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../support/aws-test-env.ts';
import {
  logicalIdOf,
  REPO_ROOT,
  type SynthesizedPollerApp,
  synthPollerApp,
} from './support/poller-app-fixture.ts';

type Json = Record<string, unknown>;

const RUNBOOK = readFileSync(path.join(REPO_ROOT, 'docs/runbook.md'), 'utf8');
const STANDIN = path.join(REPO_ROOT, 'test/infra/support/aws_standin.py');
/** The interpreter itself rather than a shim (pyenv's costs 0.1 s a call): the stand-in runs often. */
const PYTHON = (() => {
  const python = process.env.MOTO_PYTHON ?? 'python3';
  const found = spawnSync(python, ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() !== '' ? found.stdout.trim() : python;
})();
const FAKE_SCHEDULE = 'BankingEventsPoller-PollerScheduleDefault-0123456789AB';

/** The runbook text from `<a id="<anchor>"></a>` and its heading to the next anchor or heading. */
function section(anchor: string): string {
  const start = RUNBOOK.indexOf(`<a id="${anchor}"></a>`);
  expect(start, `docs/runbook.md has no anchor ${anchor}`).toBeGreaterThanOrEqual(0);
  const body = RUNBOOK.indexOf('\n', RUNBOOK.indexOf('\n#', start) + 1);
  const end = RUNBOOK.slice(body).search(/^<a id="|^#{1,3} /m);
  return RUNBOOK.slice(start, end === -1 ? undefined : body + end);
}

/** The fenced `sh` blocks of a section, list indentation removed, in order. */
function shellBlocks(text: string): string[] {
  return [...text.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map(([, indent, body]) =>
    body!
      .split('\n')
      .map((line) => line.slice(indent!.length))
      .join('\n'),
  );
}

/** The number a block assigns to a shell variable, e.g. `SEQ=1234   # …`. */
function assigned(block: string, variable: string): number {
  const value = new RegExp(`^${variable}=(\\d+)\\b`, 'm').exec(block)?.[1];
  expect(value, `the block sets no ${variable}`).toBeDefined();
  return Number(value);
}

interface AwsCall {
  readonly args: readonly string[];
  /** Contents of the `file://` arguments at the time of the call, by argument. */
  readonly files: ReadonlyMap<string, string>;
}

/** Canned answers of the stand-in, by `<service> <command>` (see aws_standin.py). */
type Answers = Record<string, { expect?: Json; response: unknown }>;

/**
 * Runs `script` in bash with `aws` replaced by a function that records each call (arguments and
 * the files they name) and hands it to the stand-in, which answers from `answers`.
 */
function runWithRecordingAws(script: string, answers: Answers): AwsCall[] {
  const workdir = mkdtempSync(path.join(tmpdir(), 'runbook-'));
  try {
    const calls = path.join(workdir, 'calls');
    mkdirSync(calls);
    const answersFile = path.join(workdir, 'answers.json');
    writeFileSync(answersFile, JSON.stringify(answers));
    const prelude = String.raw`
set -euo pipefail
aws() {
  local dir arg i=0
  dir="$AWS_CALLS/$(printf %03d "$(ls "$AWS_CALLS" | wc -l)")"
  mkdir "$dir"
  printf '%s\0' "$@" > "$dir/args"
  for arg in "$@"; do
    i=$((i + 1))
    if [[ $arg == file://* ]]; then cp "$(printf %s "$arg" | sed 's|^file://||')" "$dir/file-$i"; fi
  done
  "$AWS_STANDIN_PYTHON" "$AWS_STANDIN" "$@"
}
`;
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => name === 'HOME' || name.startsWith('PYENV_') || name === 'VIRTUAL_ENV',
      ),
    );
    const result = spawnSync('bash', ['-c', `${prelude}\n${script}`], {
      cwd: workdir,
      env: {
        ...inherited,
        PATH: process.env.PATH,
        AWS_CALLS: calls,
        AWS_STANDIN: STANDIN,
        AWS_STANDIN_PYTHON: PYTHON,
        AWS_STANDIN_ANSWERS: answersFile,
      },
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    return readdirSync(calls)
      .sort()
      .map((name) => {
        const dir = path.join(calls, name);
        const args = readFileSync(path.join(dir, 'args'), 'utf8').split('\0').slice(0, -1);
        const files = new Map(
          args.flatMap((arg, index): [string, string][] =>
            arg.startsWith('file://')
              ? [[arg, readFileSync(path.join(dir, `file-${index + 1}`), 'utf8')]]
              : [],
          ),
        );
        return { args, files };
      });
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}

/** The value after `--name` in a recorded call. */
function option(call: AwsCall, name: string): string {
  const index = call.args.indexOf(name);
  expect(index, `${call.args.join(' ')} has no ${name}`).toBeGreaterThan(0);
  return call.args[index + 1]!;
}

/** The JSON of a `file://` argument as it was when the call was made. */
function fileOption<T>(call: AwsCall, name: string): T {
  return JSON.parse(call.files.get(option(call, name))!) as T;
}

function isCall(call: AwsCall, service: string, command: string): boolean {
  return call.args[0] === service && call.args[1] === command;
}

function theCall(calls: readonly AwsCall[], service: string, command: string): AwsCall {
  const matching = calls.filter((call) => isCall(call, service, command));
  expect(matching, `${service} ${command} calls`).toHaveLength(1);
  return matching[0]!;
}

interface Template {
  readonly Resources: Record<string, { Type: string; Properties?: Json }>;
  readonly Outputs?: Record<string, { Value: unknown }>;
}

/**
 * The synthesized stack as the CLI would see it once deployed: `physical` names the resources
 * (CloudFormation generates the rest), intrinsics are resolved, and the program's schedule is
 * answered as GetSchedule returns it. `withoutFields` leaves fields out of that answer, as
 * GetSchedule does for settings a schedule does not have.
 */
function deployedStack(
  synth: SynthesizedPollerApp,
  physical: Readonly<Record<string, string>>,
  schedule: { readonly logicalId: string; readonly withoutFields?: readonly string[] },
): Answers {
  const template = synth.template.toJSON() as Template;
  const stackName = synth.stack.stackName;
  const nameOf = (logicalId: string) => physical[logicalId] ?? `${stackName}-${logicalId}-PHYSICAL`;
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (typeof value !== 'object' || value === null) return value;
    const entries = Object.entries(value);
    const [intrinsic, argument] = entries[0] ?? [];
    if (entries.length === 1 && intrinsic === 'Ref') return nameOf(argument as string);
    if (entries.length === 1 && intrinsic === 'Fn::GetAtt') {
      return `arn:aws:fake:eu-west-1:123456789012:${nameOf((argument as string[])[0]!)}`;
    }
    if (entries.length === 1 && intrinsic === 'Fn::Join') {
      const [separator, parts] = argument as [string, unknown[]];
      return parts.map(resolve).join(separator);
    }
    return Object.fromEntries(entries.map(([key, child]) => [key, resolve(child)]));
  };

  const scheduleName = nameOf(schedule.logicalId);
  const properties = resolve(template.Resources[schedule.logicalId]!.Properties) as Json;
  const getSchedule: Json = {
    ActionAfterCompletion: 'NONE',
    Arn: `arn:aws:scheduler:eu-west-1:123456789012:schedule/default/${scheduleName}`,
    CreationDate: '2026-01-01T00:00:00+00:00',
    LastModificationDate: '2026-01-01T00:00:00+00:00',
    GroupName: 'default',
    Name: scheduleName,
    ...properties,
  };
  for (const field of schedule.withoutFields ?? []) delete getSchedule[field];

  return {
    'cloudformation describe-stacks': {
      expect: { StackName: stackName },
      response: {
        Stacks: [
          {
            StackName: stackName,
            Outputs: Object.entries(template.Outputs ?? {}).map(([OutputKey, { Value }]) => ({
              OutputKey,
              OutputValue: resolve(Value),
            })),
          },
        ],
      },
    },
    'cloudformation describe-stack-resources': {
      expect: { StackName: stackName },
      response: {
        StackResources: Object.entries(template.Resources).map(([LogicalResourceId, { Type }]) => ({
          StackName: stackName,
          LogicalResourceId,
          PhysicalResourceId: nameOf(LogicalResourceId),
          ResourceType: Type,
        })),
      },
    },
    'scheduler get-schedule': { expect: { Name: scheduleName }, response: getSchedule },
  };
}

let aws: MotoEnvironment;
let synth: SynthesizedPollerApp;
let scheduleLogicalId: string;
let tableLogicalId: string;

beforeAll(() => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  synth = synthPollerApp();
  scheduleLogicalId = logicalIdOf(synth.stack, synth.stack.poller.schedules.get('default')!);
  tableLogicalId = logicalIdOf(synth.stack, synth.stack.poller.checkpointTable);
});
afterAll(() => {
  synth.dispose();
  aws.restore();
});

type LeaseState = 'live' | 'expired' | 'none';

/**
 * Writes the default program's checkpoint item with the real store, as a run would leave it:
 * `checkpoint` (absent when undefined) and a lease that is live, expired or released.
 */
async function prepareItem(
  tableName: string,
  state: { readonly checkpoint?: number; readonly lease: LeaseState },
  nowMs: number,
): Promise<DynamoDbCheckpointStore> {
  await aws.dynamodb.send(
    new DeleteItemCommand({ TableName: tableName, Key: { pk: { S: 'program#default' } } }),
  );
  const store = new DynamoDbCheckpointStore({ client: aws.dynamodb, tableName, program: 'default' });
  await store.acquireLease({ owner: 'run-1', expiresAt: nowMs + 60_000, now: nowMs });
  if (state.checkpoint !== undefined)
    await store.commit({ owner: 'run-1', sequenceNumber: state.checkpoint, feedProgramId: 'program-1' });
  if (state.lease === 'expired')
    await store.acquireLease({ owner: 'run-1', expiresAt: nowMs - 1, now: nowMs });
  if (state.lease === 'none') await store.releaseLease('run-1');
  return store;
}

/** Sends the recorded `update-item` to moto as the CLI would. */
function replayUpdate(update: AwsCall): Promise<unknown> {
  return aws.dynamodb.send(
    new UpdateItemCommand({
      TableName: option(update, '--table-name'),
      Key: fileOption(update, '--key'),
      UpdateExpression: option(update, '--update-expression'),
      ConditionExpression: option(update, '--condition-expression'),
      ExpressionAttributeValues: fileOption(update, '--expression-attribute-values'),
    }),
  );
}

interface UpdateValues {
  readonly ':seq': { N: string };
  readonly ':expected'?: { N: string };
  readonly ':now': { S: string };
  readonly ':nowMs': { N: string };
}

describe('runbook: an event too large for the bus', () => {
  let tableName: string;
  let blocks: string[];
  let calls: AwsCall[];

  beforeAll(async () => {
    tableName = await aws.createCheckpointTable();
    blocks = shellBlocks(section('event-too-large'));
    calls = runWithRecordingAws(
      blocks.join('\n'),
      deployedStack(
        synth,
        { [scheduleLogicalId]: FAKE_SCHEDULE, [tableLogicalId]: tableName },
        { logicalId: scheduleLogicalId },
      ),
    );
  });

  it('is linked from the alarms that lead to it', () => {
    expect(section('alarm-failed-entries')).toContain('(#event-too-large)');
    expect(section('alarm-errors')).toContain('(#event-too-large)');
  });

  it('disables the schedule, writes the checkpoint, then enables the schedule again', () => {
    const steps = calls
      .filter(
        (call) => isCall(call, 'scheduler', 'update-schedule') || isCall(call, 'dynamodb', 'update-item'),
      )
      .map((call) => (call.args[0] === 'dynamodb' ? 'update-item' : option(call, '--state')));

    expect(blocks).toHaveLength(3);
    expect(steps).toEqual(['DISABLED', 'update-item', 'ENABLED']);
    for (const call of calls.filter((candidate) => isCall(candidate, 'scheduler', 'update-schedule'))) {
      expect(option(call, '--cli-input-json')).toBe('file://schedule.json');
    }
    expect(option(theCall(calls, 'scheduler', 'get-schedule'), '--name')).toBe(FAKE_SCHEDULE);
  });

  it('finds the schedule by its exact stack output, not by a prefix of its key', () => {
    // Two programs whose outputs share a prefix (ScheduleNameDefault, ScheduleNameDefault2), polled
    // by two workers: the first worker count that gives them different ones.
    const workers = [2, 3, 4, 5, 6].find(
      (n) => assignedWorker('default', n) !== assignedWorker('default2', n),
    );
    const two = synthPollerApp({ programs: [{ name: 'default' }, { name: 'default2' }], workers });
    try {
      const ids = ['default', 'default2'].map((program) =>
        logicalIdOf(two.stack, two.stack.poller.schedules.get(program)!),
      );
      const answers = deployedStack(
        two,
        { [ids[0]!]: FAKE_SCHEDULE, [ids[1]!]: `${FAKE_SCHEDULE}-2` },
        { logicalId: ids[0]! },
      );
      expect(Object.keys(two.template.toJSON().Outputs as Json)).toEqual(
        expect.arrayContaining(['ScheduleNameDefault', 'ScheduleNameDefault2']),
      );

      const disable = runWithRecordingAws(blocks[0]!, answers);

      expect(disable.some((call) => isCall(call, 'cloudformation', 'describe-stack-resources'))).toBe(false);
      expect(option(theCall(disable, 'scheduler', 'get-schedule'), '--name')).toBe(FAKE_SCHEDULE);
      expect(option(theCall(disable, 'scheduler', 'update-schedule'), '--state')).toBe('DISABLED');
    } finally {
      two.dispose();
    }
  });

  it('keeps every setting of the deployed schedule: update-schedule replaces what it is not given', () => {
    const [schedule] = Object.values(synth.template.findResources('AWS::Scheduler::Schedule')) as {
      Properties: Json;
    }[];
    const getSchedule = deployedStack(
      synth,
      { [scheduleLogicalId]: FAKE_SCHEDULE },
      { logicalId: scheduleLogicalId },
    )['scheduler get-schedule']!.response as Json;
    const copied = fileOption<Json>(
      calls.find((call) => isCall(call, 'scheduler', 'update-schedule'))!,
      '--cli-input-json',
    );

    for (const property of Object.keys(schedule!.Properties).filter((name) => name !== 'State')) {
      expect(copied[property], property).toEqual(getSchedule[property]);
    }
    expect(copied).toMatchObject({ Name: FAKE_SCHEDULE, GroupName: 'default' });
    expect(copied.Description).toEqual(expect.any(String));
  });

  it.each<[string, readonly string[]]>([
    ['a schedule without a Description', ['Description']],
    ['a schedule without a Description or time zone', ['Description', 'ScheduleExpressionTimezone']],
  ])('copies %s without the nulls the CLI would refuse', (_name, absent) => {
    const answers = deployedStack(
      synth,
      { [scheduleLogicalId]: FAKE_SCHEDULE, [tableLogicalId]: tableName },
      { logicalId: scheduleLogicalId, withoutFields: absent },
    );

    // The stand-in validates update-schedule as the CLI does: a null Description fails the run.
    const run = runWithRecordingAws([blocks[0], blocks[2]].join('\n'), answers);

    const copies = run.filter((call) => isCall(call, 'scheduler', 'update-schedule'));
    expect(copies.map((call) => option(call, '--state'))).toEqual(['DISABLED', 'ENABLED']);
    for (const copy of copies) {
      const copied = fileOption<Json>(copy, '--cli-input-json');
      expect(Object.values(copied)).not.toContain(null);
      for (const field of absent) expect(copied, field).not.toHaveProperty(field);
      expect(copied).toMatchObject({ Name: FAKE_SCHEDULE, ScheduleExpression: 'rate(1 minute)' });
    }
  });

  it('keeps a time zone the schedule has', () => {
    const answers = deployedStack(
      synth,
      { [scheduleLogicalId]: FAKE_SCHEDULE, [tableLogicalId]: tableName },
      { logicalId: scheduleLogicalId },
    );
    (answers['scheduler get-schedule']!.response as Json).ScheduleExpressionTimezone = 'Europe/Paris';

    const run = runWithRecordingAws(blocks[0]!, answers);

    expect(fileOption<Json>(theCall(run, 'scheduler', 'update-schedule'), '--cli-input-json')).toMatchObject({
      ScheduleExpressionTimezone: 'Europe/Paris',
      Description: expect.any(String),
    });
  });

  describe('moving the checkpoint past the event', () => {
    let update: AwsCall;
    let values: UpdateValues;
    let seq: number;
    let nowMs: number;

    beforeAll(() => {
      update = theCall(calls, 'dynamodb', 'update-item');
      values = fileOption<UpdateValues>(update, '--expression-attribute-values');
      seq = Number(values[':seq'].N);
      nowMs = Number(values[':nowMs'].N);
    });

    it('writes the SEQ of the log line, expecting the checkpoint just below it', () => {
      expect(option(update, '--table-name')).toBe(tableName);
      expect(fileOption(update, '--key')).toEqual({ pk: { S: 'program#default' } });
      expect(seq).toBe(assigned(blocks[1]!, 'SEQ'));
      expect(values[':expected']).toEqual({ N: String(seq - 1) });
      expect(Math.abs(nowMs - Date.now())).toBeLessThan(60_000);
      expect(Number.isNaN(Date.parse(values[':now'].S))).toBe(false);
    });

    it.each<[string, { checkpoint?: number; lease: LeaseState }]>([
      ['while a run holds a live lease', { checkpoint: -1, lease: 'live' }],
      [
        'when the checkpoint is lower than SEQ − 1 (a mistyped SEQ would skip events)',
        { checkpoint: -5, lease: 'none' },
      ],
      ['when the checkpoint is already at SEQ (run twice)', { checkpoint: 0, lease: 'none' }],
      [
        'when the checkpoint is beyond SEQ (a stale SEQ would move it back)',
        { checkpoint: 10, lease: 'expired' },
      ],
      ['when there is no checkpoint', { lease: 'none' }],
    ])('is refused %s, and changes nothing', async (_name, { checkpoint, lease }) => {
      const stored = checkpoint === undefined ? undefined : seq + checkpoint;
      const store = await prepareItem(tableName, { checkpoint: stored, lease }, nowMs);

      await expect(replayUpdate(update)).rejects.toBeInstanceOf(ConditionalCheckFailedException);
      expect((await store.read()).checkpoint).toBe(stored ?? null);
    });

    it.each<[string, LeaseState]>([
      ['once the lease of the run that stopped on the event has expired', 'expired'],
      ['when no lease is held', 'none'],
    ])('moves the checkpoint from SEQ − 1 to SEQ %s', async (_name, lease) => {
      const store = await prepareItem(tableName, { checkpoint: seq - 1, lease }, nowMs);

      await replayUpdate(update);

      expect(await store.read()).toMatchObject({ checkpoint: seq, updatedAt: values[':now'].S });
      // The lease itself is left as it was.
      expect((await store.read()).lease).toEqual(
        lease === 'none' ? null : { owner: 'run-1', expiresAt: nowMs - 1 },
      );
    });
  });
});

describe('runbook: sequence gaps and rewinding', () => {
  it('links a sequence gap to the rewind procedure', () => {
    expect(section('alarm-sequence-gaps')).toContain('(#rewind-the-checkpoint)');
  });
});

// The CLI command lines and the links of every page, the runbook's included, are checked in
// test/unit/docs/docs-facts.test.ts; the CLI's rewind itself in
// test/integration/cli/checkpoint-commands.test.ts.
describe('runbook: errors', () => {
  /** The codes of the `- \`CODE\`: …` entries of the errors alarm's list. */
  function errorEntries(): string[] {
    return section('alarm-errors')
      .split(/^- (?=`[A-Z_]+`)/m)
      .slice(1)
      .map((item) => /^`([A-Z_]+)`/.exec(item)![1]!);
  }

  it('says what to do for every error code a run can fail with', () => {
    const codes = POLLER_ERRORS.map((errorClass) => errorClass.code);

    expect(errorEntries().sort()).toEqual(codes.sort());
  });
});
