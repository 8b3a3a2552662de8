/**
 * Vitest globalSetup for the `integration` project: builds the Lambda artifact once per run (a
 * synth with real bundling, a few seconds) for the tests that run it under the runtime-faithful
 * harness. They read it with `inject('pollerArtifact')`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { type PollerArtifact, synthPollerArtifact } from './poller-artifact.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    pollerArtifact: PollerArtifact;
  }
}

export default function setup(project: TestProject): () => void {
  const outdir = mkdtempSync(path.join(tmpdir(), 'poller-artifact-'));
  project.provide('pollerArtifact', synthPollerArtifact(outdir));
  return () => rmSync(outdir, { recursive: true, force: true });
}
