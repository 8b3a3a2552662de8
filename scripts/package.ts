/**
 * `npm run package`: builds every part (scripts/build/artifacts.ts), stages what a user needs with
 * the shipped manifest (scripts/build/package-manifest.ts) and packs it into
 * dist/package/banking-events-poller-<version>.tgz: one package for the construct library, the
 * subscriber kit and the CLI, with no dependencies and no install scripts.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
import { type Manifest, packageManifest } from './build/package-manifest.ts';

/**
 * What the package holds besides its manifest: documentation (the README, the changelog and the
 * pages of docs/, Markdown only, so the README's links work in the package), the bin, and what
 * `npm run build` made.
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

await Promise.all([
  buildHandlerAsset(),
  buildProgramSeederAsset(),
  buildConstructLibrary(),
  buildSubscriberKit(),
  buildCli(),
]);
emitDeclarations();

const stage = mkdtempSync(path.join(tmpdir(), 'banking-events-poller-package-'));
try {
  for (const shipped of SHIPPED_PATHS) {
    cpSync(path.join(REPO_ROOT, shipped), path.join(stage, shipped), {
      recursive: true,
      // Of docs/, the pages only: not the fault matrix's raw results.
      filter: (source) => shipped !== 'docs' || statSync(source).isDirectory() || source.endsWith('.md'),
    });
  }
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
} finally {
  rmSync(stage, { recursive: true, force: true });
}
