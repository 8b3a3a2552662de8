/**
 * Vitest globalSetup of the `jsii` project: fetches the jsii runtime and the tarballs of the jsii
 * packages the tests load (kernel-files.ts) once, before any test starts a kernel.
 */
import { ensureJsiiRuntime, installedPackages, JSII_RUNTIME_VERSION } from './kernel-files.ts';

export default async function setup(): Promise<void> {
  await ensureJsiiRuntime();
  const packages = await installedPackages('aws-cdk-lib');
  console.log(
    `jsii kernel: @jsii/runtime ${JSII_RUNTIME_VERSION}, ${packages.map(({ name, version }) => `${name}@${version}`).join(', ')}`,
  );
}
