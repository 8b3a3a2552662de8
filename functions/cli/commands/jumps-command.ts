/**
 * `jumps list|accept|reject`: the events a program holds for a sequence number implausibly far
 * past the one before it (`core/sequence-jumps.ts`), and the operator's decision on one. `accept`:
 * the bank's numbers did jump, the next run publishes the event and the checkpoint passes the
 * numbers below it; `reject`: the event stays in quarantine and is passed over. A decision is
 * written to the checkpoint row only while no run holds the lease (`--wait`, `--force` as for
 * `rewind`), and only if the held jumps are still what was shown.
 */
import type { Command } from 'commander';
import {
  DynamoDbCheckpointStore,
  type HeldJumpDecision,
} from '../../adapters/aws/dynamodb-checkpoint-store.ts';
import type { CheckpointState, HeldJump } from '../../core/checkpoint/index.ts';
import { RefusedError, UsageError } from '../cli-errors.ts';
import { type CommandContext, withContext } from '../command-context.ts';
import { refuseWhileLeased, waitForLease } from '../lease-wait.ts';
import { formatInstant, gridTable, toJson } from '../output-format.ts';
import { confirmChange } from '../prompts.ts';

interface JumpsFlags {
  readonly program?: string;
  readonly checkpointTable?: string;
}

interface DecideFlags extends JumpsFlags {
  readonly eventId?: string;
  readonly yes?: boolean;
  readonly wait?: boolean;
  readonly force?: boolean;
}

type Decision = HeldJumpDecision['decision'];

export function registerJumpsCommand(program: Command): void {
  const jumps = program
    .command('jumps')
    .summary('list the events held for an implausible sequence number; accept or reject one')
    .description(
      'An event whose sequence number lies more than MAX_SEQUENCE_JUMP past the number before it is held, not ' +
        'trusted: quarantined once (SEQUENCE_JUMP_HELD), the events with lower numbers still published and the ' +
        'checkpoint kept below it. accept: the bank really jumped; the next run publishes the event and moves the ' +
        'checkpoint past the numbers below it. reject: it stays in quarantine and is passed over. A decision is ' +
        'refused while a run holds the lease, unless --wait (for it to end) or --force (take the lease).',
    );
  const withRow = (command: Command) =>
    command
      .option('--program <name>', "the program (default: the stack's first program)")
      .option('--checkpoint-table <name>', 'the checkpoint table (default: from --stack)');
  withRow(jumps.command('list').summary("a program's held jumps, their decision, and its checkpoint"))
    .addHelpText(
      'after',
      `
Examples:
  $ banking-events-poller jumps list --stack BankingEventsPoller --program default
  $ banking-events-poller --json jumps list --stack BankingEventsPoller`,
    )
    .action(async (flags: JumpsFlags, command: Command) => {
      await withContext(command, (context) => list(context, flags));
    });
  for (const decision of ['accepted', 'rejected'] as const) {
    const verb = decision === 'accepted' ? 'accept' : 'reject';
    withRow(
      jumps
        .command(`${verb} <sequence>`)
        .summary(
          decision === 'accepted'
            ? 'the bank really jumped: publish the event and let the checkpoint pass the numbers below it'
            : 'the number is not one to follow: leave the event in quarantine and pass it over',
        ),
    )
      .option('--event-id <id>', 'the held event, when two are held at that number')
      .option('-y, --yes', 'do not ask for confirmation')
      .option('--wait', 'wait for a running run to release the lease (at most its expiry + 10 s)')
      .option('--force', 'take the lease from a running run')
      .addHelpText(
        'after',
        `
Example:
  $ banking-events-poller jumps ${verb} 9007199254740991 --stack BankingEventsPoller --program default`,
      )
      .action(async (sequence: string, flags: DecideFlags, command: Command) => {
        await withContext(command, (context) => decide(context, decision, sequence, flags));
      });
  }
}

async function storeFor(context: CommandContext, flags: JumpsFlags) {
  const deployment = await context.deployment({ checkpointTable: flags.checkpointTable });
  const program = deployment.program(flags.program);
  const store = new DynamoDbCheckpointStore({
    client: context.aws.dynamodb,
    tableName: deployment.checkpointTable,
    program,
  });
  return { program, store };
}

async function list(context: CommandContext, flags: JumpsFlags): Promise<void> {
  const { terminal, globals } = context;
  const { program, store } = await storeFor(context, flags);
  const state = await store.read();
  const held = state.heldJumps ?? [];
  if (globals.json) {
    terminal.out(toJson({ program, checkpoint: state.checkpoint, heldJumps: held }));
    return;
  }
  if (held.length === 0) {
    terminal.out(`Program ${program} holds no sequence jump (checkpoint ${state.checkpoint ?? 'none'}).\n`);
    return;
  }
  const now = Date.now();
  const rows = held.map((jump) => [
    String(jump.sequenceNumber),
    jump.eventId,
    formatInstant(jump.heldAt, now),
    jump.decision ?? 'awaiting a decision',
    jump.fingerprint.slice(0, 16),
  ]);
  terminal.out(
    `Program ${program}: checkpoint ${state.checkpoint ?? 'none'}; held sequence jumps:\n` +
      `${gridTable(['sequence number', 'event id', 'held since', 'decision', 'fingerprint'], rows, globals.color)}\n`,
  );
}

async function decide(
  context: CommandContext,
  decision: Decision,
  sequence: string,
  flags: DecideFlags,
): Promise<void> {
  const { terminal, globals } = context;
  const sequenceNumber = parseSequence(sequence);
  const { program, store } = await storeFor(context, flags);
  let state = await store.read();
  const jump = heldJump(program, state, sequenceNumber, flags.eventId);
  if (jump.decision === decision) {
    terminal.err(
      `The jump to ${sequenceNumber} of program ${program} is already ${decision}; nothing to do.\n`,
    );
    if (globals.json) terminal.out(toJson({ program, heldJump: jump, decided: false }));
    return;
  }
  refuseWhileLeased(program, state, flags, Date.now());
  terminal.err(`${describeDecision(program, state, jump, decision)}\n`);
  await confirmChange(
    terminal,
    `${decision === 'accepted' ? 'Accept' : 'Reject'} the jump to ${sequenceNumber}?`,
    flags.yes === true,
  );
  if (flags.wait) {
    const shown = JSON.stringify(state.heldJumps ?? []);
    state = await waitForLease(context, store, program, state, (next) =>
      JSON.stringify(next.heldJumps ?? []) === shown
        ? undefined
        : `The held jumps of ${program} changed while waiting`,
    );
  }
  const outcome = await store.decideHeldJump({
    sequenceNumber,
    eventId: jump.eventId,
    decision,
    breakLease: flags.force === true,
  });
  if (!outcome.decided) {
    if (outcome.reason === 'lease-held') {
      refuseWhileLeased(program, outcome.state, { force: false, wait: false }, Date.now());
      throw new RefusedError(`Program ${program} is being polled`, 'nothing was changed; try again');
    }
    throw new RefusedError(
      outcome.reason === 'not-held'
        ? `Program ${program} no longer holds the jump to ${sequenceNumber}`
        : `The held jumps of ${program} changed meanwhile`,
      'nothing was changed; run `jumps list` and decide again',
    );
  }
  const written = (outcome.state.heldJumps ?? []).find(
    (held) => held.sequenceNumber === sequenceNumber && held.eventId === jump.eventId,
  );
  if (globals.json) {
    terminal.out(toJson({ program, heldJump: written, decided: true, leaseTaken: flags.force === true }));
  } else {
    terminal.out(`Jump to ${sequenceNumber} of ${program}: ${decision} (the next run acts on it).\n`);
  }
}

function parseSequence(text: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(
      `<sequence> must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(text.slice(0, 40))}`,
      'give the sequence number `jumps list` shows',
    );
  }
  return value;
}

/** The held jump the operator named: by number, and by event id when two share it. */
function heldJump(
  program: string,
  state: CheckpointState,
  sequenceNumber: number,
  eventId?: string,
): HeldJump {
  const atNumber = (state.heldJumps ?? []).filter((held) => held.sequenceNumber === sequenceNumber);
  const matching = eventId === undefined ? atNumber : atNumber.filter((held) => held.eventId === eventId);
  if (matching.length === 1) return matching[0]!;
  if (matching.length > 1) {
    throw new UsageError(
      `Program ${program} holds ${matching.length} events at ${sequenceNumber}`,
      `name one with --event-id (${matching.map((held) => held.eventId).join(', ')})`,
    );
  }
  throw new UsageError(
    `Program ${program} holds no jump to ${sequenceNumber}${eventId === undefined ? '' : ` for event ${eventId}`}`,
    'run `banking-events-poller jumps list` for the held ones',
  );
}

function describeDecision(
  program: string,
  state: CheckpointState,
  jump: HeldJump,
  decision: Decision,
): string {
  const checkpoint = state.checkpoint ?? 0;
  const held = `Program ${program}: the event ${jump.eventId} at ${jump.sequenceNumber}, held since ${new Date(jump.heldAt).toISOString()}`;
  if (decision === 'rejected') {
    return `${held}, is rejected: it stays in quarantine and is passed over; the checkpoint (${state.checkpoint ?? 'none'}) goes on with the numbers after it.`;
  }
  return (
    `${held}, is accepted: the next run publishes it and moves the checkpoint (${state.checkpoint ?? 'none'}) past ` +
    `${checkpoint + 1}..${jump.sequenceNumber - 1}; events the bank creates below ${jump.sequenceNumber} afterwards are not read.`
  );
}
