/**
 * Vitest globalSetup for the `integration`, `infra` and `faults` projects: one moto server per run,
 * shared by every test file of every project that asks for it (global setups all run in the main
 * process; the last project's teardown stops it). Tests read its address with
 * `inject('motoEndpoint')` and must name their resources uniquely (see `aws-test-env.ts`), since
 * they all talk to the same server.
 */
import type { TestProject } from 'vitest/node';
import { type MotoServer, startMoto } from './moto-server.ts';
import { timedSetup } from './setup-timing.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** e.g. `http://127.0.0.1:41234` */
    motoEndpoint: string;
  }
}

const SHARED = Symbol.for('banking-events-poller.test.moto');

interface SharedMoto {
  readonly server: Promise<MotoServer>;
  users: number;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const state = globalThis as { [SHARED]?: SharedMoto };
  const shared = state[SHARED] ?? { server: timedSetup('moto server', () => startMoto()), users: 0 };
  state[SHARED] = shared;
  shared.users += 1;
  project.provide('motoEndpoint', (await shared.server).endpoint);
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    delete state[SHARED];
    await (await shared.server).stop();
  };
}
