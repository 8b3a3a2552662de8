/**
 * `status`: where each program's checkpoint is, who holds its lease, how far behind it is and how
 * its last cycle ended, read from the checkpoint table; on a Custom Event Bus, also the bus's
 * retention window (how far back a replay can start).
 */
import type { Command } from 'commander';
import { listCheckpointPrograms } from '../../adapters/aws/checkpoint-table-programs.ts';
import { DynamoDbCheckpointStore } from '../../adapters/aws/dynamodb-checkpoint-store.ts';
import { boundedParallelMap } from '../bounded-parallel-map.ts';
import { UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import { deploymentPrograms } from '../deployment-programs.ts';
import { operatorBusOf } from '../operator-bus-kinds.ts';
import { gridTable, keyValueTable, toJson } from '../output-format.ts';
import { OVERVIEW_COLUMNS, overviewRow, programStatus, statusRows } from '../program-status.ts';

/** Up to this many programs, each has its table; more get one line each (`--program` for one's table). */
const DETAILED_PROGRAMS_MAX = 5;

/** Programs whose last cycle failed that the overview's last line names; it counts the rest. */
const FAILED_NAMED_MAX = 10;

/** Checkpoint rows read at once. */
const READS_AT_ONCE = 16;

interface StatusFlags {
  readonly program?: string;
  readonly checkpointTable?: string;
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .summary("a program's checkpoint, lease, lag and last error")
    .description(
      "Shows each program's checkpoint (the last sequence number published) and when it last moved, the lease holder " +
        'and its expiry, the lag of the newest published event, and how the last cycle ended. Every program of the ' +
        'stack and of its programs table (or with a row in the checkpoint table) unless --program names one: more ' +
        `than ${DETAILED_PROGRAMS_MAX} get a line each. On ` +
        "a Custom Event Bus (the stack's " +
        'EventBusKind output is custom), also the retention window of the bus: the oldest point archive-replay can start from.',
    )
    .option('--program <name>', 'one program (default: all)')
    .option('--checkpoint-table <name>', 'the checkpoint table (default: from --stack)')
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller status --stack BankingEventsPoller
  $ banking-events-poller status --checkpoint-table my-table --program cards --json | jq .programs[0].checkpoint`,
    )
    .action(async (flags: StatusFlags, command: Command) => {
      await withContext(command, (context) => status(context, flags));
    });
}

async function status(context: CommandContext, flags: StatusFlags): Promise<void> {
  const deployment = await context.deployment({ checkpointTable: flags.checkpointTable });
  const tableName = deployment.checkpointTable;
  const client = context.aws.dynamodb;
  let programs: readonly string[];
  if (flags.program !== undefined) {
    const program = deployment.program(flags.program);
    if (deployment.programs === undefined) {
      const withRows = await listCheckpointPrograms(client, tableName);
      if (!withRows.includes(program)) {
        throw new UsageError(
          `Unknown program "${program}": table ${tableName} has no checkpoint row for it (rows: ${withRows.join(', ') || 'none'})`,
          "pass --program with one of those, or --stack to list the stack's programs",
        );
      }
    }
    programs = [program];
  } else {
    const listed = await deploymentPrograms(context, deployment);
    programs =
      listed === undefined
        ? await listCheckpointPrograms(client, tableName)
        : listed.programs.map((program) => program.name);
  }
  const now = Date.now();
  // A read a program, a few at once: a thousand programs never put a thousand requests in flight.
  const statuses = await boundedParallelMap(programs, READS_AT_ONCE, async (program) =>
    programStatus(program, await new DynamoDbCheckpointStore({ client, tableName, program }).read(), now),
  );
  const { terminal } = context;
  const bus = await operatorBusOf(deployment).status(context);
  if (context.globals.json) {
    terminal.out(
      toJson({
        checkpointTable: tableName,
        programs: statuses,
        ...(bus === undefined ? {} : { bus: bus.json }),
      }),
    );
    return;
  }
  if (bus !== undefined) terminal.out(`${keyValueTable('bus', bus.rows, terminal.color)}\n`);
  if (statuses.length === 0) {
    terminal.out(`No checkpoint rows in table ${tableName} yet: no program has run.\n`);
    return;
  }
  if (statuses.length > DETAILED_PROGRAMS_MAX) {
    terminal.out(
      `${gridTable(
        OVERVIEW_COLUMNS,
        statuses.map((programState) => overviewRow(programState, now)),
        terminal.color,
      )}\n`,
    );
    const failed = statuses
      .filter((programState) => programState.lastCycle?.outcome === 'failed')
      .map((programState) => programState.program);
    const named =
      failed.length <= FAILED_NAMED_MAX
        ? failed.join(', ')
        : `${failed.slice(0, FAILED_NAMED_MAX).join(', ')} and ${failed.length - FAILED_NAMED_MAX} more`;
    terminal.out(
      `${statuses.length} programs, ${failed.length} whose last cycle failed${failed.length === 0 ? '' : `: ${named}`} ` +
        `(table ${tableName}). One in detail: status --program NAME.\n`,
    );
    return;
  }
  for (const programState of statuses) {
    terminal.out(
      `${keyValueTable(`program ${programState.program}`, statusRows(programState, now), terminal.color)}\n`,
    );
  }
}
