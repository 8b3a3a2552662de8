/**
 * The operator CLI installed from the tarball into a prefix of its own (`npm install -g`), run
 * from outside this repository: its bundle is in the package and needs nothing else.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { requestSimulatorToken, runCli, type SimulateDetails, startCli } from '../support/cli-process.ts';
import { exec, temporaryDirectory } from '../support/consumer-app.ts';

describe('the CLI installed with npm install -g', () => {
  const root = temporaryDirectory('consumer-cli-');
  const prefix = path.join(root.dir, 'prefix');
  const bin = path.join(prefix, 'bin/banking-events-poller');
  const installed = path.join(prefix, 'lib/node_modules/banking-events-poller');

  beforeAll(async () => {
    await exec(
      'npm',
      ['install', '--global', '--prefix', prefix, '--no-audit', '--no-fund', inject('packageTarball')],
      {
        cwd: root.dir,
      },
    );
  });
  afterAll(() => root.dispose());

  it('installs the package alone: its dependencies are inlined in its bundle', () => {
    expect(readdirSync(path.join(prefix, 'lib/node_modules'))).toEqual(['banking-events-poller']);
    expect(readdirSync(installed)).not.toContain('node_modules');
  });

  it('answers --help with its commands and --version with the package version', async () => {
    const help = await runCli(['--help'], { bin, cwd: root.dir });
    const version = await runCli(['--version'], { bin, cwd: root.dir });
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      version: string;
    };

    expect(help.code).toBe(0);
    for (const command of ['run', 'status', 'rewind', 'replay', 'tail', 'doctor', 'simulate']) {
      expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    expect(version.stdout.trim()).toBe(manifest.version);
  });

  it('runs simulate: the banking API with test credentials, stopped by Ctrl-C', async () => {
    const simulate = startCli(['simulate', '--port', '0', '--backlog', '2', '--json'], {
      bin,
      cwd: root.dir,
    });
    await simulate.waitFor('stdout', /\n}\n/);
    const details = JSON.parse(simulate.stdout()) as SimulateDetails;

    const token = await requestSimulatorToken(details);
    simulate.child.kill('SIGINT');
    const result = await simulate.result;

    expect(token.status).toBe(200);
    expect(result.code).toBe(0);
  });
});
