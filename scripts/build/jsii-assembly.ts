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
 * are copies of `infra/constructs/` and `functions/` (jsii compiles the library's entry point and
 * what it imports), laid out as in the repository, so the assembly names them as the repository
 * does (`infra/constructs/poller-props.ts`) and jsii-rosetta finds every type it translates. The
 * repository's tsconfig.json keeps its stricter options (`noUncheckedIndexedAccess`,
 * `noImplicitOverride`, `exactOptionalPropertyTypes`), which that rule set refuses, and
 * `npm run typecheck` checks the same sources with them.
 *
 * The assembly's README (Construct Hub's page, and each language package's) is the repository's
 * README followed by the construct's quick start from docs/construct.md, whose TypeScript
 * jsii-rosetta compiles and translates into each language (`npm run package`).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** What the library's entry point imports from: copied into the project as they are. */
const JSII_SOURCE_DIRS = [path.dirname(LAYOUT.libraryEntry), 'functions'] as const;

/** The section of docs/construct.md whose TypeScript example is the construct's quick start. */
export const QUICK_START_HEADING = 'Use the construct in your CDK app';

/** The first ```ts block under `## <heading>` of a Markdown page. */
export function typescriptBlockUnder(markdown: string, heading: string): string | undefined {
  const section = markdown.split(`\n## ${heading}\n`)[1]?.split('\n## ')[0];
  return section === undefined ? undefined : /```ts\n([\s\S]*?)```/.exec(section)?.[1];
}

/**
 * The repository's README and the quick start. The example is a whole file (imports, a stack
 * class), so rosetta compiles it as it is (`nofixture`), not inside `rosetta/default.ts-fixture`.
 *
 * @throws Error when docs/construct.md has no quick start to compile
 */
function assemblyReadme(): string {
  const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
  const quickStart = typescriptBlockUnder(
    readFileSync(path.join(REPO_ROOT, 'docs/construct.md'), 'utf8'),
    QUICK_START_HEADING,
  );
  if (quickStart === undefined)
    throw new Error(`docs/construct.md has no \`\`\`ts block under "## ${QUICK_START_HEADING}"`);
  return `${readme.trimEnd()}\n\n## ${QUICK_START_HEADING}\n\n\`\`\`ts nofixture\n${quickStart}\`\`\`\n`;
}

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
    // ESM, as in the repository: the sources' `.ts` imports and `import.meta.url` stay as they are.
    type: 'module',
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
      rootDir: '.',
      outDir: 'lib',
      types: ['node'],
    },
    include: [`${path.dirname(LAYOUT.libraryEntry)}/**/*.ts`],
  };
  writeFileSync(path.join(JSII_PROJECT_DIR, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  for (const dir of [...JSII_SOURCE_DIRS, 'rosetta']) {
    cpSync(path.join(REPO_ROOT, dir), path.join(JSII_PROJECT_DIR, dir), { recursive: true });
  }
  writeFileSync(path.join(JSII_PROJECT_DIR, 'README.md'), assemblyReadme());
  // jsii resolves aws-cdk-lib and constructs from the repository's node_modules (the parent directories).
  execFileSync(process.execPath, [path.join(REPO_ROOT, 'node_modules/jsii/bin/jsii'), '--fail-on-warnings'], {
    cwd: JSII_PROJECT_DIR,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

/** jsii-rosetta's translations of the assembly's examples, beside it (rosetta writes it there). */
export const JSII_TABLET = path.join(JSII_PROJECT_DIR, '.jsii.tabl.json');

const ROSETTA_CACHE = path.join(REPO_ROOT, 'node_modules/.cache/jsii-rosetta/tablet.json');

/**
 * Compiles every example of the assembly (the README's quick start, each `@example`) with
 * jsii-rosetta in strict mode, against the assembly and aws-cdk-lib's, and translates each into
 * Python, Java, C# and Go: the tablet pacmak puts into the language packages' docs.
 *
 * @throws Error (rosetta's diagnostics on stderr) when an example does not compile
 */
export function extractExamples(): string {
  rmSync(JSII_TABLET, { force: true });
  mkdirSync(path.dirname(ROSETTA_CACHE), { recursive: true });
  execFileSync(
    process.execPath,
    [
      path.join(REPO_ROOT, 'node_modules/jsii-rosetta/bin/jsii-rosetta'),
      'extract',
      '--compile',
      '--strict',
      '--fail',
      // Rosetta reuses a translation when neither the snippet nor a type it uses changed: about
      // 3 s instead of 15-45 s here once the cache is warm (a fresh clone compiles every snippet).
      '--cache',
      ROSETTA_CACHE,
      JSII_ASSEMBLY,
    ],
    { cwd: JSII_PROJECT_DIR, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  return JSII_TABLET;
}
