/**
 * The shipped poller artifact under the runtime-faithful harness, wired to moto and the
 * simulator: the function's environment as deployed, with the resource names, AWS endpoint and
 * credentials a test sets.
 */
import { type AttributeValue, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, afterEach, beforeAll, expect, inject } from 'vitest';
import type { PollerResult as PollerSummary } from '../../functions/poller/handler.ts';
import {
  type RunningSimulator,
  type SimulatorOptions,
  startSimulator,
} from '../../functions/simulator/banking-simulator.ts';
import { type MotoEnvironment, type RecordedBus, useMotoEnvironment } from './aws-test-env.ts';
import { type Invocation, LambdaContainer } from './lambda-runtime/lambda-container.ts';
import type { PollerArtifact } from './poller-artifact.ts';

export interface PollerLambdaOptions {
  readonly artifact: PollerArtifact;
  readonly motoEndpoint: string;
  readonly secretId: string;
  readonly checkpointTable: string;
  readonly eventBusName: string;
  /**
   * The invocation budget. Tests use a few seconds rather than the deployed timeout; the handler
   * keeps back at most a quarter of it, as it would of any timeout.
   * @default 5_000
   */
  readonly timeoutMs?: number;
  /** Variables on top of the deployed environment (e.g. `PROGRAM_SECRETS`, `AWS_ENDPOINT_URL_EVENTBRIDGE`). */
  readonly environment?: Readonly<Record<string, string>>;
}

/** One execution environment of the deployed function; call `close()` when done. */
export function pollerLambda(options: PollerLambdaOptions): LambdaContainer {
  return new LambdaContainer({
    codeDir: options.artifact.codeDir,
    memoryMb: options.artifact.memoryMb,
    timeoutMs: options.timeoutMs ?? 5_000,
    environment: {
      ...options.artifact.environment,
      SECRET_ID: options.secretId,
      CHECKPOINT_TABLE: options.checkpointTable,
      EVENT_BUS_NAME: options.eventBusName,
      // A short budget leaves little room for the default 2 s minimum poll window.
      MIN_POLL_WINDOW_MS: '500',
      AWS_REGION: 'us-east-1',
      AWS_DEFAULT_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_ENDPOINT_URL: options.motoEndpoint,
      ...options.environment,
    },
  });
}

/** The EMF documents (metrics) in a function's output. */
export function emfDocuments(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What one scenario of the artifact tests needs: its own simulator, secret, bus, queue and checkpoint row. */
export interface PollerScenarioOptions {
  readonly artifact: PollerArtifact;
  readonly aws: MotoEnvironment;
  readonly motoEndpoint: string;
  readonly checkpointTable: string;
  /** Distinct per scenario, so simulators never share program ids. */
  readonly seed: number;
  readonly simulator?: SimulatorOptions;
  readonly timeoutMs?: number;
  readonly environment?: Readonly<Record<string, string>>;
}

/**
 * A simulator, its credentials in a secret, a bus recording every event into one queue, and one
 * execution environment of the deployed function polling it into a checkpoint row of its own.
 */
export class PollerScenario {
  readonly simulator: RunningSimulator;
  readonly lambda: LambdaContainer;
  readonly program: string;
  readonly secretId: string;
  readonly busName: string;
  readonly #aws: MotoEnvironment;
  readonly #queueUrl: string;
  readonly #table: string;

  private constructor(fields: {
    simulator: RunningSimulator;
    lambda: LambdaContainer;
    program: string;
    secretId: string;
    bus: RecordedBus;
    aws: MotoEnvironment;
    table: string;
  }) {
    this.simulator = fields.simulator;
    this.lambda = fields.lambda;
    this.program = fields.program;
    this.secretId = fields.secretId;
    this.busName = fields.bus.busName;
    this.#queueUrl = fields.bus.queueUrl;
    this.#aws = fields.aws;
    this.#table = fields.table;
  }

  static async start(options: PollerScenarioOptions): Promise<PollerScenario> {
    const { aws } = options;
    const simulator = await startSimulator({
      maxPollHoldMs: 500,
      unknownTypeRatio: 0,
      ...options.simulator,
      seed: options.seed,
    });
    const secretId = await aws.createSecret(simulatorSecret(simulator));
    const bus = await aws.createRecordedBus();
    const program = aws.uniqueName('program');
    const lambda = pollerLambda({
      artifact: options.artifact,
      motoEndpoint: options.motoEndpoint,
      secretId,
      checkpointTable: options.checkpointTable,
      eventBusName: bus.busName,
      timeoutMs: options.timeoutMs,
      environment: { DEFAULT_PROGRAM: program, ...options.environment },
    });
    return new PollerScenario({
      simulator,
      lambda,
      program,
      secretId,
      bus,
      aws,
      table: options.checkpointTable,
    });
  }

  /** Invokes the function; a response's result is returned as the handler's summary. */
  invoke(event: unknown = {}): Promise<Invocation> {
    return this.lambda.invoke(event);
  }

  /** The checkpoint item of `program` (this scenario's by default), read consistently. */
  async item(program = this.program): Promise<Record<string, AttributeValue> | undefined> {
    const output = await this.#aws.dynamodb.send(
      new GetItemCommand({
        TableName: this.#table,
        Key: { pk: { S: `program#${program}` } },
        ConsistentRead: true,
      }),
    );
    return output.Item;
  }

  async checkpoint(program = this.program): Promise<number | null> {
    const value = (await this.item(program))?.checkpoint?.N;
    return value === undefined ? null : Number(value);
  }

  /** The bodies of the messages delivered to the recording queue since the last call, as text. */
  deliveredBodies(): Promise<string[]> {
    return this.#aws.drainQueueBodies(this.#queueUrl);
  }

  /** Ids of the events delivered to the bus since the last call. */
  async deliveredIds(): Promise<string[]> {
    const messages = await this.#aws.drainQueue(this.#queueUrl);
    return messages.map((message) => (message.detail as { id: string }).id);
  }

  /** Client secrets and tokens of this scenario found in the function's output: must stay empty. */
  leakedCredentials(): string[] {
    const output = this.lambda.output;
    const secrets = [
      ...this.simulator.programs.map((program) => program.clientSecret),
      ...this.simulator.issuedTokens(),
    ];
    const leaked = secrets.filter((secret) => output.includes(secret));
    if (/Bearer\s+\S/.test(output)) leaked.push('a Bearer authorization value');
    return leaked;
  }

  async close(): Promise<void> {
    await this.lambda.close();
    await this.simulator.close();
  }
}

/** The secret value `{"base_url", "client_id", "client_secret"}` for one of the simulator's programs. */
export function simulatorSecret(simulator: RunningSimulator, index = 0): string {
  const program = simulator.programs[index]!;
  return JSON.stringify({
    base_url: simulator.url,
    client_id: program.clientId,
    client_secret: program.clientSecret,
  });
}

/** The summary a response carried, typed; fails the test with the outcome when it was no response. */
export function summaryOf(invocation: Invocation): PollerSummary {
  if (invocation.outcome.kind !== 'response') {
    throw new Error(
      `Expected a response, got ${JSON.stringify(invocation.outcome)}\n--- stdout ---\n${invocation.stdout.slice(-3000)}\n--- stderr ---\n${invocation.stderr.slice(-3000)}`,
    );
  }
  return invocation.outcome.result as PollerSummary;
}

export type ScenarioSettings = Partial<
  Pick<PollerScenarioOptions, 'simulator' | 'timeoutMs' | 'environment'>
>;

export interface PollerScenarios {
  /** A new scenario, closed (and scanned for leaked credentials) after the test. */
  start(settings?: ScenarioSettings): Promise<PollerScenario>;
  readonly aws: MotoEnvironment;
  readonly checkpointTable: string;
}

/**
 * Registers the hooks a file of artifact tests needs (moto environment, one checkpoint table,
 * scenarios closed after each test with their output scanned for credentials) and returns the
 * means to start scenarios. `firstSeed` keeps files from sharing simulator program ids.
 */
export function usePollerScenarios(firstSeed: number): PollerScenarios {
  let seed = firstSeed;
  let aws: MotoEnvironment | undefined;
  let checkpointTable: string | undefined;
  const running: PollerScenario[] = [];
  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    checkpointTable = await aws.createCheckpointTable();
  });
  afterEach(async () => {
    for (const done of running.splice(0)) {
      expect(done.leakedCredentials()).toEqual([]);
      await done.close();
    }
  });
  afterAll(() => aws?.restore());
  return {
    get aws() {
      return aws!;
    },
    get checkpointTable() {
      return checkpointTable!;
    },
    async start(settings = {}) {
      seed += 1;
      const started = await PollerScenario.start({
        artifact: inject('pollerArtifact'),
        aws: aws!,
        motoEndpoint: inject('motoEndpoint'),
        checkpointTable: checkpointTable!,
        seed,
        ...settings,
      });
      running.push(started);
      return started;
    },
  };
}
