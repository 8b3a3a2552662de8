/**
 * `jumps list|accept|reject` as an operator runs them: the built CLI in a child process against a
 * deployment in moto named by `--stack`, its checkpoint row holding what a run of the function
 * records for an event held past a sequence jump (written here by the real store).
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { HeldJump } from '../../../functions/core/checkpoint/store.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type CliScenario, cliScenario, lines } from './cli-scenario.ts';

const MAX = Number.MAX_SAFE_INTEGER;

describe('jumps commands of the CLI', () => {
  let aws: MotoEnvironment;
  let scenario: CliScenario;
  let seed = 3_300;

  beforeAll(() => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
  });
  afterAll(() => aws.restore());
  afterEach(async () => scenario?.close());

  const held: HeldJump[] = [
    {
      sequenceNumber: 2_000_000,
      eventId: 'evt-low',
      fingerprint: 'a'.repeat(64),
      heldAt: Date.now() - 60_000,
    },
    { sequenceNumber: MAX, eventId: 'evt-max', fingerprint: 'b'.repeat(64), heldAt: Date.now() - 30_000 },
  ];

  /** A row as a run leaves it: checkpoint 5, two held jumps, its lease live (`until`) or released. */
  async function newScenario(lease: 'released' | 'live') {
    seed += 1;
    scenario = await cliScenario(aws, inject('motoEndpoint'), { seed, events: 0 });
    const { store } = scenario;
    const now = Date.now();
    await store.acquireLease({ owner: 'run-elsewhere', now, expiresAt: now + 10 * 60_000 });
    await store.commit({
      owner: 'run-elsewhere',
      sequenceNumber: 5,
      feedProgramId: 'feed-1',
      heldJumps: held,
    });
    if (lease === 'released') await store.releaseLease('run-elsewhere');
    return scenario;
  }

  it('list shows each held jump and the checkpoint, as a table and as JSON; status names those awaiting a decision', async () => {
    const { cli } = await newScenario('released');

    const table = await cli(['jumps', 'list']);
    const json = await cli(['--json', 'jumps', 'list', '--program', 'default']);
    const status = await cli(['status']);

    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toContain('Program default: checkpoint 5; held sequence jumps:');
    expect(table.stdout).toMatch(new RegExp(`${MAX}\\s+│ evt-max\\s+│ .*│ awaiting a decision`));
    expect(JSON.parse(json.stdout)).toEqual({ program: 'default', checkpoint: 5, heldJumps: held });
    expect(status.stdout).toMatch(
      new RegExp(`sequence jumps\\s+│ 2000000, ${MAX} held, awaiting a decision`),
    );
  });

  it('accept is refused while a run holds the lease and changes nothing; --force takes the lease and records it', async () => {
    const { cli, store } = await newScenario('live');

    const refused = await cli(['jumps', 'accept', String(MAX), '--yes']);
    const unchanged = await store.read();
    const forced = await cli(['--json', 'jumps', 'accept', String(MAX), '--yes', '--force']);

    expect(refused.code).toBe(3);
    expect(lines(refused.stderr).at(-1)).toMatch(
      /^banking-events-poller: Program default is being polled by run-elsewhere \(lease until .*\): pass --wait .* or --force/,
    );
    expect(unchanged.heldJumps).toEqual(held);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain(`the event evt-max at ${MAX}`);
    expect(forced.stderr).toContain(
      `is accepted: the next run publishes it and moves the checkpoint (5) past 6..${MAX - 1}`,
    );
    expect(JSON.parse(forced.stdout)).toMatchObject({
      program: 'default',
      decided: true,
      leaseTaken: true,
      heldJump: { sequenceNumber: MAX, eventId: 'evt-max', decision: 'accepted' },
    });
    const after = await store.read();
    expect(after.lease).toBeNull();
    expect(after.checkpoint).toBe(5);
    expect(after.heldJumps).toEqual([
      held[0],
      { ...held[1], decision: 'accepted', decidedAt: expect.any(Number) },
    ]);
  });

  it('reject records the decision on that jump alone; deciding it again is nothing to do', async () => {
    const { cli, store } = await newScenario('released');

    const rejected = await cli(['jumps', 'reject', '2000000', '--yes']);
    const again = await cli(['jumps', 'reject', '2000000', '--yes']);

    expect(rejected.code, rejected.stderr).toBe(0);
    expect(rejected.stdout).toContain('Jump to 2000000 of default: rejected');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('is already rejected; nothing to do');
    expect((await store.read()).heldJumps).toEqual([
      { ...held[0], decision: 'rejected', decidedAt: expect.any(Number) },
      held[1],
    ]);
  });

  it.each<[string, readonly string[], RegExp]>([
    ['a number that is not one', ['jumps', 'accept', '12x', '--yes'], /<sequence> must be a whole number/],
    [
      'a number beyond 2^53 − 1',
      ['jumps', 'accept', '9007199254740993', '--yes'],
      /<sequence> must be a whole number/,
    ],
    [
      'a jump the program does not hold',
      ['jumps', 'reject', '7', '--yes'],
      /holds no jump to 7: run `banking-events-poller jumps list`/,
    ],
    [
      'an event id not held there',
      ['jumps', 'accept', String(MAX), '--event-id', 'other', '--yes'],
      /holds no jump to \d+ for event other/,
    ],
    ['no --yes without a terminal', ['jumps', 'accept', String(MAX)], /Confirmation needed.*pass --yes/],
  ])('refuses %s in one line, changing nothing', async (_name, args, message) => {
    const { cli, store } = await newScenario('released');

    const result = await cli(args);

    expect(result.code).not.toBe(0);
    expect(lines(result.stderr).filter((line) => line.startsWith('banking-events-poller:'))).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect((await store.read()).heldJumps).toEqual(held);
  });
});
