/**
 * The package in an app laid out as `cdk init app --language typescript` lays it out: CommonJS,
 * TypeScript checked by `tsc` and run by `tsx` (its cdk.json), aws-cdk-lib and constructs from the
 * registry, the construct's example (docs/construct.md) as its stack, synthesized offline by its own `cdk`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  CDK_CLI,
  constructExample,
  exec,
  npmInstall,
  offlineSynthEnvironment,
  pollerFunctionOf,
  pollerResources,
  recordingToolShims,
  repositoryAppPollerResources,
  type SynthesizedTemplate,
  templateOf,
  temporaryDirectory,
} from '../support/consumer-app.ts';

describe('a cdk init TypeScript app', () => {
  const root = temporaryDirectory('consumer-cdk-init-');
  const app = path.join(root.dir, 'payments');
  const shims = recordingToolShims(root.dir);
  let template: SynthesizedTemplate;

  beforeAll(async () => {
    mkdirSync(app);
    await exec(process.execPath, [CDK_CLI, 'init', 'app', '--language', 'typescript', '--generate-only'], {
      cwd: app,
    });
    // The template's unit-test runner plays no part in a synth; its types stay (tsconfig names them).
    const manifestFile = path.join(app, 'package.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    for (const runner of ['jest', '@swc/core', '@swc/jest']) delete manifest.devDependencies[runner];
    writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
    writeFileSync(path.join(app, 'lib/payments-stack.ts'), constructExample());
    await npmInstall(app, [inject('packageTarball')]);
    await exec('npx', ['cdk', 'synth', '--quiet', '--no-notices'], {
      cwd: app,
      env: offlineSynthEnvironment(shims.path),
    });
    template = templateOf(path.join(app, 'cdk.out'), 'PaymentsStack');
  });
  afterAll(() => root.dispose());

  it('is the CommonJS app cdk init makes, which resolves the package to its CommonJS build', async () => {
    const manifest = JSON.parse(readFileSync(path.join(app, 'package.json'), 'utf8')) as { type?: string };
    const { stdout } = await exec(process.execPath, ['-p', "require.resolve('banking-events-poller')"], {
      cwd: app,
    });

    expect(manifest.type).toBeUndefined();
    expect(stdout.trim()).toBe(path.join(app, 'node_modules/banking-events-poller/dist/lib/index.cjs'));
  });

  it('synthesizes offline and type-checked, calling no docker or esbuild on the PATH', () => {
    const cdkJson = JSON.parse(readFileSync(path.join(app, 'cdk.json'), 'utf8')) as { app: string };

    expect(cdkJson.app).toMatch(/^npx tsc && npx tsx bin\/payments\.ts$/);
    expect(Object.keys(template.Resources).length).toBeGreaterThan(0);
    expect(shims.invocations()).toEqual([]);
  });

  it('deploys the handler shipped in the package, byte for byte', () => {
    const poller = pollerFunctionOf(template);
    const assetPath = poller.Metadata?.['aws:asset:path'] as string;
    const shipped = path.join(app, 'node_modules/banking-events-poller/dist/assets/poller/index.mjs');

    expect(poller.Properties?.Handler).toBe('index.handler');
    expect(readFileSync(path.join(app, 'cdk.out', assetPath, 'index.mjs'))).toEqual(readFileSync(shipped));
  });

  it("creates the resources the repository's app creates when configured alike, the code asset included", () => {
    expect(pollerResources(template)).toEqual(repositoryAppPollerResources());
  });

  it("refuses a wrong prop at type-check time: the package's declarations are real types", async () => {
    const misuse = path.join(app, 'lib/misuse.ts');
    writeFileSync(
      misuse,
      "import * as cdk from 'aws-cdk-lib/core';\nimport { BankingEventsPoller } from 'banking-events-poller';\n" +
        "new BankingEventsPoller(new cdk.Stack(), 'Poller', { programs: 'cards' });\n",
    );

    const check = exec('npx', ['tsc'], { cwd: app });

    await expect(check).rejects.toThrow(/lib\/misuse\.ts\(3,\d+\): error TS2322: .*PollerProgram/);
  });
});
