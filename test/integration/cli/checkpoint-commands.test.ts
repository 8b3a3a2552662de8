/**
 * `run`, `status`, `rewind` and `replay` as an operator runs them: the built CLI in a child
 * process, against a simulator over loopback and a deployment in moto named by `--stack`.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, inject, it, type TestContext } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { json, startScriptedServer } from '../../support/scripted-http-server.ts';
import { type CliScenario, cliScenario, lines, range } from './cli-scenario.ts';

const RUN_ON_STACK = ['run', '--secret-id', '--checkpoint-table', '--event-bus', '--until-caught-up'];

// The tests run side by side: each has its own simulator, deployment and checkpoint row (its own
// seed), and most of their time is spent waiting for the CLI's processes.
describe('checkpoint commands of the CLI', { concurrent: true }, () => {
  let aws: MotoEnvironment;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());

  /** This test's world, seeded `seed`, closed when the test ends. */
  const newScenario = async (
    { onTestFinished }: TestContext,
    seed: number,
    events = 30,
  ): Promise<CliScenario> => {
    const scenario = await cliScenario(aws, inject('motoEndpoint'), { seed, events });
    onTestFinished(() => scenario.close());
    return scenario;
  };

  it('status after a run shows the checkpoint, when it moved, the lag and the last cycle, as JSON and as a table', async (context) => {
    const { expect } = context;
    const { cli, delivered, simulator } = await newScenario(context, 601);

    const run = await cli(RUN_ON_STACK);
    const json = await cli(['status', '--json']);
    const table = await cli(['status']);

    expect(run.code, run.stderr).toBe(0);
    expect(await delivered()).toEqual(range(1, 30));
    expect(json.code, json.stderr).toBe(0);
    const [status] = (JSON.parse(json.stdout) as { programs: Array<Record<string, unknown>> }).programs;
    expect(status).toMatchObject({
      program: 'default',
      checkpoint: 30,
      lease: null,
      newestCreatedDt: simulator.events().at(-1)!.created_dt,
      lagSeconds: 0,
      lastCycle: { outcome: 'completed', published: 30, lagSeconds: 0 },
      lastError: null,
    });
    expect(Date.parse(status!.checkpointMovedAt as string)).not.toBeNaN();
    expect(table.stdout).toMatch(/checkpoint\s+│ 30/);
    expect(table.stdout).toMatch(/lag\s+│ 0 s \(caught up\)/);
    expect(table.stdout).toMatch(/lease\s+│ free/);
  });

  it('rewind then run publishes again exactly the events after the new checkpoint', async (context) => {
    const { expect } = context;
    const { cli, delivered, store } = await newScenario(context, 602);
    await cli(RUN_ON_STACK);
    await delivered();

    const rewind = await cli(['rewind', '--local', '--to', '25', '--yes', '--json']);
    const rerun = await cli(RUN_ON_STACK);

    expect(rewind.code, rewind.stderr).toBe(0);
    expect(JSON.parse(rewind.stdout)).toMatchObject({
      program: 'default',
      before: 30,
      after: 25,
      moved: true,
    });
    expect(rewind.stderr).toContain(
      'Program default: checkpoint 30 → 25; the next run publishes events 26..30 again (5)',
    );
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(await delivered()).toEqual([26, 27, 28, 29, 30]);
    expect((await store.read()).checkpoint).toBe(30);
  });

  it('rewind refuses while a run holds the lease and changes nothing; --force takes the lease', async (context) => {
    const { expect } = context;
    const { cli, store, simulator } = await newScenario(context, 603, 5);
    await store.moveCheckpoint({ to: 5, expected: null, feedProgramId: simulator.programs[0]!.programId });
    await store.acquireLease({
      owner: 'run-elsewhere',
      now: Date.now(),
      expiresAt: Date.now() + 10 * 60_000,
    });

    const refused = await cli(['rewind', '--local', '--to', '2', '--yes']);
    const unchanged = await store.read();
    const forced = await cli(['rewind', '--local', '--to', '2', '--yes', '--force']);

    expect(refused.code).toBe(3);
    expect(lines(refused.stderr)).toHaveLength(1);
    expect(refused.stderr).toMatch(
      /^banking-events-poller: Program default is being polled by run-elsewhere \(lease until .*\): pass --wait .* or --force/m,
    );
    expect(unchanged).toMatchObject({ checkpoint: 5, lease: { owner: 'run-elsewhere' } });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain('Checkpoint of default: 5 → 2');
    expect(await store.read()).toMatchObject({ checkpoint: 2, lease: null });
  });

  it('rewind --to latest fast-forwards without publishing and records where it landed; a run then publishes only new events', async (context) => {
    const { expect } = context;
    const { cli, delivered, store, simulator } = await newScenario(context, 604, 250);

    const rewind = await cli(['rewind', '--local', '--to', 'latest', '--yes', '--json']);
    simulator.generate(3);
    const run = await cli(RUN_ON_STACK);

    expect(rewind.code, rewind.stderr).toBe(0);
    expect(rewind.stderr).toContain(
      'Fast-forwarding: reading the feed from the beginning without publishing',
    );
    expect(rewind.stderr).toMatch(/fast-forward 250 events passed over/);
    expect(JSON.parse(rewind.stdout)).toMatchObject({ before: null, after: 250, moved: true });
    expect(run.code, run.stderr).toBe(0);
    expect(await delivered()).toEqual([251, 252, 253]);
    expect((await store.read()).feedProgramId).toBe(simulator.programs[0]!.programId);
  });

  it('replay publishes exactly the range, leaves the checkpoint alone, and --dry-run sends nothing', async (context) => {
    const { expect } = context;
    const { cli, delivered, store } = await newScenario(context, 605);

    const dryRun = await cli(['replay', '--local', '--from', '5', '--to', '12', '--dry-run']);
    const nothingSent = await delivered();
    const replay = await cli(['replay', '--local', '--from', '5', '--to', '12', '--json']);

    expect(dryRun.code, dryRun.stderr).toBe(0);
    expect(lines(dryRun.stdout).map((line) => JSON.parse(line).detail.sequence_number)).toEqual(range(5, 12));
    expect(nothingSent).toEqual([]);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({
      published: 8,
      through: 12,
      missing: [],
      endOfFeed: false,
    });
    expect(await delivered()).toEqual(range(5, 12));
    expect((await store.read()).checkpoint).toBeNull();
  });

  it('replay resumes after what an interrupted run of the same command recorded', async (context) => {
    const { expect } = context;
    const { cli, delivered } = await newScenario(context, 606);
    const directory = await mkdtemp(join(tmpdir(), 'replay-state-'));
    const stateFile = join(directory, 'state.json');
    await mkdir(directory, { recursive: true });
    await writeFile(
      stateFile,
      JSON.stringify({
        program: 'default',
        from: 5,
        to: 12,
        publishedThrough: 9,
        updatedAt: new Date().toISOString(),
      }),
    );

    const replay = await cli(['replay', '--local', '--from', '5', '--to', '12', '--state-file', stateFile]);

    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stderr).toContain(`Resuming after 9 (${stateFile})`);
    expect(await delivered()).toEqual([10, 11, 12]);
  });

  it('rewind --wait moves the checkpoint as soon as the running run releases its lease', async (context) => {
    const { expect } = context;
    const { start, store, simulator } = await newScenario(context, 607, 5);
    await store.moveCheckpoint({ to: 5, expected: null, feedProgramId: simulator.programs[0]!.programId });
    const now = Date.now();
    await store.acquireLease({ owner: 'run-ending-soon', now, expiresAt: now + 60_000 });
    const waiting = start(['rewind', '--local', '--to', '3', '--yes', '--wait']);
    await waiting.waitFor('stderr', /Waiting for run-ending-soon to release the lease of default/);

    await store.releaseLease('run-ending-soon');
    const result = await waiting.result;

    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Checkpoint of default: 5 → 3');
    expect((await store.read()).checkpoint).toBe(3);
  });

  it('rewind refuses a checkpoint below the oldest event the banking service still has', async (context) => {
    const { expect } = context;
    const { cli, store, simulator } = await newScenario(context, 608, 0);
    // A feed that no longer has its first 99 events: every poll answers from 100 on.
    const oldest = simulator.programs[0]!;
    const retained = await startScriptedServer(
      json(200, {
        data: [100, 101].map((sequence) => ({
          id: `evt-${sequence}`,
          program_id: oldest.programId,
          sequence_number: sequence,
          created_dt: '2026-01-01T00:00:00.000Z',
          type: 'TRANSACTION',
          data: {},
        })),
        last_sequence_number: 101,
        limit: 100,
      }),
      { routes: { '/oauth2/token': json(200, { access_token: 'retained-token', expires_in: 3600 }) } },
    );
    try {
      const secretId = await aws.createSecret(
        JSON.stringify({ base_url: retained.baseUrl, client_id: 'c', client_secret: 'retained-s3cret' }),
      );
      await store.moveCheckpoint({ to: 150, expected: null, feedProgramId: oldest.programId });

      const result = await cli(['rewind', '--local', '--to', '50', '--yes', '--secret-id', secretId]);

      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toEqual([
        'banking-events-poller: --to 50 is past the oldest event the banking service still has (100): events 51..99 cannot be published again: pass --to 99 or more (or --to beginning for everything it has)',
      ]);
      expect((await store.read()).checkpoint).toBe(150);
    } finally {
      await retained.close();
    }
  });

  it('event looks one up by sequence number or id, prints what would be published, and says when there is none', async (context) => {
    const { expect } = context;
    const { cli, simulator } = await newScenario(context, 609, 5);
    const target = simulator.events()[2]!;

    const bySequence = await cli(['event', '--local', '3']);
    const byId = await cli(['event', '--local', target.id]);
    const missing = await cli(['event', '--local', '99']);

    expect(bySequence.code, bySequence.stderr).toBe(0);
    expect(JSON.parse(bySequence.stdout)).toEqual({
      source: expect.any(String),
      'detail-type': target.type.toLowerCase(),
      time: target.created_dt,
      detail: { ...target, type: target.type.toLowerCase() },
    });
    expect(byId.stdout).toBe(bySequence.stdout);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/no event with sequence number 99 for default \(HTTP 404\)/);
  });

  it('takes credentials from --profile and the region from --region, as the AWS CLI does', async (context) => {
    const { expect } = context;
    const { deployment } = await newScenario(context, 610, 0);
    const directory = await mkdtemp(join(tmpdir(), 'aws-config-'));
    await writeFile(
      join(directory, 'credentials'),
      '[ops]\naws_access_key_id = testing\naws_secret_access_key = testing\n',
    );
    await writeFile(join(directory, 'config'), '[profile ops]\noutput = json\n');
    const env = {
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
      AWS_REGION: undefined,
      AWS_DEFAULT_REGION: undefined,
      AWS_SHARED_CREDENTIALS_FILE: join(directory, 'credentials'),
      AWS_CONFIG_FILE: join(directory, 'config'),
      AWS_EC2_METADATA_DISABLED: 'true',
    };

    const withProfile = await runCliAt(
      ['--profile', 'ops', '--region', 'us-east-1', '--stack', deployment.stackName, 'status', '--json'],
      env,
    );
    const withoutRegion = await runCliAt(
      ['--profile', 'ops', '--stack', deployment.stackName, 'status'],
      env,
    );

    expect(withProfile.code, withProfile.stderr).toBe(0);
    expect(JSON.parse(withProfile.stdout)).toMatchObject({ checkpointTable: deployment.tableName });
    expect(withoutRegion.code).toBe(1);
    expect(withoutRegion.stderr).toMatch(/^banking-events-poller: No AWS region: pass --region/);
  });

  describe('bad input: one line naming the problem and the fix, a non-zero exit, nothing changed', () => {
    // The last of each row: its scenario's seed.
    it.for<
      [
        string,
        (stack: string) => readonly string[],
        Record<string, string | undefined>,
        number,
        RegExp,
        number,
      ]
    >([
      [
        'an unknown stack',
        () => ['--stack', 'NoSuchStack', 'status'],
        {},
        2,
        /Stack NoSuchStack does not exist .*: check --stack/,
        611,
      ],
      [
        'an unknown program',
        (stack) => ['--stack', stack, 'rewind', '--program', 'cards', '--to', '1', '--yes'],
        {},
        2,
        /Unknown program "cards": stack .* polls default: pass --program/,
        612,
      ],
      [
        'a range with --to below --from',
        (stack) => ['--stack', stack, 'replay', '--from', '9', '--to', '3'],
        {},
        2,
        /--to 3 is below --from 9: give the range in ascending order/,
        613,
      ],
      [
        'a rewind forward',
        (stack) => ['--stack', stack, 'rewind', '--local', '--to', '99', '--yes'],
        {},
        2,
        /--to 99 is beyond the checkpoint 5: .* pass --allow-forward/,
        614,
      ],
      [
        'missing AWS credentials',
        (stack) => ['--stack', stack, 'rewind', '--to', '1', '--yes'],
        {
          AWS_ACCESS_KEY_ID: undefined,
          AWS_SECRET_ACCESS_KEY: undefined,
          AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials',
          AWS_CONFIG_FILE: '/nonexistent/config',
          AWS_EC2_METADATA_DISABLED: 'true',
        },
        1,
        /No AWS credentials found: run `aws configure`/,
        615,
      ],
      [
        'an unreachable endpoint',
        (stack) => ['--stack', stack, 'rewind', '--to', '1', '--yes'],
        { AWS_ENDPOINT_URL: 'http://127.0.0.1:9' },
        1,
        /Cannot reach the AWS endpoint \(ECONNREFUSED\): check your network, or AWS_ENDPOINT_URL/,
        616,
      ],
    ])('%s', async ([, args, env, code, message, seed], context) => {
      const { expect } = context;
      const { store, simulator, deployment } = await newScenario(context, seed, 5);
      await store.moveCheckpoint({ to: 5, expected: null, feedProgramId: simulator.programs[0]!.programId });
      const before = await store.read();

      const result = await runCliAt(args(deployment.stackName), env);

      expect(result.code).toBe(code);
      expect(lines(result.stderr)).toHaveLength(1);
      expect(result.stderr).toMatch(new RegExp(`^banking-events-poller: ${message.source}`));
      expect(result.stdout).toBe('');
      expect(await store.read()).toEqual(before);
    });
  });

  /** The CLI with explicit arguments (not the scenario's --stack) and environment overrides. */
  async function runCliAt(args: readonly string[], env: Record<string, string | undefined>) {
    const { runCli, motoCliEnvironment } = await import('../../support/cli-process.ts');
    return runCli(args, { env: { ...motoCliEnvironment(inject('motoEndpoint')), ...env } });
  }
});
