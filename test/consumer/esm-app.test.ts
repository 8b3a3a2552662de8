/**
 * The package in a plain ESM app holding nothing but aws-cdk-lib, constructs (from the registry)
 * and the tarball: no TypeScript, no esbuild anywhere in its tree. Its app is the construct's example (docs/construct.md)
 * compiled to JavaScript, synthesized offline by the CDK CLI.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { cdkJsonContext } from '../infra/support/poller-app-fixture.ts';
import {
  CDK_CLI,
  constructExample,
  exec,
  npmInstall,
  offlineSynthEnvironment,
  PEER_VERSIONS,
  pollerFunctionOf,
  pollerResources,
  recordingToolShims,
  repositoryAppPollerResources,
  type SynthesizedTemplate,
  templateOf,
  temporaryDirectory,
} from '../support/consumer-app.ts';

describe('a plain ESM app', () => {
  const root = temporaryDirectory('consumer-esm-');
  const app = path.join(root.dir, 'app');
  const shims = recordingToolShims(root.dir);
  let template: SynthesizedTemplate;

  beforeAll(async () => {
    mkdirSync(app);
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'esm-consumer', private: true, type: 'module' }, null, 2),
    );
    const stack = ts.transpileModule(constructExample(), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(
      path.join(app, 'app.mjs'),
      `${stack}\nconst app = new cdk.App();\nnew PaymentsStack(app, 'PaymentsStack');\n` +
        // And the construct with every prop left to its default.
        "new BankingEventsPoller(new cdk.Stack(app, 'Defaults'), 'Poller', {});\n",
    );
    // The feature flags a cdk init app carries (the same as this repository's cdk.json).
    const flags = Object.fromEntries(Object.entries(cdkJsonContext()).filter(([key]) => key.startsWith('@')));
    writeFileSync(
      path.join(app, 'cdk.json'),
      JSON.stringify({ app: 'node app.mjs', context: flags }, null, 2),
    );
    await npmInstall(app, [
      `aws-cdk-lib@${PEER_VERSIONS['aws-cdk-lib']}`,
      `constructs@${PEER_VERSIONS.constructs}`,
      inject('packageTarball'),
    ]);
    await exec(process.execPath, [CDK_CLI, 'synth', '--quiet', '--no-notices'], {
      cwd: app,
      env: offlineSynthEnvironment(shims.path),
    });
    template = templateOf(path.join(app, 'cdk.out'), 'PaymentsStack');
  });
  afterAll(() => root.dispose());

  it('holds aws-cdk-lib, constructs and the package, which brings nothing, and no esbuild anywhere', async () => {
    const { stdout } = await exec('npm', ['ls', '--all', '--parseable'], { cwd: app });
    const installed = stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => path.relative(app, line))
      .filter((relative) => relative !== '');
    const manifest = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };

    expect(Object.keys(manifest.dependencies).sort()).toEqual([
      'aws-cdk-lib',
      'banking-events-poller',
      'constructs',
    ]);
    expect(installed.filter((dir) => dir.includes('banking-events-poller'))).toEqual([
      'node_modules/banking-events-poller',
    ]);
    expect(installed.filter((dir) => dir.includes('esbuild'))).toEqual([]);
    expect(existsSync(path.join(app, 'node_modules/.bin/esbuild'))).toBe(false);
  });

  it('resolves the package to its ESM build', async () => {
    const { stdout } = await exec(
      process.execPath,
      ['--input-type=module', '-e', "console.log(import.meta.resolve('banking-events-poller'))"],
      { cwd: app },
    );

    expect(stdout.trim()).toBe(
      `file://${path.join(app, 'node_modules/banking-events-poller/dist/lib/index.js')}`,
    );
  });

  it('synthesizes offline, running neither esbuild nor Docker', () => {
    expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
    expect(shims.invocations()).toEqual([]);
  });

  it('deploys the handler shipped in the package, byte for byte', () => {
    const assetPath = pollerFunctionOf(template).Metadata?.['aws:asset:path'] as string;
    const shipped = path.join(app, 'node_modules/banking-events-poller/dist/assets/poller/index.mjs');

    expect(readFileSync(path.join(app, 'cdk.out', assetPath, 'index.mjs'))).toEqual(readFileSync(shipped));
  });

  it('synthesizes the construct with every prop left to its default, deploying the same handler', () => {
    const defaults = templateOf(path.join(app, 'cdk.out'), 'Defaults');

    expect(pollerFunctionOf(defaults).Properties?.Code).toEqual(pollerFunctionOf(template).Properties?.Code);
  });

  it("creates the resources the repository's app creates when configured alike, the code asset included", () => {
    expect(pollerResources(template)).toEqual(repositoryAppPollerResources());
  });

  it.each([
    [
      'import',
      "const { App, Stack } = await import('aws-cdk-lib'); const lib = await import('banking-events-poller');",
    ],
    [
      'require',
      "const { App, Stack } = require('aws-cdk-lib'); const lib = require('banking-events-poller');",
    ],
  ])(
    'throws a ConfigurationError named so, through %s (classes keep their names in the bundle)',
    async (_how, load) => {
      const script =
        `${load}\n` +
        "try { new lib.BankingEventsPoller(new Stack(new App(), 'S'), 'P', { feedMode: 'Stream' }); }\n" +
        'catch (error) { console.log(JSON.stringify([error.name, error instanceof lib.ConfigurationError, error.code])); }';
      const { stdout } = await exec(
        process.execPath,
        _how === 'import' ? ['--input-type=module', '-e', script] : ['--input-type=commonjs', '-e', script],
        { cwd: app },
      );

      expect(JSON.parse(stdout)).toEqual(['ConfigurationError', true, 'CONFIGURATION_INVALID']);
    },
  );
});
