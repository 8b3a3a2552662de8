/**
 * What a jsii kernel session needs on disk, fetched once into `node_modules/.cache/jsii-kernel`:
 *
 * - the runtime, `@jsii/runtime` packed from the registry (`npm install @jsii/runtime` cannot work:
 *   its `@jsii/kernel` dependency is missing from the registry, but the tarball's bundled runtime,
 *   `webpack/bin/jsii-runtime.js`, needs no other package);
 * - the tarball of each jsii package to load (the kernel's `load` takes a tarball), packed at the
 *   version installed in `node_modules`, so the kernel runs the same code as a TypeScript app;
 * - each package's type information without its docs (aws-cdk-lib's assembly is 60 MB of JSON; its
 *   types alone parse in a quarter of the time).
 *
 * `npx tsx test/support/jsii-kernel/kernel-files.ts` fetches them up front (CI).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type AssemblyTypes, readAssemblyTypes } from './assembly-types.ts';

/** The runtime the kernel tests were written against; its protocol is the one every jsii language speaks. */
export const JSII_RUNTIME_VERSION = '1.140.0';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
export const KERNEL_CACHE_DIR = path.join(REPO_ROOT, 'node_modules/.cache/jsii-kernel');

/** A package the kernel can load: its tarball, and the types its assembly declares. */
export interface KernelPackage {
  readonly name: string;
  readonly version: string;
  readonly tarball: string;
  readonly types: AssemblyTypes;
}

/** The runtime's entry script, unpacked from the `@jsii/runtime` tarball unless it is there already. */
export async function ensureJsiiRuntime(): Promise<string> {
  const dir = path.join(KERNEL_CACHE_DIR, `runtime-${JSII_RUNTIME_VERSION}`);
  const entry = path.join(dir, 'package/webpack/bin/jsii-runtime.js');
  if (existsSync(entry)) return entry;
  const tarball = await packFromRegistry('@jsii/runtime', JSII_RUNTIME_VERSION);
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', staging]);
  if (!existsSync(path.join(staging, 'package/webpack/bin/jsii-runtime.js'))) {
    throw new Error(
      `@jsii/runtime ${JSII_RUNTIME_VERSION}'s tarball has no webpack/bin/jsii-runtime.js (${tarball})`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return entry;
}

/**
 * A jsii package installed in the repository's `node_modules` (aws-cdk-lib, constructs), after the
 * jsii packages it depends on (aws-cdk-lib needs constructs and three `@aws-cdk/*` assemblies
 * loaded first), each packed from the registry at its installed version, with its types.
 */
export async function installedPackages(name: string): Promise<KernelPackage[]> {
  const ordered: { name: string; dir: string }[] = [];
  const visit = (packageName: string, from: string): void => {
    const dir = installedDir(packageName, from);
    if (ordered.some((entry) => entry.dir === dir)) return;
    const { dependencies } = cachedTypes(dir);
    for (const dependency of Object.keys(dependencies)) visit(dependency, dir);
    ordered.push({ name: packageName, dir });
  };
  visit(name, REPO_ROOT);
  return Promise.all(
    ordered.map(async ({ dir }) => {
      const types = cachedTypes(dir);
      return {
        name: types.name,
        version: types.version,
        tarball: await packFromRegistry(types.name, types.version),
        types,
      };
    }),
  );
}

/** Where Node would find `name` from `from`: its own node_modules, then its parents'. */
function installedDir(name: string, from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) throw new Error(`${name} is not installed (looked up from ${from})`);
  }
}

/**
 * A jsii package built in `dir` (its `.jsii` beside its `package.json`), packed as it would be
 * published; packed again on every call, since the build may have changed it.
 */
export async function builtPackage(dir: string): Promise<KernelPackage> {
  const types = readAssemblyTypes(dir);
  const destination = path.join(KERNEL_CACHE_DIR, 'built');
  mkdirSync(destination, { recursive: true });
  const output = await run('npm', [
    'pack',
    dir,
    '--ignore-scripts',
    '--json',
    '--pack-destination',
    destination,
  ]);
  const [packed] = JSON.parse(output) as { filename: string }[];
  if (packed === undefined) throw new Error(`npm pack ${dir} made no tarball`);
  return {
    name: types.name,
    version: types.version,
    tarball: path.join(destination, packed.filename),
    types,
  };
}

/** A package already packed (`npm run package`'s tarball), with the types of the `.jsii` it holds. */
export function packedPackage(tarball: string): KernelPackage {
  const dir = mkdtempSync(path.join(tmpdir(), 'jsii-kernel-packed-'));
  try {
    execFileSync('tar', ['-xzf', tarball, '-C', dir, 'package/.jsii']);
    const types = readAssemblyTypes(path.join(dir, 'package'));
    return { name: types.name, version: types.version, tarball, types };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The types of the package installed in `dir`, read once per version and kept in the cache. */
function cachedTypes(dir: string): AssemblyTypes {
  const { name, version } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    name: string;
    version: string;
  };
  const file = path.join(KERNEL_CACHE_DIR, 'types', `${name.replace('/', '__')}@${version}.json`);
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as AssemblyTypes;
  const types = readAssemblyTypes(dir);
  if (types.name !== name || types.version !== version) {
    throw new Error(`${dir}/.jsii is ${types.name}@${types.version}, expected ${name}@${version}`);
  }
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(`${file}.partial`, JSON.stringify(types));
  renameSync(`${file}.partial`, file);
  return types;
}

/** `npm pack name@version` into the cache (npm's own cache serves it after the first time). */
async function packFromRegistry(name: string, version: string): Promise<string> {
  const destination = path.join(KERNEL_CACHE_DIR, 'tarballs');
  const file = path.join(destination, `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`);
  if (existsSync(file)) return file;
  mkdirSync(destination, { recursive: true });
  const output = await run('npm', [
    'pack',
    `${name}@${version}`,
    '--json',
    '--pack-destination',
    destination,
  ]);
  const [packed] = JSON.parse(output) as { filename: string }[];
  const made = packed === undefined ? undefined : path.join(destination, packed.filename);
  if (made === undefined || !existsSync(made)) {
    throw new Error(`npm pack ${name}@${version} made no tarball in ${destination}`);
  }
  if (made !== file) renameSync(made, file);
  return file;
}

function run(command: string, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4_000);
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code === 0) resolve(stdout);
      else reject(new Error(`'${command} ${args.join(' ')}' exited with ${code}:\n${stderr}`));
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  Promise.all([ensureJsiiRuntime(), installedPackages('aws-cdk-lib')]).then(
    ([runtime, packages]) => {
      console.log(`jsii runtime ${JSII_RUNTIME_VERSION} ready at ${runtime}`);
      for (const { name, version, tarball } of packages) console.log(`${name}@${version}: ${tarball}`);
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
