/**
 * Builds the CDK app the way `npx cdk synth` does: cdk.json's context (feature flags included)
 * with overrides on top, through `createPollerApp`, so tests check what would be deployed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CfnElement, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { createPollerApp, type PollerApp } from '../../../infra/poller-app.ts';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The `context` block of cdk.json, as the CLI would pass it. */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  };
  return cdkJson.context;
}

export interface SynthesizedPollerApp extends PollerApp {
  readonly assembly: CloudAssembly;
  readonly template: Template;
  /** Removes the assembly directory. */
  dispose(): void;
}

/**
 * Synthesizes the app with cdk.json context plus `overrides` into a fresh temporary directory.
 * Nothing is bundled: the function deploys the handler `npm run build` made (dist/assets/poller).
 */
export function synthPollerApp(overrides: Readonly<Record<string, unknown>> = {}): SynthesizedPollerApp {
  const outdir = mkdtempSync(path.join(tmpdir(), 'poller-cdk-'));
  const context = { ...cdkJsonContext(), ...overrides };
  const built = createPollerApp({ context, outdir });
  const assembly = built.app.synth();
  return {
    ...built,
    assembly,
    // From the assembly just written: Template.fromStack would synthesize again.
    template: Template.fromJSON(
      assembly.getStackArtifact(built.stack.artifactId).template as Record<string, unknown>,
    ),
    dispose: () => rmSync(outdir, { recursive: true, force: true }),
  };
}

/** The logical id CloudFormation will see for a construct's default resource, without hard-coding hashes. */
export function logicalIdOf(stack: Stack, construct: { node: { defaultChild?: unknown } }): string {
  return stack.getLogicalId(construct.node.defaultChild as CfnElement);
}
