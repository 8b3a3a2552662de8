/**
 * The construct library compiled by jsii: the assembly (`.jsii`) that Python, Java, .NET and Go
 * packages are generated from (jsii-pacmak), and jsii's JavaScript emit, which carries the runtime
 * type information (`Symbol.for("jsii.rtti")`) the jsii kernel names our objects by. The shipped
 * library is bundled from that emit (scripts/build/artifacts.ts, `buildConstructLibrary`).
 *
 * jsii compiles the package whose manifest it finds in its working directory. The repository's
 * manifest lists the handler's and the CLI's runtime packages under `dependencies` (bundled, never
 * shipped), which jsii would take for jsii dependencies; so jsii runs in a project generated under
 * `dist/jsii-project/`: the repository's name, version and `jsii` section, aws-cdk-lib and
 * constructs as its only peers, and a tsconfig that passes jsii's `strict` rule set. Its sources
 * are `infra/constructs/` and what they import. The repository's tsconfig.json keeps its stricter
 * options (`noUncheckedIndexedAccess`, `noImplicitOverride`, `exactOptionalPropertyTypes`), which that
 * rule set refuses, and `npm run typecheck` checks the same sources with them.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { LAYOUT, REPO_ROOT } from './artifacts.ts';

export const JSII_PROJECT_DIR = path.join(REPO_ROOT, 'dist/jsii-project');

/** jsii's emit of the library's entry point, in the project. */
export const JSII_EMITTED_ENTRY = path.join(
  JSII_PROJECT_DIR,
  'lib',
  LAYOUT.libraryEntry.replace(/\.ts$/, '.js'),
);

/** The assembly jsii writes. */
export const JSII_ASSEMBLY = path.join(JSII_PROJECT_DIR, '.jsii');

/** The construct library's peers: the only dependencies a jsii package may have that are not bundled. */
export const JSII_PEERS = ['aws-cdk-lib', 'constructs'] as const;

interface RepositoryManifest {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly license: string;
  readonly author: unknown;
  readonly repository: unknown;
  readonly peerDependencies: Readonly<Record<string, string>>;
  readonly jsii: { readonly targets: unknown };
}

function repositoryManifest(): RepositoryManifest {
  return JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as RepositoryManifest;
}

function installedVersion(name: string): string {
  const manifest = path.join(REPO_ROOT, 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * Compiles the construct library with `jsii --fail-on-warnings` under its `strict` tsconfig rule
 * set: `dist/jsii-project/.jsii` and `dist/jsii-project/lib/` (JavaScript and declarations).
 *
 * @throws Error (jsii's diagnostics on stderr) when the public API is not jsii-compatible
 */
export function compileJsiiAssembly(): void {
  const repository = repositoryManifest();
  rmSync(JSII_PROJECT_DIR, { recursive: true, force: true });
  mkdirSync(JSII_PROJECT_DIR, { recursive: true });
  const emittedEntry = path.relative(JSII_PROJECT_DIR, JSII_EMITTED_ENTRY);
  const project = {
    name: repository.name,
    version: repository.version,
    description: repository.description,
    license: repository.license,
    author: repository.author,
    repository: repository.repository,
    main: emittedEntry,
    types: emittedEntry.replace(/\.js$/, '.d.ts'),
    peerDependencies: Object.fromEntries(JSII_PEERS.map((name) => [name, repository.peerDependencies[name]])),
    // jsii checks the peers' ranges against what is installed for the build (here, the repository's).
    devDependencies: Object.fromEntries(JSII_PEERS.map((name) => [name, installedVersion(name)])),
    jsii: {
      outdir: 'dist',
      tsconfig: 'tsconfig.json',
      validateTsconfig: 'strict',
      targets: repository.jsii.targets,
    },
  };
  writeFileSync(path.join(JSII_PROJECT_DIR, 'package.json'), `${JSON.stringify(project, null, 2)}\n`);
  const tsconfig = {
    compilerOptions: {
      target: 'ES2023',
      lib: ['ES2023'],
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      noFallthroughCasesInSwitch: true,
      verbatimModuleSyntax: true,
      isolatedModules: true,
      esModuleInterop: true,
      skipLibCheck: true,
      resolveJsonModule: true,
      allowImportingTsExtensions: true,
      // The sources import `./x.ts`; the emit must import `./x.js`.
      rewriteRelativeImportExtensions: true,
      declaration: true,
      noEmitOnError: true,
      rootDir: '../..',
      outDir: 'lib',
      types: ['node'],
    },
    include: [`../../${path.dirname(LAYOUT.libraryEntry)}/**/*.ts`],
  };
  writeFileSync(path.join(JSII_PROJECT_DIR, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  // The assembly carries the README (Construct Hub shows it; rosetta compiles its examples).
  copyFileSync(path.join(REPO_ROOT, 'README.md'), path.join(JSII_PROJECT_DIR, 'README.md'));
  // jsii resolves aws-cdk-lib and constructs from the repository's node_modules (the parent directories).
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/jsii/bin/jsii'), '--fail-on-warnings'], {
    cwd: JSII_PROJECT_DIR,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
