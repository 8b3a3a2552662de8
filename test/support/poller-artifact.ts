/**
 * The poller's Lambda artifact exactly as `cdk deploy` ships it: the app synthesized from cdk.json
 * through the package's entry point (`banking-events-poller`, built by `npm run build`), whose
 * construct deploys the handler prebuilt into the package (`dist/assets/poller`); from the cloud
 * assembly, the function's code directory, its literal environment, timeout and memory.
 */
import path from 'node:path';
import { createPollerApp } from '../../infra/poller-app.ts';
import { cdkJsonContext } from '../infra/support/poller-app-fixture.ts';

export interface PollerArtifact {
  /** The function's code asset: a directory holding `index.mjs` (and its source map). */
  readonly codeDir: string;
  /**
   * The function's environment variables whose values are literal in the template; the ones that
   * name resources (`SECRET_ID`, `CHECKPOINT_TABLE`, `EVENT_BUS_NAME`, …) are for the test to set.
   */
  readonly environment: Readonly<Record<string, string>>;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

interface FunctionResource {
  readonly Type: string;
  readonly Metadata?: Record<string, unknown>;
  readonly Properties: {
    readonly Handler?: string;
    readonly Timeout?: number;
    readonly MemorySize?: number;
    readonly Environment?: { readonly Variables?: Record<string, unknown> };
  };
}

/**
 * Synthesizes the app into `outdir` and returns the poller function's artifact.
 *
 * @example
 * const artifact = synthPollerArtifact(mkdtempSync(join(tmpdir(), 'artifact-')));
 * const container = new LambdaContainer({ codeDir: artifact.codeDir, environment: {...}, timeoutMs: 6_000 });
 */
export function synthPollerArtifact(outdir: string): PollerArtifact {
  // The CLI sets this context key; it records each asset's directory on the resource using it.
  const context = { ...cdkJsonContext(), 'aws:cdk:enable-asset-metadata': true };
  const { app, stack } = createPollerApp({ context, outdir });
  const assembly = app.synth();
  const template = assembly.getStackArtifact(stack.artifactId).template as {
    Resources: Record<string, FunctionResource>;
  };
  const poller = Object.values(template.Resources).find(
    (resource) =>
      resource.Type === 'AWS::Lambda::Function' &&
      resource.Properties.Environment?.Variables?.EVENT_SOURCE !== undefined,
  );
  const assetPath = poller?.Metadata?.['aws:asset:path'];
  if (poller === undefined || typeof assetPath !== 'string') {
    throw new Error('The synthesized template has no poller function with an asset path');
  }
  if (poller.Properties.Handler !== 'index.handler') {
    throw new Error(`Unexpected handler ${poller.Properties.Handler}; the harness loads index.handler`);
  }
  const environment = Object.fromEntries(
    Object.entries(poller.Properties.Environment?.Variables ?? {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
  return {
    codeDir: path.resolve(assembly.directory, assetPath),
    environment,
    timeoutSeconds: poller.Properties.Timeout ?? 3,
    memoryMb: poller.Properties.MemorySize ?? 128,
  };
}

/** The program seeding's provider as `cdk deploy` ships it, and the properties of its custom resource. */
export interface ProgramSeederArtifact {
  /** The provider's code asset: the prebuilt handler and the stack's `seed.json`. */
  readonly codeDir: string;
  /** `<module>.<export>`, as the template names it. */
  readonly handler: string;
  readonly timeoutSeconds: number;
  /** The custom resource's properties as the template has them (intrinsics left for the test to resolve). */
  readonly properties: Readonly<Record<string, unknown>>;
}

/**
 * Synthesizes the app with cdk.json's context and `overrides` into `outdir` and returns the
 * program seeding's provider and its custom resource.
 */
export function synthProgramSeederArtifact(
  outdir: string,
  overrides: Readonly<Record<string, unknown>> = {},
): ProgramSeederArtifact {
  const context = { ...cdkJsonContext(), ...overrides, 'aws:cdk:enable-asset-metadata': true };
  const { app, stack } = createPollerApp({ context, outdir });
  const assembly = app.synth();
  const template = assembly.getStackArtifact(stack.artifactId).template as {
    Resources: Record<string, FunctionResource & { Properties: Record<string, unknown> }>;
  };
  const resources = Object.values(template.Resources);
  const seeding = resources.find((resource) => resource.Type === 'Custom::ProgramSeeding');
  const providerId = (seeding?.Properties.ServiceToken as { 'Fn::GetAtt'?: [string, string] } | undefined)?.[
    'Fn::GetAtt'
  ]?.[0];
  const provider = providerId === undefined ? undefined : template.Resources[providerId];
  const assetPath = provider?.Metadata?.['aws:asset:path'];
  if (seeding === undefined || provider === undefined || typeof assetPath !== 'string') {
    throw new Error('The synthesized template has no program seeding with a provider and its asset path');
  }
  const { ServiceToken: _token, ...properties } = seeding.Properties;
  return {
    codeDir: path.resolve(assembly.directory, assetPath),
    handler: provider.Properties.Handler ?? 'index.handler',
    timeoutSeconds: provider.Properties.Timeout ?? 3,
    properties,
  };
}
