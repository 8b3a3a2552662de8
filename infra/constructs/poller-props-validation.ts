/**
 * Synth-time validation of what the settings table cannot check prop by prop: conflicting
 * combinations, programs, the timing of the schedule, timeout and lease handover, routes and the
 * stall window, reported with the prop and the fix before anything is built. Each setting's own
 * range is checked from the table (`setting-props.ts`).
 */
import { Duration } from 'aws-cdk-lib';
import { ConfigurationError } from '../../functions/core/errors.ts';
import { INVALID_EVENT_TYPE } from '../../functions/core/invalid-event.ts';
import { isProgramName, PROGRAM_NAME_EXPECTED } from '../../functions/core/name-rules.ts';
import { pascalCase } from './construct-names.ts';
import type { EventRouteOptions } from './event-routing.ts';
import { overlappingTimeout, pollingStopsAfterMs } from './handover-timing.ts';
import type { BankingEventsPollerProps, PollerProgram } from './poller-props.ts';

/** Lambda's ceiling; the schedule interval is bounded so the default timeout stays under it. */
const MAX_TIMEOUT = Duration.minutes(15);

/** What the checks here read of the resolved props (`ResolvedPollerProps` has all of it). */
export interface PropsToValidate {
  readonly programs: readonly PollerProgram[];
  readonly settings: { readonly workerCount: number };
  readonly scheduleInterval: Duration;
  readonly safetyMargin: Duration;
  readonly handoverOverlap: Duration;
  readonly functionTimeout: Duration;
  readonly routes: Readonly<Record<string, EventRouteOptions>>;
  readonly stallAfter: Duration;
}

/**
 * Refuses, at synth, props that conflict, each with a message naming the prop and what to do.
 * `resolved` holds the props with their defaults applied.
 *
 * @throws ConfigurationError
 */
export function validatePollerProps(props: BankingEventsPollerProps, resolved: PropsToValidate): void {
  const fail = (message: string, prop: string): never => {
    throw new ConfigurationError(`BankingEventsPoller: ${message}`, { prop });
  };
  if (props.existingEventBus !== undefined && props.eventBusName !== undefined) {
    fail(
      'eventBusName names a bus this construct creates; leave it out when passing existingEventBus',
      'eventBusName',
    );
  }
  if (
    props.alarmActions !== undefined &&
    (props.alarmTopic !== undefined || props.alarmEmail !== undefined)
  ) {
    fail(
      'alarmActions replaces the alarm topic; leave out alarmTopic and alarmEmail, or alarmActions',
      'alarmActions',
    );
  }
  if (props.alarmTopic !== undefined && props.alarmEmail !== undefined) {
    fail(
      'alarmEmail subscribes to the topic this construct creates; subscribe to your own alarmTopic yourself',
      'alarmEmail',
    );
  }
  if (resolved.programs.length === 0) fail('programs must name at least one program', 'programs');
  if (props.vpc === undefined) {
    for (const prop of ['vpcSubnets', 'securityGroups', 'vpcEndpoints'] as const) {
      if (props[prop] !== undefined && props[prop] !== false) {
        fail(`${prop} places the function in a VPC; pass vpc too, or leave ${prop} out`, prop);
      }
    }
  }
  const concurrency = props.reservedConcurrency;
  const workers = resolved.settings.workerCount;
  if (concurrency !== undefined && (!Number.isInteger(concurrency) || concurrency < workers)) {
    fail(
      `reservedConcurrency must be a whole number of at least ${workers} (one run per worker; ` +
        `${2 * workers} covers the hand-over between runs), or left out; got ${concurrency}`,
      'reservedConcurrency',
    );
  }

  const ids = new Map<string, string>();
  for (const { name } of resolved.programs) {
    if (!isProgramName(name)) fail(`program name "${name}" must be ${PROGRAM_NAME_EXPECTED}`, 'programs');
    const other = ids.get(pascalCase(name).toLowerCase());
    if (other !== undefined) fail(`programs "${other}" and "${name}" are too alike; rename one`, 'programs');
    ids.set(pascalCase(name).toLowerCase(), name);
  }
  const intervalMinutes = resolved.scheduleInterval.toSeconds() / 60;
  const interval = resolved.scheduleInterval.toSeconds();
  const overlap = resolved.handoverOverlap.toSeconds({ integral: false });
  if (overlap <= 0 || overlap >= interval / 2) {
    fail('handoverOverlap must be more than 0 and less than half the scheduleInterval', 'handoverOverlap');
  }
  const timeout = resolved.functionTimeout.toSeconds({ integral: false });
  const margin = resolved.safetyMargin.toSeconds({ integral: false });
  if (timeout > MAX_TIMEOUT.toSeconds())
    fail(`functionTimeout is ${timeout} s; Lambda allows at most 900 s`, 'functionTimeout');
  if (timeout <= margin) {
    fail(
      'functionTimeout must be longer than safetyMargin, the time kept back at its end for the last publish and commit',
      'functionTimeout',
    );
  }
  const stopsPolling = pollingStopsAfterMs(resolved.functionTimeout, resolved.safetyMargin) / 1000;
  const shortest = overlappingTimeout(
    resolved.scheduleInterval,
    resolved.handoverOverlap,
    resolved.safetyMargin,
  ).toSeconds();
  if (stopsPolling <= interval) {
    fail(
      `functionTimeout ${timeout} s with safetyMargin ${margin} s stops polling ${stopsPolling} s after it starts ` +
        `(the handler keeps back the margin, but at most a quarter of the timeout), no later than the next tick at ` +
        `${interval} s: runs would not overlap, and the feed would go unpolled between them. Use a functionTimeout ` +
        `of at least ${shortest} s (leave it out to get that) so each run hands over to the next.`,
      'functionTimeout',
    );
  }
  if (stopsPolling >= interval * 1.5) {
    fail(
      `functionTimeout ${timeout} s keeps polling until ${stopsPolling} s, more than half an interval after the next ` +
        `tick at ${interval} s: the next run would give up waiting for the lease. Use ${shortest} s (leave it out to get that).`,
      'functionTimeout',
    );
  }
  if (Object.hasOwn(resolved.routes, INVALID_EVENT_TYPE)) {
    fail(
      `routes must not name "${INVALID_EVENT_TYPE}": events that failed validation go to the quarantine route; configure it with the quarantine prop`,
      'routes',
    );
  }
  // Each completed run sends one CycleDurationMs, in the minute it ends. Ends jitter around one
  // interval apart, so `interval` consecutive minutes can hold none: the window needs a minute
  // more (see "Periods" in poller-alarms.ts).
  const stallMinutes = resolved.stallAfter.toSeconds() / 60;
  if (!Number.isInteger(stallMinutes) || stallMinutes < intervalMinutes + 1) {
    fail(
      `stallAfter must be whole minutes and at least scheduleInterval + 1 minute: set it to ${intervalMinutes + 1} ` +
        'minutes or more, or leave it out for the default, max(5 minutes, 2 × scheduleInterval). A window of ' +
        "exactly one interval misses the run's one data point whenever the run ends a little later than the " +
        'one before across a minute boundary, and raises the stall alarm while the poller is fine.',
      'stallAfter',
    );
  }
}
