/**
 * Vitest globalSetup of the projects that spawn the handler or the CLI: says once, before the
 * tests, which Node those processes run on (`spawned-node.ts`).
 */
import { spawnedNodeNotice } from './spawned-node.ts';

export default function setup(): void {
  console.log(spawnedNodeNotice());
}
