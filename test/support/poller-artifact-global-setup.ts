/**
 * Vitest globalSetup for the `integration` project: synthesizes the app once per run (after
 * build-global-setup.ts built the package) for the tests that run the packaged handler under the
 * runtime-faithful harness. They read it with `inject('pollerArtifact')`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { type PollerArtifact, synthPollerArtifact } from './poller-artifact.ts';
import { timedSetup } from './setup-timing.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pollerArtifact: PollerArtifact;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'poller-artifact-'));
  project.provide(
    'pollerArtifact',
    await timedSetup('synth the poller artifact', () => synthPollerArtifact(outdir)),
  );
  return () => rmSync(outdir, { recursive: true, force: true });
}
