/**
 * `programs list | add | pause | resume | remove` and `secret set --program`, through the built
 * bin, against a deployment in moto whose stack names its programs table and secrets prefix (the
 * stack program `default` seeded as a deploy would). Every change is read back from the table;
 * every refusal leaves it as it was.
 */
import { DescribeSecretCommand, GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { DynamoDbProgramRegistry } from '../../../functions/adapters/aws/dynamodb-program-registry.ts';
import { assignedWorker } from '../../../functions/core/fleet/assignment.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliScenario, cliScenario, lines } from './cli-scenario.ts';

interface ListedProgram {
  readonly name: string;
  readonly state: string;
  readonly owner: string;
  readonly worker: number;
  readonly secretId: string;
  readonly settings: Record<string, unknown>;
  readonly revision: number;
}

describe('the programs commands of the CLI', () => {
  let aws: MotoEnvironment;
  let scenario: CliScenario;
  let seed = 3500;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => scenario?.close());

  const newScenario = async (options: { programs?: { workers: number } } = { programs: { workers: 3 } }) => {
    seed += 1;
    scenario = await cliScenario(aws, inject('motoEndpoint'), { seed, events: 0, ...options });
    return scenario;
  };
  const registryOf = (current: CliScenario) =>
    new DynamoDbProgramRegistry({ client: aws.dynamodb, tableName: current.deployment.programs!.tableName });
  const listed = async (current: CliScenario): Promise<ListedProgram[]> => {
    const result = await current.cli(['programs', 'list', '--json']);
    expect(result.code, result.stderr).toBe(0);
    return (JSON.parse(result.stdout) as { programs: ListedProgram[] }).programs;
  };

  it('adds a program under the secrets prefix, polled by the worker its name gives, and lists it', async () => {
    const current = await newScenario();
    const prefix = current.deployment.programs!.secretsPrefix;

    const add = await current.cli(['programs', 'add', 'cards', '--setting', 'pollLimit=50', '--json']);

    expect(add.code, add.stderr).toBe(0);
    expect(JSON.parse(add.stdout)).toMatchObject({
      added: { name: 'cards', state: 'active', owner: 'operator', secretId: `${prefix}cards`, revision: 1 },
    });
    expect(await registryOf(current).get('cards')).toEqual({
      name: 'cards',
      secretId: `${prefix}cards`,
      state: 'active',
      owner: 'operator',
      settings: { pollLimit: 50 },
      revision: 1,
    });
    expect(await listed(current)).toEqual([
      expect.objectContaining({
        name: 'cards',
        worker: assignedWorker('cards', 3),
        settings: { pollLimit: 50 },
      }),
      expect.objectContaining({ name: 'default', owner: 'stack', worker: assignedWorker('default', 3) }),
    ]);
    const table = await current.cli(['programs', 'list']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/cards\s.*active\s.*operator/);
    expect(table.stdout).toContain('2 program(s), 2 active, over 3 worker(s)');
    // status shows it too, after the stack's own: the stack's outputs do not name it.
    const status = await current.cli(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const rows = (JSON.parse(status.stdout) as { programs: { program: string }[] }).programs;
    expect(rows.map((row) => row.program)).toEqual(['default', 'cards']);
  });

  it('refuses, changing nothing: a second add, a secret outside the deployment, a setting out of range', async () => {
    const current = await newScenario();
    await current.cli(['programs', 'add', 'cards']);

    const again = await current.cli(['programs', 'add', 'cards']);
    const foreign = await current.cli(['programs', 'add', 'loans', '--secret-id', 'another-team/loans']);
    const setting = await current.cli(['programs', 'add', 'fx', '--setting', 'pollLimit=5000']);
    const unknown = await current.cli(['programs', 'add', 'fx', '--setting', 'eventBus=x']);
    const name = await current.cli(['programs', 'add', 'my program']);

    expect([again.code, foreign.code, setting.code, unknown.code, name.code]).toEqual([3, 2, 2, 2, 2]);
    expect(lines(again.stderr)).toEqual([
      expect.stringMatching(/Program cards is already in table .*: change it with programs pause or resume/),
    ]);
    expect(foreign.stderr).toMatch(
      /Secret another-team\/loans is not one of stack .*'s: its function reads only the secrets under banking-events-poller\//,
    );
    expect(setting.stderr).toMatch(/settings\.pollLimit must be an integer from 1 to 1000/);
    expect(unknown.stderr).toMatch(/settings\.eventBus is not a setting that may differ per program/);
    expect(name.stderr).toMatch(/the program name must be letters, digits/);
    expect((await listed(current)).map(({ name: listedName }) => listedName)).toEqual(['cards', 'default']);
  });

  it('pauses and resumes any program, the stack ones included, each a new revision', async () => {
    const current = await newScenario();

    const pause = await current.cli(['programs', 'pause', 'default', '--json']);
    const twice = await current.cli(['programs', 'pause', 'default']);

    expect(pause.code, pause.stderr).toBe(0);
    expect(JSON.parse(pause.stdout)).toMatchObject({
      previous: 'active',
      program: { state: 'paused', revision: 2 },
    });
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain('Program default is already paused; nothing changed.');
    expect(await registryOf(current).get('default')).toMatchObject({
      state: 'paused',
      owner: 'stack',
      revision: 2,
    });

    const resume = await current.cli(['programs', 'resume', 'default']);

    expect(resume.code).toBe(0);
    expect(resume.stdout).toContain('Program default resumed');
    expect(await registryOf(current).get('default')).toMatchObject({ state: 'active', revision: 3 });
    const missing = await current.cli(['programs', 'pause', 'nope']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/No program nope in table/);
  });

  it('status gives each program a line once there are more than 5, and --program one program in full', async () => {
    const current = await newScenario();
    const added = ['p1', 'p2', 'p3', 'p4', 'p5'];
    for (const name of added) expect((await current.cli(['programs', 'add', name])).code).toBe(0);
    // One of them has run: a checkpoint, and a lease still held.
    const store = new DynamoDbCheckpointStore({
      client: aws.dynamodb,
      tableName: current.deployment.tableName,
      program: 'p3',
    });
    await store.moveCheckpoint({ to: 42, expected: null, feedProgramId: 'feed-p3' });
    await store.acquireLease({ owner: 'run-p3', now: Date.now(), expiresAt: Date.now() + 10 * 60_000 });
    // Another's last cycle failed.
    await new DynamoDbCheckpointStore({
      client: aws.dynamodb,
      tableName: current.deployment.tableName,
      program: 'p5',
    }).recordCycle({
      endedAt: new Date().toISOString(),
      outcome: 'failed',
      published: 0,
      lagSeconds: null,
      error: { code: 'AUTHENTICATION_FAILED', message: 'the token request was refused (HTTP 401)' },
    });

    const overview = await current.cli(['status']);
    const one = await current.cli(['status', '--program', 'p3']);

    expect(overview.code, overview.stderr).toBe(0);
    const rowOf = (program: string) =>
      lines(overview.stdout).find((line) => line.split('│').map((cell) => cell.trim())[1] === program);
    expect(lines(overview.stdout).filter((line) => /│ (default|p\d) /.test(line))).toHaveLength(6);
    expect(rowOf('p3')).toMatch(/│ p3\s+│ 42\s+│ unknown\s+│ none recorded\s+│ held\s+│ none\s+│/);
    expect(rowOf('p1')).toMatch(/│ p1\s+│ none yet\s+│ unknown\s+│ none recorded\s+│ free\s+│ none\s+│/);
    expect(rowOf('p5')).toMatch(
      /│ p5\s+│ none yet\s+│ unknown\s+│ failed, 0 published, \d+ s ago\s+│ free\s+│ AUTHENTICATION_FAILED, \d+ s ago\s+│/,
    );
    expect(overview.stdout).toContain(
      `6 programs, 1 whose last cycle failed: p5 (table ${current.deployment.tableName}). One in detail: status --program NAME.`,
    );
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(/program p3/);
    expect(one.stdout).toMatch(/lease\s+│ held: run-p3 until/);
  });

  it("removes an operator's program, and refuses the stack's with what to do instead", async () => {
    const current = await newScenario();
    await current.cli(['programs', 'add', 'cards']);

    const stack = await current.cli(['programs', 'remove', 'default']);
    const removed = await current.cli(['programs', 'remove', 'cards', '--json']);

    expect(stack.code).toBe(3);
    expect(lines(stack.stderr)).toEqual([
      expect.stringMatching(
        /Program default is one of the stack's programs \(its programs prop\): the next deploy would add it again: drop it from the programs prop and deploy, or pause it/,
      ),
    ]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toMatchObject({ removed: 'cards' });
    expect((await listed(current)).map(({ name }) => name)).toEqual(['default']);
  });

  it('secret set --program creates <prefix><program>, tagged, then updates it, never printing the secret', async () => {
    const current = await newScenario();
    const prefix = current.deployment.programs!.secretsPrefix;
    const value = JSON.stringify({
      base_url: 'https://bank.example.com',
      client_id: 'cards-client',
      client_secret: 'cards-s3cret-value-123',
    });

    const first = await current.cli(['secret', 'set', '--program', 'cards', '--json'], { input: value });
    const second = await current.cli(['secret', 'set', '--program', 'cards'], {
      input: value.replace('cards-s3cret', 'rotated-s3cret'),
    });

    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ created: true, clientId: 'cards-client' });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/^Secret .*cards.* updated/);
    for (const output of [first, second]) expect(output.stdout + output.stderr).not.toContain('s3cret-value');
    const stored = await aws.secretsManager.send(new GetSecretValueCommand({ SecretId: `${prefix}cards` }));
    expect(JSON.parse(stored.SecretString!)).toMatchObject({ client_secret: 'rotated-s3cret-value-123' });
    const described = await aws.secretsManager.send(
      new DescribeSecretCommand({ SecretId: `${prefix}cards` }),
    );
    expect(described.Tags).toEqual(
      expect.arrayContaining([
        { Key: 'banking-events-poller:stack', Value: current.deployment.stackName },
        { Key: 'banking-events-poller:program', Value: 'cards' },
      ]),
    );
  });

  it('says a stack of an older version has no programs table, and what to do', async () => {
    const current = await newScenario({});

    const result = await current.cli(['programs', 'list']);

    expect(result.code).toBe(2);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/has no output ProgramsTableName: .*deploy it again with this version/),
    ]);
  });
});
