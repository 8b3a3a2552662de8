/**
 * Where a command's resources are: named by flags, or read from the deployed stack's outputs
 * (`--stack NAME`, CloudFormation DescribeStacks), the way the CDK CLI's users find them. A flag
 * always wins over the stack. Every "not found" names the flag or output to fix.
 */
import { DescribeStacksCommand, type Output } from '@aws-sdk/client-cloudformation';
import { MAX_WORKERS } from '../core/fleet/assignment.ts';
import { parseProgramName } from '../core/name-rules.ts';
import { SETTINGS, type SettingValue } from '../settings/settings.ts';
import type { AwsClients } from './aws-clients.ts';
import { UsageError } from './cli-errors.ts';
import { isCustomBusArn } from './custom-bus-operations.ts';
import { STACK_OUTPUTS } from './stack-outputs.ts';

export { STACK_OUTPUTS };

/** `classic` or `custom`, as the settings table declares them. */
export type EventBusKind = SettingValue<'eventBusKind'>;

/** Flags any command may pass; a command reads only the resources it needs. */
export interface DeploymentFlags {
  readonly stack?: string;
  readonly checkpointTable?: string;
  readonly programsTable?: string;
  readonly eventBus?: string;
  readonly secretId?: string;
}

export class Deployment {
  readonly stackName: string | undefined;
  readonly #flags: DeploymentFlags;
  readonly #outputs: ReadonlyMap<string, string>;

  private constructor(flags: DeploymentFlags, outputs: ReadonlyMap<string, string>) {
    this.#flags = flags;
    this.stackName = flags.stack;
    this.#outputs = outputs;
  }

  /** Reads the stack's outputs when `--stack` is given; a missing stack is reported here. */
  static async resolve(clients: AwsClients, flags: DeploymentFlags): Promise<Deployment> {
    if (flags.stack === undefined) return new Deployment(flags, new Map());
    let outputs: readonly Output[];
    try {
      const answer = await clients.cloudFormation.send(new DescribeStacksCommand({ StackName: flags.stack }));
      outputs = answer.Stacks?.[0]?.Outputs ?? [];
    } catch (error) {
      if (
        error instanceof Error &&
        error.name === 'ValidationError' &&
        /does not exist/.test(error.message)
      ) {
        throw new UsageError(
          `Stack ${flags.stack} does not exist in this account and region`,
          'check --stack, --region and --profile (`aws cloudformation list-stacks`)',
        );
      }
      throw error;
    }
    return new Deployment(
      flags,
      new Map(
        outputs.flatMap((output) =>
          output.OutputKey && output.OutputValue ? [[output.OutputKey, output.OutputValue]] : [],
        ),
      ),
    );
  }

  /** An output of the stack, if `--stack` was given and has it. */
  output(key: string): string | undefined {
    return this.#outputs.get(key);
  }

  /** Keys of the stack's outputs (none without `--stack`). */
  outputKeys(): string[] {
    return [...this.#outputs.keys()];
  }

  /** The stack's programs, the default one first; `undefined` without `--stack`. */
  get programs(): readonly string[] | undefined {
    if (this.stackName === undefined) return undefined;
    const listed = this.output(STACK_OUTPUTS.programs);
    return listed === undefined ? ['default'] : listed.split(',').filter((name) => name !== '');
  }

  /**
   * `--program`, checked against the stack's programs; the stack's default program, else
   * `fallback`. A stack with a programs table may poll programs its outputs do not name (added
   * with `programs add`): any valid name is taken there.
   */
  program(requested: string | undefined, fallback = 'default'): string {
    const known = this.programs;
    if (requested === undefined) return known?.[0] ?? fallback;
    const program = parseProgramName(requested, '--program');
    if (known !== undefined && !known.includes(program) && !this.hasProgramsTable) {
      throw new UsageError(
        `Unknown program "${program}": stack ${this.stackName} polls ${known.join(', ')}`,
        `pass --program with one of them, or add "${program}" to the stack's programs and deploy`,
      );
    }
    return program;
  }

  /** Whether the stack keeps its programs as records (a release with `programs`); a flag counts as one. */
  get hasProgramsTable(): boolean {
    return this.#flags.programsTable !== undefined || this.output(STACK_OUTPUTS.programsTable) !== undefined;
  }

  /** The programs table: `--programs-table`, else the stack's `ProgramsTableName`. */
  get programsTable(): string {
    if (this.#flags.programsTable === undefined && this.stackName !== undefined && !this.hasProgramsTable) {
      throw new UsageError(
        `Stack ${this.stackName} has no output ${STACK_OUTPUTS.programsTable}: it was deployed by a version that kept ` +
          'its programs in the stack',
        'deploy it again with this version (cdk deploy): its programs become records, and the programs commands work',
      );
    }
    return this.#require(
      'programs table',
      this.#flags.programsTable,
      STACK_OUTPUTS.programsTable,
      '--programs-table NAME',
    );
  }

  /** The deployment's secrets prefix (`SecretsPrefix`); `undefined` without `--stack` or on an older stack. */
  get secretsPrefix(): string | undefined {
    return this.output(STACK_OUTPUTS.secretsPrefix);
  }

  /** How many workers share the programs (`WorkerCount`); `undefined` when not known. */
  get workerCount(): number | undefined {
    const value = Number(this.output(STACK_OUTPUTS.workerCount));
    return Number.isSafeInteger(value) && value >= 1 && value <= MAX_WORKERS ? value : undefined;
  }

  /**
   * The workers' schedules, worker `i`'s at index `i` (`WorkerScheduleNames`); `undefined` on a
   * stack of an older version, whose outputs name a schedule per program (`scheduleName`).
   */
  get workerSchedules(): readonly string[] | undefined {
    const names = this.output(STACK_OUTPUTS.workerScheduleNames)?.split(',');
    return names !== undefined && names.length === this.workerCount && names.every((name) => name !== '')
      ? names
      : undefined;
  }

  /** The secrets of the stack's own programs (`SecretArn<Program>` outputs). */
  stackSecretIds(): string[] {
    return [...this.stackSecrets().values()];
  }

  /** The secrets the stack's outputs name, by program (`SecretArn<Program>`; none without `--stack`). */
  stackSecrets(): Map<string, string> {
    return new Map(
      (this.programs ?? []).flatMap((program): [string, string][] => {
        const secret = this.output(STACK_OUTPUTS.secretArn(program));
        return secret === undefined ? [] : [[program, secret]];
      }),
    );
  }

  get checkpointTable(): string {
    return this.#require(
      'checkpoint table',
      this.#flags.checkpointTable,
      STACK_OUTPUTS.checkpointTable,
      '--checkpoint-table NAME',
    );
  }

  /**
   * The kind of the bus: a Custom Event Bus when `--event-bus` is such an ARN
   * (`…:event-busv2/NAME/ID`), classic for another name or ARN; without the flag, the stack's
   * `EventBusKind` output, which a classic stack leaves out.
   */
  get busKind(): EventBusKind {
    const flag = this.#flags.eventBus;
    if (flag !== undefined) return isCustomBusArn(flag) ? 'custom' : 'classic';
    const output = this.output(STACK_OUTPUTS.eventBusKind);
    if (output === undefined) return SETTINGS.eventBusKind.default;
    const kind = SETTINGS.eventBusKind.kind.read(output);
    if (kind === undefined) {
      throw new UsageError(
        `Stack ${this.stackName} has a bus of kind "${output}" (output ${STACK_OUTPUTS.eventBusKind}), which this version of the CLI does not know`,
        'upgrade banking-events-poller (npm install -g banking-events-poller)',
      );
    }
    return kind;
  }

  /** The bus's ARN: `--event-bus`, else the stack's `EventBusArn` (a Custom Event Bus is named by it alone). */
  get eventBusArn(): string {
    return this.#require(
      'Custom Event Bus',
      this.#flags.eventBus,
      STACK_OUTPUTS.eventBusArn,
      '--event-bus ARN',
    );
  }

  get eventBus(): string {
    return this.#require('event bus', this.#flags.eventBus, STACK_OUTPUTS.eventBusName, '--event-bus NAME');
  }

  /** `--secret-id`, when given: it wins over what the stack and its programs table name. */
  get secretIdFlag(): string | undefined {
    return this.#flags.secretId;
  }

  /** `--secret-id`, else the stack's `SecretArn<Program>` output (its records: `program-secret.ts`). */
  secretId(program: string): string {
    return this.#require('secret', this.#flags.secretId, STACK_OUTPUTS.secretArn(program), '--secret-id ID');
  }

  /** The deployed poller function, which runs the commands that need the banking service. */
  get pollerFunction(): string {
    if (this.stackName === undefined)
      throw new UsageError('No poller function given', 'pass --stack NAME, or --local to work from here');
    const name = this.output(STACK_OUTPUTS.pollerFunctionName);
    if (name === undefined) {
      throw new UsageError(
        `Stack ${this.stackName} has no output ${STACK_OUTPUTS.pollerFunctionName} (deployed by an older version)`,
        'deploy it again (cdk deploy), or pass --local to read the secret and call the banking service from this machine',
      );
    }
    return name;
  }

  /** `--event-source`, else the stack's, else the settings table's default. */
  eventSource(flag: string | undefined): string {
    return flag ?? this.output(STACK_OUTPUTS.eventSource) ?? SETTINGS.eventSource.default;
  }

  /** The program's schedule, known only from the stack. */
  scheduleName(program: string): string | undefined {
    return this.output(STACK_OUTPUTS.scheduleName(program));
  }

  #require(what: string, flag: string | undefined, outputKey: string, flagUsage: string): string {
    if (flag !== undefined) return flag;
    if (this.stackName === undefined)
      throw new UsageError(`No ${what} given`, `pass ${flagUsage} or --stack NAME`);
    const value = this.output(outputKey);
    if (value === undefined) {
      throw new UsageError(
        `Stack ${this.stackName} has no output ${outputKey}`,
        `pass ${flagUsage}, or check that --stack names a banking-events-poller stack`,
      );
    }
    return value;
  }
}
