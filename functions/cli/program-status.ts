/**
 * What `status` says about one program, from its checkpoint row: a plain object for `--json`
 * and the rows of its table. Pure, so its wording is unit-tested.
 */
import type {
  CheckpointState,
  CycleRecord,
  HeldJump,
  OpenGap,
  RecordedError,
  StartRecord,
} from '../core/checkpoint/index.ts';
import { formatAge, formatInstant, formatLag } from './output-format.ts';

export interface ProgramStatus {
  readonly program: string;
  /** The last sequence number published; `null` before the first commit. */
  readonly checkpoint: number | null;
  /** When the checkpoint last moved (ISO). */
  readonly checkpointMovedAt: string | null;
  readonly lease: { readonly holder: string; readonly expiresAt: string; readonly live: boolean } | null;
  /** `created_dt` of the newest event published. */
  readonly newestCreatedDt: string | null;
  /** Lag of the newest event published, as the last cycle measured it (0: caught up). */
  readonly lagSeconds: number | null;
  readonly lastCycle: CycleRecord | null;
  readonly lastError: RecordedError | null;
  /** The banking `program_id` the checkpoint belongs to. */
  readonly feedProgramId: string | null;
  /** Sequence numbers the feed skipped below the checkpoint whose events were never published. */
  readonly openGaps: readonly OpenGap[];
  /** Events held for an implausible sequence number, above the checkpoint (`jumps list`). */
  readonly heldJumps: readonly HeldJump[];
  /** The start position the program's first run applied; `null` before it did. */
  readonly start: StartRecord | null;
}

export function programStatus(program: string, state: CheckpointState, now: number): ProgramStatus {
  return {
    program,
    checkpoint: state.checkpoint,
    checkpointMovedAt: state.updatedAt,
    lease:
      state.lease === null
        ? null
        : {
            holder: state.lease.owner,
            expiresAt: new Date(state.lease.expiresAt).toISOString(),
            live: state.lease.expiresAt >= now,
          },
    newestCreatedDt: state.newestCreatedDt ?? null,
    lagSeconds: state.lastCycle?.lagSeconds ?? null,
    lastCycle: state.lastCycle ?? null,
    lastError: state.lastError ?? null,
    feedProgramId: state.feedProgramId,
    openGaps: state.openGaps,
    heldJumps: state.heldJumps ?? [],
    start: state.start ?? null,
  };
}

/** `5 (looked up until 10:00:00Z)`, `8-9 (seen 3 min ago, still looked up)`. */
function describeGap(gap: OpenGap, now: number): string {
  const numbers = gap.from === gap.to ? String(gap.from) : `${gap.from}-${gap.to}`;
  return gap.gaveUpAt === undefined
    ? `${numbers} (seen ${formatInstant(gap.seenAt, now)}, still looked up)`
    : `${numbers} (no event by ${formatInstant(gap.gaveUpAt, now)}; no longer looked up)`;
}

/** The checkpoint, or where the program reads from before it has one. */
function describeCheckpoint({ checkpoint, start }: ProgramStatus, now: number): string {
  if (checkpoint !== null) return String(checkpoint);
  if (start === null) return 'none yet (the first run starts at the start position)';
  return `none yet (start position ${start.position} applied ${formatInstant(start.appliedAt, now)}: reading from the beginning of the feed)`;
}

/** `status`'s overview of many programs: one line each (`overviewRow`), these columns. */
export const OVERVIEW_COLUMNS = [
  'program',
  'checkpoint',
  'lag',
  'last cycle',
  'lease',
  'last error',
] as const;

/** A program's line in the overview: what tells a person on call which program to look at. */
export function overviewRow(status: ProgramStatus, now: number): readonly string[] {
  const { lease, lastCycle, lastError } = status;
  return [
    status.program,
    status.checkpoint === null ? 'none yet' : String(status.checkpoint),
    status.lagSeconds === null ? 'unknown' : formatLag(status.lagSeconds),
    lastCycle === null
      ? 'none recorded'
      : `${lastCycle.outcome}, ${lastCycle.published} published, ${formatAge(lastCycle.endedAt, now)}`,
    lease === null ? 'free' : lease.live ? 'held' : 'expired',
    lastError === null ? 'none' : `${lastError.code}, ${formatAge(lastError.at, now)}`,
  ];
}

/** The rows of a program's table, in the order a person on call reads them. */
export function statusRows(status: ProgramStatus, now: number): Array<readonly [string, string]> {
  const { lease, lastCycle, lastError } = status;
  const rows: Array<readonly [string, string]> = [
    ['checkpoint', describeCheckpoint(status, now)],
    ['last moved', formatInstant(status.checkpointMovedAt, now)],
    [
      'lease',
      lease === null
        ? 'free'
        : `${lease.live ? 'held' : 'expired'}: ${lease.holder} until ${formatInstant(lease.expiresAt, now)}`,
    ],
    [
      'lag',
      status.lagSeconds === null
        ? 'unknown (no cycle recorded)'
        : `${formatLag(status.lagSeconds)}${status.lagSeconds === 0 ? ' (caught up)' : ''}`,
    ],
    [
      'newest event',
      status.newestCreatedDt === null
        ? 'none published yet'
        : `created ${formatInstant(status.newestCreatedDt, now)}`,
    ],
    [
      'last cycle',
      lastCycle === null
        ? 'none recorded'
        : `${lastCycle.outcome}, ${lastCycle.published} published, ended ${formatInstant(lastCycle.endedAt, now)}`,
    ],
    [
      'last error',
      lastError === null
        ? 'none recorded'
        : `${lastError.code}: ${lastError.message} (${formatInstant(lastError.at, now)})`,
    ],
  ];
  rows.push([
    'skipped numbers',
    status.openGaps.length === 0
      ? 'none'
      : status.openGaps
          .slice(0, 5)
          .map((gap) => describeGap(gap, now))
          .join('; ') + (status.openGaps.length > 5 ? `; and ${status.openGaps.length - 5} more` : ''),
  ]);
  const awaiting = status.heldJumps.filter((jump) => jump.decision === undefined);
  if (awaiting.length > 0) {
    rows.push([
      'sequence jumps',
      `${awaiting.map((jump) => jump.sequenceNumber).join(', ')} held, awaiting a decision (jumps list)`,
    ]);
  }
  if (status.feedProgramId !== null) rows.push(['feed program_id', status.feedProgramId]);
  return rows;
}
