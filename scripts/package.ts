/**
 * `npm run package`: builds every part (scripts/build/artifacts.ts), compiles the construct library
 * with jsii (scripts/build/jsii-assembly.ts: the assembly, and the JavaScript the library is bundled
 * from), compiles and translates its examples with jsii-rosetta, stages what a user needs with the
 * shipped manifest (scripts/build/package-manifest.ts) and packs it into
 * dist/package/banking-events-poller-<version>.tgz: one package for the construct library, the
 * subscriber kit and the CLI, with no dependencies and no install scripts, and a jsii assembly.
 * Then jsii-pacmak generates the Python, Java, .NET and Go packages from it into dist/python,
 * dist/java, dist/dotnet and dist/go (scripts/build/language-packages.ts says what each holds on
 * this machine; `-- --build-targets` builds every target with its own toolchain and registry).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildCli,
  buildConstructLibrary,
  buildHandlerAsset,
  buildProgramSeederAsset,
  buildSubscriberKit,
  emitDeclarations,
  LAYOUT,
  REPO_ROOT,
} from './build/artifacts.ts';
import {
  compileJsiiAssembly,
  extractExamples,
  JSII_ASSEMBLY,
  JSII_EMITTED_ENTRY,
} from './build/jsii-assembly.ts';
import { generateLanguagePackages } from './build/language-packages.ts';
import { type Manifest, packageManifest } from './build/package-manifest.ts';

/**
 * What the package holds besides its manifest and assembly: documentation (the README, the
 * changelog and the pages of docs/, Markdown only, so the README's links work in the package), the
 * bin, and what the build made.
 */
const SHIPPED_PATHS = [
  'README.md',
  'CHANGELOG.md',
  'docs',
  'bin/banking-events-poller.mjs',
  LAYOUT.cliFile,
  LAYOUT.handlerDir,
  LAYOUT.seederDir,
  LAYOUT.libraryDir,
  LAYOUT.subscriberDir,
] as const;

const PACKAGE_DIR = path.join(REPO_ROOT, 'dist/package');
const buildTargets = process.argv.includes('--build-targets');
const seconds = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`;

let started = performance.now();
await Promise.all([buildHandlerAsset(), buildProgramSeederAsset(), buildSubscriberKit(), buildCli()]);
compileJsiiAssembly();
const assembly = JSON.parse(readFileSync(JSII_ASSEMBLY, 'utf8')) as { types: object; fingerprint: string };
console.log(
  `jsii: the assembly, ${Object.keys(assembly.types).length} types, compiled under the strict tsconfig rules ` +
    `with --fail-on-warnings (${seconds(started)})`,
);
started = performance.now();
const tablet = extractExamples();
console.log(
  `jsii-rosetta: every example compiled (strict; unchanged ones reused from its cache) and translated (${seconds(started)})`,
);
// The library as the jsii kernel loads it: bundled from jsii's emit, which carries its type information.
await buildConstructLibrary(REPO_ROOT, JSII_EMITTED_ENTRY);
emitDeclarations();

// Inside the repository: jsii-pacmak resolves the assembly's dependencies (aws-cdk-lib, constructs)
// from the staged package, through the repository's node_modules.
const stage = path.join(REPO_ROOT, 'dist/package-stage');
rmSync(stage, { recursive: true, force: true });
try {
  for (const shipped of SHIPPED_PATHS) {
    cpSync(path.join(REPO_ROOT, shipped), path.join(stage, shipped), {
      recursive: true,
      // Of docs/, the pages only: not the fault matrix's raw results.
      filter: (source) => shipped !== 'docs' || statSync(source).isDirectory() || source.endsWith('.md'),
    });
  }
  copyFileSync(JSII_ASSEMBLY, path.join(stage, '.jsii'));
  const manifest = packageManifest(
    JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest,
  );
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);

  rmSync(PACKAGE_DIR, { recursive: true, force: true });
  mkdirSync(PACKAGE_DIR, { recursive: true });
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', stage, '--pack-destination', PACKAGE_DIR, '--ignore-scripts', '--json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  ) as { filename: string; size: number; unpackedSize: number; entryCount: number }[];
  if (packed === undefined) throw new Error('npm pack made no tarball');
  const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(2);
  console.log(
    `${path.relative(process.cwd(), path.join(PACKAGE_DIR, packed.filename))}: ${packed.entryCount} files, ` +
      `${mib(packed.size)} MiB packed, ${mib(packed.unpackedSize)} MiB unpacked`,
  );

  started = performance.now();
  const outcomes = generateLanguagePackages({ packageDir: stage, tablet, buildTargets });
  console.log(
    `jsii-pacmak: ${outcomes.map(({ target }) => target).join(', ')} generated ` +
      `(${buildTargets ? 'built' : 'code only'}, ${seconds(started)})`,
  );
  for (const { target, dir, made } of outcomes) {
    console.log(`  ${target.padEnd(6)} ${path.relative(process.cwd(), dir)}: ${made}`);
  }
} finally {
  rmSync(stage, { recursive: true, force: true });
}
