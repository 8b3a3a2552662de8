/**
 * What `npm run package` puts in the tarball: what a user needs and nothing else, a manifest that
 * runs nothing at install and depends on nothing, and a construct library that imports only its
 * peers.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';

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
      /^README\.md$/,
      /^CHANGELOG\.md$/,
      /^docs\/(decisions\/)?[\w-]+\.md$/,
      /^bin\/banking-events-poller\.mjs$/,
      /^dist\/cli\/main\.mjs$/,
      /^dist\/assets\/poller\/index\.mjs(\.map)?$/,
      /^dist\/assets\/poller\/chunks\/[\w-]+\.mjs(\.map)?$/,
      /^dist\/lib\/index\.(js|cjs)$/,
      /^dist\/subscriber\/index\.(js|cjs)$/,
      /^dist\/lib\/types\/package\.json$/,
      /^dist\/lib\/types\/.+\.d\.ts$/,
    ];

    const files = entries();

    expect(files.filter((file) => !shipped.some((pattern) => pattern.test(file)))).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['dist/assets/poller/index.mjs', 'dist/cli/main.mjs']));
  });

  it('has a manifest with entry points, peers, and no dependencies or scripts', () => {
    const manifest = JSON.parse(fileOf('package.json')) as Record<string, unknown>;

    expect(manifest).not.toHaveProperty('scripts');
    expect(manifest).not.toHaveProperty('dependencies');
    expect(manifest).not.toHaveProperty('private');
    expect(manifest.peerDependencies).toEqual({
      'aws-cdk-lib': expect.any(String),
      constructs: expect.any(String),
      // The subscriber kit's, for its users only.
      '@aws-lambda-powertools/batch': expect.any(String),
      '@aws-lambda-powertools/idempotency': expect.any(String),
      '@aws-sdk/client-dynamodb': expect.any(String),
      '@aws-sdk/client-s3': expect.any(String),
      '@aws-sdk/lib-dynamodb': expect.any(String),
      '@types/aws-lambda': expect.any(String),
    });
    // Every peer is optional: the CLI installed globally pulls none, a construct app only its own.
    expect(Object.keys(manifest.peerDependenciesMeta as object).sort()).toEqual(
      Object.keys(manifest.peerDependencies as object).sort(),
    );
    expect(manifest.bin).toEqual({ 'banking-events-poller': 'bin/banking-events-poller.mjs' });
    expect(Object.keys(manifest.exports as object)).toEqual(['.', './subscriber', './package.json']);
  });

  it.each(['dist/subscriber/index.js', 'dist/subscriber/index.cjs'])(
    'has a subscriber kit (%s) that imports only its optional peers and Node',
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
});
