/**
 * What `npm run package` puts in the tarball: what a user needs and nothing else, a manifest that
 * runs nothing at install and depends on nothing, a construct library that imports only its
 * peers, and the jsii assembly the Python, Java, .NET and Go packages are generated from; and what
 * it generates for those languages.
 */

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { REPO_ROOT } from '../infra/support/poller-app-fixture.ts';

/** The tarball's entries, without npm's `package/` prefix. */
function entries(): string[] {
  return execFileSync('tar', ['-tzf', inject('packageTarball')], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((entry) => entry.replace(/^package\//, ''));
}

function fileOf(name: string): string {
  return execFileSync('tar', ['-xzOf', inject('packageTarball'), `package/${name}`], { encoding: 'utf8' });
}

/** The module specifiers a shipped file imports or requires. */
function importsOf(file: string): string[] {
  return [...fileOf(file).matchAll(/(?:\bfrom\s*|\brequire\()\s*["']([^"']+)["']/g)].map(
    (match) => match[1]!,
  );
}

describe('the package tarball', () => {
  it('holds the docs, the bin, the CLI bundle, the handler asset and the library: no tests, benchmarks or CI', () => {
    const shipped = [
      /^package\.json$/,
      /^\.jsii$/,
      /^README\.md$/,
      /^CHANGELOG\.md$/,
      /^docs\/(decisions\/|api\/)?[\w-]+\.md$/,
      /^bin\/banking-events-poller\.mjs$/,
      /^dist\/cli\/main\.mjs$/,
      /^dist\/assets\/poller\/index\.mjs(\.map)?$/,
      /^dist\/assets\/poller\/chunks\/[\w-]+\.mjs(\.map)?$/,
      // The provider of Custom::ProgramSeeding, prebuilt: a user's synth bundles nothing.
      /^dist\/assets\/program-seeder\/program-seeder\.mjs(\.map)?$/,
      /^dist\/lib\/index\.(js|cjs)$/,
      /^dist\/subscriber\/index\.(js|cjs)$/,
      /^dist\/lib\/types\/package\.json$/,
      /^dist\/lib\/types\/.+\.d\.ts$/,
    ];

    const files = entries();

    expect(files.filter((file) => !shipped.some((pattern) => pattern.test(file)))).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/assets/poller/index.mjs',
        'dist/assets/program-seeder/program-seeder.mjs',
        'dist/cli/main.mjs',
      ]),
    );
  });

  it('has a manifest with entry points, peers, and no dependencies or scripts', () => {
    const manifest = JSON.parse(fileOf('package.json')) as Record<string, unknown>;

    expect(manifest).not.toHaveProperty('scripts');
    expect(manifest).not.toHaveProperty('dependencies');
    expect(manifest).not.toHaveProperty('private');
    // Only jsii packages: jsii-reflect (pacmak, Construct Hub) loads every peer as an assembly. The
    // subscriber kit's runtime libraries are its users' own (docs/subscribers.md).
    expect(manifest.peerDependencies).toEqual({
      'aws-cdk-lib': expect.any(String),
      constructs: expect.any(String),
    });
    // Every peer is optional: the CLI installed globally pulls none, a construct app only its own.
    expect(Object.keys(manifest.peerDependenciesMeta as object).sort()).toEqual(
      Object.keys(manifest.peerDependencies as object).sort(),
    );
    expect(manifest.bin).toEqual({ 'banking-events-poller': 'bin/banking-events-poller.mjs' });
    expect(Object.keys(manifest.exports as object)).toEqual(['.', './subscriber', './package.json']);
  });

  it.each(['dist/subscriber/index.js', 'dist/subscriber/index.cjs'])(
    'has a subscriber kit (%s) that imports only its runtime libraries and Node',
    (file) => {
      const imported = importsOf(file);

      expect(imported.length).toBeGreaterThan(0);
      expect(
        imported.filter(
          (specifier) =>
            !/^(@aws-lambda-powertools\/(batch|idempotency)(\/.*)?|@aws-sdk\/(client-dynamodb|client-s3|lib-dynamodb)|node:.+)$/.test(
              specifier,
            ),
        ),
      ).toEqual([]);
    },
  );

  it.each(['dist/lib/index.js', 'dist/lib/index.cjs'])(
    'has a library (%s) that imports only its peers and Node',
    (file) => {
      const imported = importsOf(file);

      expect(imported.length).toBeGreaterThan(0);
      expect(
        imported.filter((specifier) => !/^(aws-cdk-lib(\/.*)?|constructs|node:.+)$/.test(specifier)),
      ).toEqual([]);
    },
  );

  it('has the jsii assembly of the library, with the targets of every language', () => {
    const manifest = JSON.parse(fileOf('package.json')) as { version: string; jsii: { targets: object } };
    const assembly = JSON.parse(fileOf('.jsii')) as {
      name: string;
      version: string;
      targets: object;
      types: Record<string, { kind: string }>;
      dependencies: Record<string, string>;
    };

    expect(assembly).toMatchObject({ name: 'banking-events-poller', version: manifest.version });
    expect(Object.keys(manifest.jsii.targets).sort()).toEqual(['dotnet', 'go', 'java', 'python']);
    expect(assembly.targets).toMatchObject(manifest.jsii.targets);
    expect(Object.keys(assembly.dependencies).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    expect(assembly.types['banking-events-poller.BankingEventsPoller']?.kind).toBe('class');
    expect(assembly.types['banking-events-poller.FeedMode']?.kind).toBe('enum');
  });
});

describe('the language packages npm run package generates', () => {
  const dist = path.join(REPO_ROOT, 'dist');

  it('are there for Python, Java, .NET and Go, named as package.json says', () => {
    const { jsii } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
      jsii: { targets: { java: { package: string }; dotnet: { packageId: string } } };
    };

    expect(readdirSync(path.join(dist, 'python'))).toEqual(expect.arrayContaining(['setup.py', 'src']));
    expect(readdirSync(path.join(dist, 'java'))).toEqual(expect.arrayContaining(['pom.xml', 'src']));
    expect(readdirSync(path.join(dist, 'dotnet'))).toEqual([jsii.targets.dotnet.packageId]);
    expect(readdirSync(path.join(dist, 'go'))).toEqual(['bankingeventspoller']);
    const javaSources = path.join(dist, 'java/src/main/java', ...jsii.targets.java.package.split('.'));
    expect(readdirSync(javaSources)).toEqual(
      expect.arrayContaining(['BankingEventsPoller.java', 'FeedMode.java']),
    );
  });

  it('embed the npm package, with its assembly, in each language package', () => {
    const embedded = (dir: string): string[] =>
      readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.tgz'));

    for (const language of ['python', 'java', 'dotnet', 'go']) {
      const [tarball] = embedded(path.join(dist, language));
      expect(tarball, language).toMatch(/banking-events-poller[@-]\d+\.\d+\.\d+(\.jsii)?\.tgz$/);
      const listing = execFileSync('tar', ['-tzf', path.join(dist, language, tarball!)], {
        encoding: 'utf8',
      });
      expect(listing.split('\n').sort(), language).toEqual(
        execFileSync('tar', ['-tzf', inject('packageTarball')], { encoding: 'utf8' })
          .split('\n')
          .sort(),
      );
    }
  });

  it("puts the Python README's quick start in Python, translated by jsii-rosetta", () => {
    const readme = readFileSync(path.join(dist, 'python/README.md'), 'utf8');

    expect(readme).toContain('poller = BankingEventsPoller(self, "Poller",');
    expect(readme).toContain('programs=[PollerProgram(name="cards"), PollerProgram(name="loans")]');
    expect(readme).not.toContain('new BankingEventsPoller(');
  });

  const wheel = readdirSync(path.join(dist, 'python')).find((file) => file.endsWith('.whl'));
  // npm run package builds the wheel where pip can install Python's `build`; it says so when it cannot.
  it.skipIf(wheel === undefined)('builds a Python wheel holding the module and the npm package', () => {
    const listing = execFileSync('python3', ['-m', 'zipfile', '-l', path.join(dist, 'python', wheel!)], {
      encoding: 'utf8',
    });

    expect(listing).toContain('banking_events_poller/__init__.py');
    expect(listing).toMatch(/banking_events_poller\/_jsii\/banking-events-poller@[\d.]+\.jsii\.tgz/);
    expect(listing).toContain('banking_events_poller/py.typed');
  });
});
