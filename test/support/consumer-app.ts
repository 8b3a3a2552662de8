/**
 * Apps that install the package as a user does, in a temporary folder: npm from the registry,
 * the tarball from `npm run package`, `cdk synth` offline. And what their templates are compared
 * with: the construct's example (docs/construct.md), and the repository's own app configured like it.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, synthPollerApp } from '../infra/support/poller-app-fixture.ts';

const run = promisify(execFile);

/** The versions this repository tests against, installed from the registry into the apps. */
export const PEER_VERSIONS = Object.freeze({
  'aws-cdk-lib': installedVersion('aws-cdk-lib'),
  constructs: installedVersion('constructs'),
});

/** The repository's CDK CLI, for an app that holds nothing but its dependencies. */
export const CDK_CLI = path.join(REPO_ROOT, 'node_modules/aws-cdk/bin/cdk');

/**
 * The construct example's (docs/construct.md) stack name and props as this repository's app takes them from its context
 * (cdk.json gives `eventBusName: 'banking-events'` already): the two templates must then be the same.
 */
export const README_EXAMPLE_CONTEXT = Object.freeze({
  stackName: 'PaymentsStack',
  programs: [{ name: 'cards' }, { name: 'loans' }],
  alarmEmail: 'oncall@example.com',
  startPosition: 'latest',
  lagThresholdSeconds: 600,
});

export function temporaryDirectory(prefix: string): { readonly dir: string; dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Runs a command to its end; a failure carries its output. */
export async function exec(
  command: string,
  args: readonly string[],
  options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv },
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(command, [...args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      maxBuffer: 64 * 2 ** 20,
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(
      `${command} ${args.join(' ')} failed in ${options.cwd}\n${stderr ?? ''}\n${stdout ?? ''}`.trim(),
      { cause: error },
    );
  }
}

/** `npm install` as a user runs it, with the registry behind npm's cache. */
export function npmInstall(cwd: string, args: readonly string[] = []): Promise<unknown> {
  return exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...args], { cwd });
}

/** The construct's example: the first TypeScript block of docs/construct.md. */
export function constructExample(): string {
  return docsCodeBlock('docs/construct.md', 'Use the construct in your CDK app');
}

/** The first TypeScript block under `## <heading>` of `file` (from the repository root). */
export function docsCodeBlock(file: string, heading: string): string {
  const doc = readFileSync(path.join(REPO_ROOT, file), 'utf8');
  const section = doc.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0];
  const example = section === undefined ? undefined : /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (example === undefined) {
    throw new Error(`${file} has no \`\`\`ts block under "## ${heading}"`);
  }
  return example;
}

/**
 * The TypeScript blocks of `file` (from the repository root) that open with a `// <path>` comment
 * line, by that path: a recipe's files, as a reader would lay them out.
 */
export function docsCodeFiles(file: string): ReadonlyMap<string, string> {
  const doc = readFileSync(path.join(REPO_ROOT, file), 'utf8');
  const files = new Map<string, string>();
  for (const [, code] of doc.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    const named = /^\/\/ ([\w./-]+\.ts)\n/.exec(code!);
    if (named !== null) files.set(named[1]!, code!);
  }
  return files;
}

/** The version of a package this repository installed (the consumer apps install the same). */
export function installedVersion(name: string): string {
  const manifest = path.join(REPO_ROOT, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * `docker` and `esbuild` on the PATH that only record that they ran: a synth that needs neither
 * leaves the record empty.
 */
export function recordingToolShims(dir: string): { readonly path: string; invocations(): string[] } {
  const bin = path.join(dir, 'shims');
  const record = path.join(dir, 'shims.log');
  mkdirSync(bin, { recursive: true });
  writeFileSync(record, '');
  for (const tool of ['docker', 'esbuild']) {
    const shim = path.join(bin, tool);
    writeFileSync(shim, `#!/bin/sh\necho "${tool} $*" >> "${record}"\nexit 1\n`);
    chmodSync(shim, 0o755);
  }
  return {
    path: `${bin}${path.delimiter}${process.env.PATH ?? ''}`,
    invocations: () => readFileSync(record, 'utf8').split('\n').filter(Boolean),
  };
}

/** The environment of an offline synth: no credentials, no instance metadata lookups, no CLI telemetry. */
export function offlineSynthEnvironment(pathVariable: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: pathVariable,
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
  for (const name of ['AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) {
    delete env[name];
  }
  return env;
}

interface TemplateResource {
  readonly Type: string;
  readonly Metadata?: Readonly<Record<string, unknown>>;
  readonly Properties?: Readonly<Record<string, unknown>>;
}

export interface SynthesizedTemplate {
  readonly Resources: Readonly<Record<string, TemplateResource>>;
}

/** A stack's template from a cloud assembly directory. */
export function templateOf(assemblyDir: string, stackName: string): SynthesizedTemplate {
  return JSON.parse(readFileSync(path.join(assemblyDir, `${stackName}.template.json`), 'utf8'));
}

/** The poller function of a template: the function whose environment names the event source. */
export function pollerFunctionOf(template: SynthesizedTemplate): TemplateResource {
  const poller = Object.values(template.Resources).find(
    (resource) =>
      resource.Type === 'AWS::Lambda::Function' &&
      (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables
        ?.EVENT_SOURCE !== undefined,
  );
  if (poller === undefined) throw new Error('The template has no poller function');
  return poller;
}

/** The construct's resources (logical ids under `Poller`), without the CDK CLI's metadata. */
export function pollerResources(template: SynthesizedTemplate): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(template.Resources)
      .filter(([logicalId]) => logicalId.startsWith('Poller'))
      .map(([logicalId, { Metadata: _metadata, ...resource }]) => [logicalId, resource]),
  );
}

/** The repository's app, configured like the construct's example: its construct's resources. */
export function repositoryAppPollerResources(): Record<string, unknown> {
  const synth = synthPollerApp(README_EXAMPLE_CONTEXT);
  try {
    return pollerResources(synth.template.toJSON() as SynthesizedTemplate);
  } finally {
    synth.dispose();
  }
}
