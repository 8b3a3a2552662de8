/**
 * The runbook's checkpoint procedure, run as written: its shell blocks are executed by bash with a
 * recording `aws` stand-in, and the DynamoDB write they would make is then sent to moto against a
 * checkpoint item written by the real `DynamoDbCheckpointStore`.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConditionalCheckFailedException, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../support/aws-test-env.ts';
import { REPO_ROOT, synthPollerApp } from './support/poller-app-fixture.ts';

const RUNBOOK = readFileSync(path.join(REPO_ROOT, 'docs/deploy.md'), 'utf8');
const FAKE_SCHEDULE = 'BankingEventsPoller-PollerScheduleDefault-0123456789AB';

/** The runbook text from `<a id="<anchor>"></a>` to the next anchor. */
function section(anchor: string): string {
  const start = RUNBOOK.indexOf(`<a id="${anchor}"></a>`);
  expect(start, `docs/deploy.md has no anchor ${anchor}`).toBeGreaterThanOrEqual(0);
  const end = RUNBOOK.indexOf('<a id="', start + 1);
  return RUNBOOK.slice(start, end === -1 ? undefined : end);
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

interface AwsCall {
  readonly args: readonly string[];
  /** Contents of the `file://` arguments at the time of the call, by argument. */
  readonly files: ReadonlyMap<string, string>;
}

/**
 * Runs `script` in bash with `aws` replaced by a function that records each call (arguments and
 * the files they name) and answers the stack lookups with `tableName` and a schedule name.
 */
function runWithRecordingAws(script: string, tableName: string): AwsCall[] {
  const workdir = mkdtempSync(path.join(tmpdir(), 'runbook-'));
  try {
    const calls = path.join(workdir, 'calls');
    mkdirSync(calls);
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
  case "$1 $2" in
    'cloudformation describe-stacks') echo "$FAKE_TABLE" ;;
    'cloudformation describe-stack-resources') echo "$FAKE_SCHEDULE" ;;
    'scheduler get-schedule') echo '{"Name": "'"$FAKE_SCHEDULE"'"}' ;;
  esac
}
`;
    const result = spawnSync('bash', ['-c', `${prelude}\n${script}`], {
      cwd: workdir,
      env: { PATH: process.env.PATH, AWS_CALLS: calls, FAKE_TABLE: tableName, FAKE_SCHEDULE },
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

function isCall(call: AwsCall, service: string, command: string): boolean {
  return call.args[0] === service && call.args[1] === command;
}

describe('runbook: an event too large for the bus', () => {
  let aws: MotoEnvironment;
  let tableName: string;
  let calls: AwsCall[];

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    tableName = await aws.createCheckpointTable();
    calls = runWithRecordingAws(shellBlocks(section('event-too-large')).join('\n'), tableName);
  });
  afterAll(() => aws.restore());

  it('no longer claims the poller continues after a hand-published event, and links the procedure', () => {
    expect(RUNBOOK).not.toMatch(/then the poller continues/);
    expect(section('alarm-failed-entries')).toContain('(#event-too-large)');
    expect(section('alarm-errors')).toContain('(#event-too-large)');
  });

  it('disables the schedule, writes the checkpoint, then enables the schedule again', () => {
    const steps = calls
      .filter(
        (call) => isCall(call, 'scheduler', 'update-schedule') || isCall(call, 'dynamodb', 'update-item'),
      )
      .map((call) => (call.args[0] === 'dynamodb' ? 'update-item' : option(call, '--state')));

    expect(steps).toEqual(['DISABLED', 'update-item', 'ENABLED']);
    for (const call of calls.filter((candidate) => isCall(candidate, 'scheduler', 'update-schedule'))) {
      expect(option(call, '--cli-input-json')).toBe('file://schedule.json');
    }
    expect(option(calls.find((call) => isCall(call, 'scheduler', 'get-schedule'))!, '--name')).toBe(
      FAKE_SCHEDULE,
    );
  });

  it('keeps every setting of the deployed schedule: update-schedule replaces what it is not given', () => {
    const synth = synthPollerApp();
    try {
      const [schedule] = Object.values(synth.template.findResources('AWS::Scheduler::Schedule')) as {
        Properties: Record<string, unknown>;
      }[];
      const getSchedule = calls.find((call) => isCall(call, 'scheduler', 'get-schedule'))!;
      const kept = [...option(getSchedule, '--query').matchAll(/(\w+): \1/g)].map(([, field]) => field);

      for (const property of Object.keys(schedule!.Properties).filter((name) => name !== 'State')) {
        expect(kept, property).toContain(property);
      }
      expect(kept).toEqual(expect.arrayContaining(['Name', 'GroupName']));
    } finally {
      synth.dispose();
    }
  });

  it('moves the checkpoint past the event only once no run holds a live lease', async () => {
    const update = calls.find((call) => isCall(call, 'dynamodb', 'update-item'))!;
    const key = JSON.parse(update.files.get(option(update, '--key'))!) as { pk: { S: string } };
    const values = JSON.parse(update.files.get(option(update, '--expression-attribute-values'))!) as {
      ':seq': { N: string };
      ':now': { S: string };
      ':nowMs': { N: string };
    };
    const send = () =>
      aws.dynamodb.send(
        new UpdateItemCommand({
          TableName: option(update, '--table-name'),
          Key: key,
          UpdateExpression: option(update, '--update-expression'),
          ConditionExpression: option(update, '--condition-expression'),
          ExpressionAttributeValues: values,
        }),
      );
    expect(option(update, '--table-name')).toBe(tableName);
    expect(key).toEqual({ pk: { S: 'program#default' } });
    const stuckAt = Number(values[':seq'].N) - 1;
    const nowMs = Number(values[':nowMs'].N);
    expect(Math.abs(nowMs - Date.now())).toBeLessThan(60_000);
    const store = new DynamoDbCheckpointStore({ client: aws.dynamodb, tableName, program: 'default' });
    await store.acquireLease({ owner: 'run-1', expiresAt: nowMs + 60_000, now: nowMs });
    await store.commit('run-1', stuckAt);

    await expect(send()).rejects.toBeInstanceOf(ConditionalCheckFailedException);
    expect((await store.read()).checkpoint).toBe(stuckAt);

    // An expired lease (its run ended without releasing it) does not block the write.
    await store.acquireLease({ owner: 'run-2', expiresAt: nowMs - 1, now: nowMs + 60_001 });
    await send();
    expect(await store.read()).toMatchObject({
      checkpoint: stuckAt + 1,
      updatedAt: values[':now'].S,
      lease: { owner: 'run-2', expiresAt: nowMs - 1 },
    });
    expect(Number.isNaN(Date.parse(values[':now'].S))).toBe(false);
  });
});

describe('runbook: sequence gaps and rewinding', () => {
  it('sends the person on call from a sequence gap to the rewind procedure', () => {
    const gaps = section('alarm-sequence-gaps');

    expect(gaps).toContain('GET /event/sequence/:n');
    expect(gaps).toContain('(#rewind-the-checkpoint)');
    expect(section('rewind-the-checkpoint')).toMatch(
      /steps 2 to 4 of\s+\[the procedure above\]\(#event-too-large\)/,
    );
  });
});
