/**
 * How a deployment's programs are alarmed, and so which of their metrics carry `Program`.
 *
 * - **Per program** (today's alarms): seven alarms for each program named in `programs` (eight on
 *   the custom bus), each on that program's metrics. Clear and cheap for a few programs; at a
 *   hundred they are 700 resources, past what one stack holds, and every metric of every program
 *   is billed.
 * - **Per condition**: one alarm for each condition (lag, stall, rejected entries, unfilled gaps,
 *   sequence jumps held, oversize pages, lease busy, broken order) over a Metrics Insights query grouped by
 *   `Program`: each program is a contributor with its own state, named in the notification. The
 *   alarms do not grow with the programs, and a program costs a metric only while something is
 *   wrong with it (`PROGRAM_METRICS=alarmed`, `functions/adapters/observability/metric-plan.ts`).
 *   They exist in every deployment (the registry may hold programs no per-program alarm names),
 *   leaving out the programs with alarms of their own.
 */
import type { ProgramMetricsPlan } from '../../functions/adapters/observability/metric-plan.ts';

/** Per-program alarms by default up to this many programs named in props. */
export const PER_PROGRAM_ALARMS_UP_TO = 5;

export interface AlarmPlan {
  /** Today's alarms, one set per program named in props. */
  readonly perProgram: boolean;
  /** One alarm per condition over every program (props' and the registry's). */
  readonly perCondition: boolean;
  /**
   * The function's `PROGRAM_METRICS`: `all` while per-program alarms read every metric of their
   * programs, `alarmed` otherwise.
   */
  readonly programMetrics: ProgramMetricsPlan;
}

export interface AlarmPlanOptions {
  /** Programs named in props. */
  readonly programs: number;
  /**
   * Whether programs may also come from the registry (added with the CLI), which no per-program
   * alarm can name: they are then alarmed per condition, beside any per-program alarms.
   */
  readonly registry: boolean;
  /**
   * The `perProgramAlarms` prop.
   *
   * @default - on with at most `PER_PROGRAM_ALARMS_UP_TO` programs in props
   */
  readonly perProgramAlarms?: boolean;
}

/**
 * The plan for a deployment. Per-condition alarms exist whenever a program may have no
 * per-program alarm: always with a registry, and whenever per-program alarms are off. With the
 * defaults, a deployment of today (a few programs in props) keeps its per-program alarms, its
 * dashboard and every metric of its programs.
 */
export function resolveAlarmPlan(options: AlarmPlanOptions): AlarmPlan {
  const perProgram = options.perProgramAlarms ?? options.programs <= PER_PROGRAM_ALARMS_UP_TO;
  return {
    perProgram,
    perCondition: !perProgram || options.registry,
    programMetrics: perProgram ? 'all' : 'alarmed',
  };
}
