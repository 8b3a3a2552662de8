/**
 * CDK apps through the kernel: an `App` writing to its own directory, and the template a stack
 * synthesizes to, read back through the kernel (`app.synth().getStackArtifact(id).template`) as a
 * foreign language's app reads it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { JsiiObject } from './foreign-values.ts';
import type { JsiiKernel } from './kernel.ts';

export interface KernelApp {
  readonly app: JsiiObject;
  /** The app's output directory (assets are staged there); `dispose` removes it. */
  readonly outdir: string;
  dispose(): void;
}

/** `new App({ outdir })` in the kernel, with `props` as a foreign app gives them (e.g. `context`). */
export async function kernelApp(
  kernel: JsiiKernel,
  props: Readonly<Record<string, unknown>> = {},
): Promise<KernelApp> {
  const outdir = mkdtempSync(path.join(tmpdir(), 'jsii-kernel-app-'));
  const app = await kernel.create('aws-cdk-lib.App', [{ ...props, outdir }]);
  return { app, outdir, dispose: () => rmSync(outdir, { recursive: true, force: true }) };
}

/** `app.synth()`, then the template of the stack whose artifact id is `stackId`. */
export async function synthesizedTemplate(
  kernel: JsiiKernel,
  app: JsiiObject,
  stackId: string,
): Promise<Record<string, unknown>> {
  const assembly = (await kernel.invoke(app, 'synth')) as JsiiObject;
  const artifact = (await kernel.invoke(assembly, 'getStackArtifact', [stackId])) as JsiiObject;
  return (await kernel.get(artifact, 'template')) as Record<string, unknown>;
}
