/**
 * Vitest globalSetup for the `integration` and `infra` projects: one moto server per project run,
 * shared by every test file. Tests read its address with `inject('motoEndpoint')` and must name
 * their resources uniquely (see `aws-test-env.ts`), since they all talk to the same server.
 */
import type { TestProject } from 'vitest/node';
import { startMoto } from './moto-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** e.g. `http://127.0.0.1:41234` */
    motoEndpoint: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const moto = await startMoto();
  project.provide('motoEndpoint', moto.endpoint);
  return async () => {
    await moto.stop();
  };
}
