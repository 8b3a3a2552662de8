/**
 * The one-shot commands that call the banking service from this machine (`event`, `replay`,
 * `rewind` and `doctor` with `--local`, `secret set --verify`) close every connection they open to
 * it, when they succeed and when they fail. A command's process ends whether or not it does (undici
 * leaves idle sockets unreferenced, and the exit closes them), so this is proven in this process:
 * the CLI's commands run in-process (`createCli`, as `main.ts` runs them) against the simulator on
 * loopback and a deployment in moto, and right after a command returns every socket it opened to
 * the bank is destroyed, and the bank sees each of its connections close (awaited, not timed).
 */
import { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { CliError } from '../../../functions/cli/cli-errors.ts';
import { createCli } from '../../../functions/cli/cli-program.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { type BankSockets, watchBankSockets } from '../../support/bank-sockets.ts';
import { type CliScenario, cliScenario } from './cli-scenario.ts';

interface InProcessResult {
  readonly stdout: string;
  readonly stderr: string;
  /** What the command threw (`main.ts` would print it and exit with its code). */
  readonly error: unknown;
}

/** Runs `banking-events-poller …args` in this process, `input` on its stdin, capturing its output. */
async function runInProcess(args: readonly string[], input?: string): Promise<InProcessResult> {
  const out: string[] = [];
  const err: string[] = [];
  const capture = (into: string[]) => (chunk: string | Uint8Array) => {
    into.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  };
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(capture(out));
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(capture(err));
  const stdin = Object.getOwnPropertyDescriptor(process, 'stdin')!;
  if (input !== undefined) {
    Object.defineProperty(process, 'stdin', {
      configurable: true,
      value: Readable.from([Buffer.from(input)]),
    });
  }
  let error: unknown;
  try {
    await createCli('0.0.0').parseAsync([...args], { from: 'user' });
  } catch (thrown) {
    error = thrown;
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
    Object.defineProperty(process, 'stdin', stdin);
  }
  return { stdout: out.join(''), stderr: err.join(''), error };
}

describe('one-shot commands close their connections to the bank', () => {
  let aws: MotoEnvironment;
  let scenario: CliScenario;
  let sockets: BankSockets | undefined;
  let wrongSecret: string;

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    scenario = await cliScenario(aws, inject('motoEndpoint'), { seed: 4300, events: 8 });
    wrongSecret = await aws.createSecret(
      JSON.stringify({
        base_url: scenario.simulator.url,
        client_id: scenario.simulator.programs[0]!.clientId,
        client_secret: 'not-the-client-secret',
      }),
    );
  });
  afterAll(async () => {
    await scenario?.close();
    aws.restore();
  });
  afterEach(() => {
    sockets?.stop();
    sockets = undefined;
  });

  /** Runs the command with the bank's connections watched, and checks they are all closed after it. */
  async function runWatched(args: readonly string[], input?: string): Promise<InProcessResult> {
    sockets = watchBankSockets(Number(new URL(scenario.simulator.url).port));
    const result = await runInProcess(['--stack', scenario.deployment.stackName, ...args], input);
    // Not vacuous: the command did reach the bank.
    expect(sockets.opened.length, result.stderr).toBeGreaterThan(0);
    expect(sockets.stillOpen()).toEqual([]);
    await sockets.serverSideClosed();
    expect(sockets.accepted.every((socket) => socket.destroyed)).toBe(true);
    return result;
  }

  const verifiedValue = (clientSecret: string) =>
    JSON.stringify({
      base_url: scenario.simulator.url,
      client_id: scenario.simulator.programs[0]!.clientId,
      client_secret: clientSecret,
    });

  it('event --local, found and not found', async () => {
    const found = await runWatched(['event', '--local', '3']);
    expect(found.error).toBeUndefined();
    expect(JSON.parse(found.stdout)).toMatchObject({ detail: { sequence_number: 3 } });

    const missing = await runWatched(['event', '--local', '99']);
    expect(missing.error).toBeInstanceOf(CliError);
    expect((missing.error as Error).message).toMatch(/has no event with sequence number 99/);
  });

  it('replay --local --dry-run', async () => {
    const result = await runWatched(['replay', '--local', '--from', '2', '--to', '4', '--dry-run']);
    expect(result.error).toBeUndefined();
    expect(result.stdout.trim().split('\n')).toHaveLength(3);
  });

  it('rewind --local, to a number (the retention check) and to latest (the fast-forward)', async () => {
    const back = await runWatched(['rewind', '--local', '--to', '2', '--yes', '--allow-forward']);
    expect(back.error).toBeUndefined();
    const latest = await runWatched(['rewind', '--local', '--to', 'latest', '--yes']);
    expect(latest.error).toBeUndefined();
    expect(latest.stdout).toContain('→ 8');
  });

  it('doctor --local, with credentials that work and with a client secret the bank refuses', async () => {
    const healthy = await runWatched(['doctor', '--local', '--json', '--no-write-probes']);
    expect(JSON.parse(healthy.stdout).checks).toContainEqual(
      expect.objectContaining({ check: 'GET /events (default)', verdict: 'ok' }),
    );

    const refused = await runWatched([
      ...['doctor', '--local', '--json', '--no-write-probes', '--secret-id', wrongSecret],
    ]);
    expect(refused.error).toBeInstanceOf(CliError);
    expect(JSON.parse(refused.stdout).checks).toContainEqual(
      expect.objectContaining({ check: 'token (default)', verdict: 'failed' }),
    );
  });

  it('secret set --verify, a token issued and a token refused', async () => {
    const program = scenario.simulator.programs[0]!;
    const verified = await runWatched(
      ['secret', 'set', '--verify', '--json'],
      verifiedValue(program.clientSecret),
    );
    expect(verified.error).toBeUndefined();
    expect(JSON.parse(verified.stdout)).toMatchObject({ verified: true });

    const refused = await runWatched(['secret', 'set', '--verify'], verifiedValue('not-the-client-secret'));
    expect(refused.error).toBeInstanceOf(CliError);
    expect((refused.error as Error).message).toMatch(/Could not get a token with these credentials/);
  });
});
