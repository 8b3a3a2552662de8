/**
 * One CLI test's world: its own simulator (a seeded feed), a deployment of its own in moto named
 * by a stack's outputs, and the CLI spawned against both.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDbCheckpointStore } from '../../../functions/adapters/aws/dynamodb-checkpoint-store.ts';
import { type RunningSimulator, startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import type { MotoEnvironment } from '../../support/aws-test-env.ts';
import {
  type CliOptions,
  type CliResult,
  motoCliEnvironment,
  runCli,
  startCli,
} from '../../support/cli-process.ts';
import { createMotoDeployment, type MotoDeployment } from '../../support/moto-deployment.ts';

export interface CliScenario {
  readonly simulator: RunningSimulator;
  readonly deployment: MotoDeployment;
  /** The deployment's checkpoint row of program `default`, as the function sees it. */
  readonly store: DynamoDbCheckpointStore;
  /** Runs `banking-events-poller --stack <stack> …args`. */
  cli(args: readonly string[], options?: CliOptions): Promise<CliResult>;
  /** Starts it without waiting for the end. */
  start(args: readonly string[], options?: CliOptions): ReturnType<typeof startCli>;
  /** Sequence numbers of the events delivered to the bus's recording queue since the last call. */
  delivered(): Promise<number[]>;
  close(): Promise<void>;
}

export async function cliScenario(
  aws: MotoEnvironment,
  motoEndpoint: string,
  options: { seed: number; events: number; programs?: { workers: number } },
): Promise<CliScenario> {
  const simulator = await startSimulator({ seed: options.seed, maxPollHoldMs: 300 });
  simulator.generate(options.events);
  const [program] = simulator.programs;
  const deployment = await createMotoDeployment(
    aws,
    JSON.stringify({
      base_url: simulator.url,
      client_id: program!.clientId,
      client_secret: program!.clientSecret,
    }),
    options.programs === undefined ? {} : { programs: options.programs },
  );
  const env = motoCliEnvironment(motoEndpoint);
  // A directory of its own, as a user's: replay state files (.local/) never outlive the test.
  const cwd = await mkdtemp(join(tmpdir(), 'cli-scenario-'));
  const withEnv = (given: CliOptions = {}): CliOptions => ({ cwd, ...given, env: { ...env, ...given.env } });
  return {
    simulator,
    deployment,
    store: new DynamoDbCheckpointStore({
      client: aws.dynamodb,
      tableName: deployment.tableName,
      program: 'default',
    }),
    cli: (args, given) => runCli(['--stack', deployment.stackName, ...args], withEnv(given)),
    start: (args, given) => startCli(['--stack', deployment.stackName, ...args], withEnv(given)),
    delivered: async () =>
      (await aws.drainQueue(deployment.queueUrl))
        .map((event) => (event.detail as { sequence_number: number }).sequence_number)
        .sort((a, b) => a - b),
    close: async () => {
      await simulator.close();
      await rm(cwd, { recursive: true, force: true });
    },
  };
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** The lines a command wrote to stderr. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}
