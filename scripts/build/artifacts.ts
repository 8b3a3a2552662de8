/**
 * What `npm run build` makes, in the layout the package ships (scripts/package.ts copies it as is):
 *
 * - `dist/assets/poller/`: the Lambda handler, bundled with the construct's own esbuild settings
 *   (`POLLER_BUNDLING`). The construct deploys this directory, so a consumer's synth runs no bundler.
 * - `dist/assets/program-seeder/`: the provider of the stack's program seeding, bundled alike; the
 *   construct deploys it with the seed list beside it (`infra/constructs/program-seeding.ts`).
 * - `dist/lib/`: the construct library, `index.js` (ESM) and `index.cjs` (CommonJS), with
 *   `aws-cdk-lib` and `constructs` left to the consumer (peer dependencies); `types/` its declarations.
 *   `npm run build` bundles it from the sources; `npm run package` from jsii's emit of them
 *   (scripts/build/jsii-assembly.ts), which adds the type information the jsii kernel needs.
 * - `dist/subscriber/`: the subscriber kit (`banking-events-poller/subscriber`), ESM and CommonJS,
 *   with its runtime dependencies left to the subscriber's app (docs/subscribers.md lists them).
 * - `dist/cli/main.mjs`: the operator CLI, every dependency inlined (the package has none).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import { POLLER_BUNDLING } from '../../infra/constructs/poller-bundling.ts';
import { declaredSideEffects, packageNameOf } from './declared-side-effects.ts';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Paths under a package root (the repository, or the staged package). */
export const LAYOUT = Object.freeze({
  handlerEntry: 'functions/poller/handler.ts',
  handlerDir: 'dist/assets/poller',
  seederEntry: 'functions/program-seeder/handler.ts',
  seederDir: 'dist/assets/program-seeder',
  libraryEntry: 'infra/constructs/index.ts',
  libraryDir: 'dist/lib',
  declarationsDir: 'dist/lib/types',
  subscriberEntry: 'functions/subscriber/index.ts',
  subscriberDir: 'dist/subscriber',
  cliEntry: 'functions/cli/main.ts',
  cliFile: 'dist/cli/main.mjs',
});

/** The peer dependencies, the only packages the construct library may import at run time. */
const LIBRARY_EXTERNALS = ['aws-cdk-lib', 'constructs'];

/**
 * The subscriber kit's runtime libraries, the only packages it may import at run time (not in the
 * manifest: a jsii package's peers are jsii packages):
 * a subscriber's app installs them (it has the AWS SDK and Powertools already, most likely), and
 * an app using the construct alone never does.
 */
export const SUBSCRIBER_EXTERNALS = [
  '@aws-lambda-powertools/batch',
  '@aws-lambda-powertools/idempotency',
  '@aws-sdk/client-dynamodb',
  '@aws-sdk/client-s3',
  '@aws-sdk/lib-dynamodb',
];

/**
 * esbuild options equal to what `NodejsFunction` runs with `POLLER_BUNDLING` (platform node, one
 * ESM file, the AWS SDK bundled): the prebuilt handler and the benchmarks' bundles use them.
 */
export function pollerEsbuildOptions(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: POLLER_BUNDLING.target,
    mainFields: POLLER_BUNDLING.mainFields,
    banner: { js: POLLER_BUNDLING.banner ?? '' },
    minify: POLLER_BUNDLING.minify,
    keepNames: POLLER_BUNDLING.keepNames,
    sourcemap: POLLER_BUNDLING.sourceMap ? 'external' : false,
    sourcesContent: POLLER_BUNDLING.sourcesContent,
    logLevel: 'warning',
  };
}

/**
 * The Lambda handler as the function runs it: `index.mjs` (handler `index.handler`), its source
 * map, and `chunks/`: what the handler loads only when it needs it (the S3 client for a claim
 * check, the SDK's credential providers other than the environment's), split out so a cold start
 * neither parses nor holds it (measured: about 12 % less CPU to import, 13 MiB less memory).
 */
export async function buildHandlerAsset(root = REPO_ROOT, plugins: readonly Plugin[] = []): Promise<void> {
  const dir = path.join(root, LAYOUT.handlerDir);
  rmSync(dir, { recursive: true, force: true });
  const { outfile: _single, ...options } = pollerEsbuildOptions(
    path.join(REPO_ROOT, LAYOUT.handlerEntry),
    path.join(dir, 'index.mjs'),
  );
  await build({
    ...options,
    outdir: dir,
    splitting: true,
    entryNames: 'index',
    chunkNames: 'chunks/[name]-[hash]',
    outExtension: { '.js': '.mjs' },
    // A benchmark's variant of the handler (bench/signer-cost.ts); the shipped build has none.
    plugins: [...plugins],
  });
}

/**
 * The program seeder (`program-seeder.mjs`, handler `program-seeder.handler`): one file with its
 * source map, the AWS SDK inlined, as the poller's handler is built.
 */
export async function buildProgramSeederAsset(root = REPO_ROOT): Promise<void> {
  const dir = path.join(root, LAYOUT.seederDir);
  rmSync(dir, { recursive: true, force: true });
  await build(
    pollerEsbuildOptions(path.join(REPO_ROOT, LAYOUT.seederEntry), path.join(dir, 'program-seeder.mjs')),
  );
}

/**
 * The construct library, once as ESM and once as CommonJS (a `cdk init` app is CommonJS and
 * `require`s it). Both files sit two levels below the package root, like the sources in
 * `infra/constructs/`, so the handler directory is found at the same relative path from each.
 *
 * `entry` is the sources' entry point, or jsii's emit of it (`JSII_EMITTED_ENTRY`) for the package.
 *
 * @throws Error when the library would import a package at run time other than its peers
 */
export async function buildConstructLibrary(
  root = REPO_ROOT,
  entry = path.join(REPO_ROOT, LAYOUT.libraryEntry),
): Promise<void> {
  await buildDualLibrary(entry, path.join(root, LAYOUT.libraryDir), LIBRARY_EXTERNALS);
}

/**
 * The subscriber kit, ESM and CommonJS, its own code and the event schema inlined.
 *
 * @throws Error when the kit would import a package at run time other than its runtime libraries
 */
export async function buildSubscriberKit(root = REPO_ROOT): Promise<void> {
  await buildDualLibrary(
    path.join(REPO_ROOT, LAYOUT.subscriberEntry),
    path.join(root, LAYOUT.subscriberDir),
    SUBSCRIBER_EXTERNALS,
  );
}

/** `index.js` (ESM) and `index.cjs` (CommonJS) in `dir`, importing only `externals` and Node. */
async function buildDualLibrary(entry: string, dir: string, externals: readonly string[]): Promise<void> {
  const common: BuildOptions = {
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node20',
    // Classes keep their names: a caught ConfigurationError is named so (esbuild would rename it
    // _ConfigurationError), and the jsii kernel reports errors to other languages by that name.
    keepNames: true,
    // Bare imports stay imports; the check below keeps them to the peer dependencies.
    packages: 'external',
    metafile: true,
    logLevel: 'warning',
  };
  const esm = await build({ ...common, format: 'esm', outfile: path.join(dir, 'index.js') });
  await build({
    ...common,
    format: 'cjs',
    outfile: path.join(dir, 'index.cjs'),
    // CommonJS has no import.meta: the module's own URL, from its file name.
    define: { 'import.meta.url': '__moduleUrl' },
    banner: { js: "const __moduleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  const builtins = new Set(builtinModules);
  const foreign = Object.values(esm.metafile?.outputs ?? {})
    .flatMap((output) => output.imports)
    .filter((imported) => imported.external)
    .map((imported) => imported.path)
    .filter((specifier) => {
      const name = specifier.replace(/^node:/, '');
      const packageName = packageNameOf(specifier);
      return !builtins.has(name) && !externals.includes(packageName);
    });
  if (foreign.length > 0) {
    throw new Error(
      `${path.relative(REPO_ROOT, entry)} imports ${[...new Set(foreign)].join(', ')} at run time, beyond its peers ` +
        `(${externals.join(', ')}): the package has no dependencies. Keep runtime code in the handler or the CLI ` +
        '(both bundled), or make it a peer dependency.',
    );
  }
}

/** The operator CLI in one file, its dependencies inlined: installing the package installs nothing else. */
export async function buildCli(root = REPO_ROOT): Promise<void> {
  await build({
    entryPoints: [path.join(REPO_ROOT, LAYOUT.cliEntry)],
    outfile: path.join(root, LAYOUT.cliFile),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // CommonJS dependencies call require(); an ESM bundle has none of its own.
    banner: { js: POLLER_BUNDLING.banner ?? '' },
    minify: true,
    // Error classes keep their names: the CLI's one-line errors and exit codes depend on them.
    keepNames: true,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: [declaredSideEffects],
  });
}

/**
 * The library's declarations, from tsc (`tsconfig.declarations.json`), with relative imports
 * pointing at `.js` as a consumer's TypeScript resolves them. They are typed CommonJS (their own
 * `package.json`), which TypeScript reads from both ESM and CommonJS consumers.
 */
export function emitDeclarations(root = REPO_ROOT): void {
  const dir = path.join(root, LAYOUT.declarationsDir);
  rmSync(dir, { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [
      path.join(REPO_ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(REPO_ROOT, 'tsconfig.declarations.json'),
      '--declarationDir',
      dir,
    ],
    { stdio: 'inherit' },
  );
  for (const file of filesUnder(dir)) {
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace(/(['"])(\.{1,2}\/[^'"]*?)\.ts\1/g, '$1$2.js$1'));
  }
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
}

/** Every file below `dir`, recursively. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}
