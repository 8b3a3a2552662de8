/**
 * The construct's props resolved in one place: `resolvePollerProps` turns what the caller gave into
 * the values every part of the construct builds from. The props that are settings take their
 * defaults and checks from the settings table (`setting-props.ts`); the rest, and the rules
 * between props, are here and in `poller-props-validation.ts`.
 */
import { Duration } from 'aws-cdk-lib';
import { SETTINGS } from '../../functions/settings/settings.ts';
import type { EventRouteOptions } from './event-routing.ts';
import { overlappingTimeout } from './handover-timing.ts';
import type { BankingEventsPollerProps, PollerProgram } from './poller-props.ts';
import { validatePollerProps } from './poller-props-validation.ts';
import { type PropSettingValues, resolveSettingProps, settingDuration } from './setting-props.ts';

/** Every prop with its default applied: what the parts of the construct are built from. */
export interface ResolvedPollerProps {
  /** The props that are settings, in the settings' own units (`safetyMarginMs`), checked. */
  readonly settings: PropSettingValues;
  readonly programs: readonly PollerProgram[];
  readonly scheduleInterval: Duration;
  readonly safetyMargin: Duration;
  readonly handoverOverlap: Duration;
  readonly functionTimeout: Duration;
  readonly memorySize: number;
  readonly entry: string | undefined;
  readonly archiveRetention: Duration;
  readonly routes: Readonly<Record<string, EventRouteOptions>>;
  readonly unrouted: EventRouteOptions;
  readonly quarantine: EventRouteOptions;
  readonly claimCheckRetention: Duration;
  readonly lagThreshold: Duration;
  readonly stallAfter: Duration;
  readonly runbookUrl: string;
}

/** Consecutive schedule intervals (one `LagSeconds` data point each) over the lag threshold. */
export const LAG_PERIODS = 3;
const MIN_STALL_AFTER = Duration.minutes(5);

/**
 * Applies every default, once, then validates the result together with the props that have no
 * default (existing resources, alarm wiring).
 *
 * @throws ConfigurationError naming the prop and the fix
 */
export function resolvePollerProps(props: BankingEventsPollerProps): ResolvedPollerProps {
  const settings = resolveSettingProps(props);
  const scheduleInterval = settingDuration('scheduleRateMinutes', settings.scheduleRateMinutes);
  const safetyMargin = settingDuration('safetyMarginMs', settings.safetyMarginMs);
  const handoverOverlap = props.handoverOverlap ?? Duration.seconds(5);
  const resolved: ResolvedPollerProps = {
    settings,
    programs: props.programs ?? SETTINGS.programs.default,
    scheduleInterval,
    safetyMargin,
    handoverOverlap,
    functionTimeout:
      props.functionTimeout ?? overlappingTimeout(scheduleInterval, handoverOverlap, safetyMargin),
    memorySize: props.memorySize ?? 256,
    entry: props.entry,
    archiveRetention: settingDuration('archiveRetentionDays', settings.archiveRetentionDays),
    routes: props.routes ?? SETTINGS.routes.default,
    unrouted: props.unrouted ?? {},
    quarantine: props.quarantine ?? {},
    claimCheckRetention: settingDuration('claimCheckRetentionDays', settings.claimCheckRetentionDays),
    lagThreshold: settingDuration('lagThresholdSeconds', settings.lagThresholdSeconds),
    // One place for the default, so apps embedding the construct get a window that fits their interval.
    stallAfter:
      props.stallAfter ??
      Duration.minutes(
        Math.max(MIN_STALL_AFTER.toMinutes(), (2 * scheduleInterval.toSeconds({ integral: false })) / 60),
      ),
    runbookUrl: props.runbookUrl ?? 'docs/deploy.md',
  };
  validatePollerProps(props, resolved);
  return resolved;
}
