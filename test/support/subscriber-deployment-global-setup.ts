/**
 * Vitest globalSetup for the `integration` project: synthesizes the app with the example
 * subscriber once per run (real bundling) for the tests that run it under the runtime-faithful
 * harness. They read it with `inject('subscriberDeployment')`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { timedSetup } from './setup-timing.ts';
import { type SubscriberDeployment, synthSubscriberDeployment } from './subscriber-deployment.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    subscriberDeployment: SubscriberDeployment;
  }
}

export default async function setup(project: TestProject): Promise<() => void> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'subscriber-artifact-'));
  project.provide(
    'subscriberDeployment',
    await timedSetup('synth the example subscriber', () => synthSubscriberDeployment(outdir)),
  );
  return () => rmSync(outdir, { recursive: true, force: true });
}
