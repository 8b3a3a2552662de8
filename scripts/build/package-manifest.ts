/**
 * The package.json the package ships, derived from the repository's: the same name, version,
 * entry points (`exports`, `bin`), peer dependencies and jsii targets, and nothing that only the
 * repository needs. No `dependencies` (the handler and the CLI are bundled, the construct library imports
 * only its peers) and no `scripts`, so nothing runs when a user installs it.
 */

/** The fields a user's npm, Node and TypeScript read; every other field stays in the repository. */
const SHIPPED_FIELDS = [
  'name',
  'version',
  'description',
  'keywords',
  'homepage',
  'bugs',
  'repository',
  'license',
  'author',
  'type',
  'engines',
  'exports',
  'main',
  'types',
  'bin',
  'peerDependencies',
  'peerDependenciesMeta',
  // The language targets (names in Python, Java, .NET, Go): what jsii-pacmak and Construct Hub read.
  'jsii',
] as const;

/** Fields the package needs: without them it is not a library nor a CLI. */
const REQUIRED_FIELDS = ['name', 'version', 'exports', 'bin', 'peerDependencies'] as const;

export type Manifest = Readonly<Record<string, unknown>>;

/**
 * @throws Error naming a field the repository's manifest lacks
 */
export function packageManifest(repository: Manifest): Manifest {
  const missing = REQUIRED_FIELDS.filter((field) => repository[field] === undefined);
  if (missing.length > 0) {
    throw new Error(`package.json has no ${missing.join(', ')}: the package cannot be made without them`);
  }
  return Object.fromEntries(
    SHIPPED_FIELDS.filter((field) => repository[field] !== undefined).map((field) => [
      field,
      repository[field],
    ]),
  );
}
