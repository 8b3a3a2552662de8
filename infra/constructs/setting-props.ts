/**
 * The construct's props for the settings of the table (`functions/settings/settings.ts`): each
 * prop's default, its validation at synth (the error names the prop and the expected form) and,
 * for a `Duration` prop, the conversion to and from the setting's unit.
 */
import { Duration } from 'aws-cdk-lib';
import { ConfigurationError } from '../../functions/core/errors.ts';
import type { Setting } from '../../functions/settings/setting.ts';
import { applicability, applies, SETTING_RULES } from '../../functions/settings/setting-rules.ts';
import {
  type ResolvedValue,
  SETTINGS,
  type SettingName,
  settingEntries,
  type ValueSettingsAt,
} from '../../functions/settings/settings.ts';
import { type IntegerKind, isStructured, type TimeUnit } from '../../functions/settings/value-kinds.ts';
import type { BankingEventsPollerProps } from './poller-props.ts';

type Settings = typeof SETTINGS;

/** Settings with a prop whose value the table can check (`programs` and `routes` are checked by hand). */
export type PropSettingName = ValueSettingsAt<'prop'>;

/** Every prop setting's value in the setting's own unit (`safetyMarginMs`), defaults applied. */
export type PropSettingValues = { readonly [N in PropSettingName]: ResolvedValue<N> };

/** Settings whose prop is a `Duration`. */
export type DurationSettingName = {
  [N in PropSettingName]: Settings[N] extends { readonly prop: { readonly duration: true } } ? N : never;
}[PropSettingName];

const TO_DURATION: Record<TimeUnit, (amount: number) => Duration> = {
  milliseconds: Duration.millis,
  seconds: Duration.seconds,
  minutes: Duration.minutes,
  days: Duration.days,
};

function unitOf(setting: Setting): TimeUnit {
  const unit = (setting.kind as Partial<IntegerKind>).unit;
  // A declaration error, not a user's: the table's own test keeps every Duration prop on a time unit.
  if (unit === undefined) throw new Error(`The setting of prop ${setting.prop?.name} has no time unit`);
  return unit;
}

function inUnit(duration: Duration, unit: TimeUnit): number {
  const options = { integral: false };
  switch (unit) {
    case 'milliseconds':
      return duration.toMilliseconds(options);
    case 'seconds':
      return duration.toSeconds(options);
    case 'minutes':
      return duration.toMinutes(options);
    case 'days':
      return duration.toDays(options);
  }
}

/** A setting's value as its prop takes it: a `Duration` in the setting's unit, or the value itself. */
function asProp(setting: Setting, value: unknown): unknown {
  return setting.prop?.duration && typeof value === 'number' ? TO_DURATION[unitOf(setting)](value) : value;
}

/**
 * The `Duration` a Duration setting's value stands for: what the construct's parts are built from.
 *
 * @example
 * settingDuration('safetyMarginMs', 10_000); // Duration.millis(10_000)
 */
export function settingDuration(name: DurationSettingName, value: number): Duration {
  return TO_DURATION[unitOf(SETTINGS[name])](value);
}

function propAt(props: object, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>(
      (node, key) => (node === undefined ? undefined : (node as Record<string, unknown>)[key]),
      props,
    );
}

const fail = (prop: string, message: string): never => {
  throw new ConfigurationError(`BankingEventsPoller: ${prop} ${message}`, { prop });
};

/**
 * Applies the table's default to every prop setting left out, and refuses a prop the handler
 * would refuse, a stream setting outside stream mode, a custom-bus setting on the classic bus, and
 * a broken rule between settings.
 *
 * @throws ConfigurationError naming the prop and the expected form
 */
export function resolveSettingProps(props: object): PropSettingValues {
  const values: Partial<Record<SettingName, unknown>> = {};
  const given = new Set<SettingName>();
  for (const [name, setting] of settingEntries()) {
    const place = setting.prop;
    if (place === undefined || isStructured(setting.kind)) continue;
    const prop = propAt(props, place.name);
    if (prop === undefined) {
      values[name] = setting.default;
      continue;
    }
    given.add(name);
    const raw = place.duration ? durationAmount(place.name, setting, prop) : prop;
    const value = setting.kind.read(raw);
    if (value === undefined) {
      const shown = place.duration ? `${raw} ${unitOf(setting)}` : JSON.stringify(raw);
      fail(place.name, `must be ${expectedOf(setting)}; got ${shown}`);
    }
    values[name] = value;
  }
  for (const name of given) {
    const setting = SETTINGS[name] as Setting;
    if (applies(setting, values)) continue;
    for (const needs of applicability(setting)) {
      if (values[needs.setting] === needs.value) continue;
      fail(
        setting.prop!.name,
        `applies to ${needs.setting} '${needs.value}' only; ${needs.setting} is '${values[needs.setting]}'. ` +
          `Set ${needs.setting}: '${needs.value}' or remove it`,
      );
    }
  }
  const propName = (name: SettingName): string => (SETTINGS[name] as Setting).prop?.name ?? name;
  for (const rule of SETTING_RULES) {
    const problem = rule.check(values, propName);
    if (problem !== undefined) fail(propName(rule.setting), problem);
  }
  return Object.freeze(values) as PropSettingValues;
}

function durationAmount(prop: string, setting: Setting, value: unknown): number {
  // Duck-typed: an app may hold another copy of aws-cdk-lib, whose Duration is another class.
  if (typeof (value as Partial<Duration>).toMilliseconds !== 'function') {
    return fail(prop, `must be ${expectedOf(setting)}; got ${JSON.stringify(value)}`);
  }
  return inUnit(value as Duration, unitOf(setting));
}

function expectedOf(setting: Setting): string {
  if (!setting.prop?.duration) return setting.kind.expected;
  const { min, max } = setting.kind as IntegerKind;
  const unit = unitOf(setting);
  return max === undefined
    ? `a Duration of whole ${unit}, ${min} or more`
    : `a Duration of whole ${unit} from ${min} to ${max}`;
}

/**
 * Props for settings given by value, as the app reads them from its context: each in its prop's
 * form (a `Duration` for a Duration prop, nested for `gapRepair.*`); a setting without a value is
 * left to the construct's default, and a stream setting outside stream mode (a custom-bus setting on
 * the classic bus) left out.
 *
 * @example
 * new BankingEventsPoller(this, 'Poller', { ...settingProps(config), programs, routes });
 */
export function settingProps(
  values: Readonly<Partial<Record<SettingName, unknown>>>,
): Partial<BankingEventsPollerProps> {
  const props: Record<string, unknown> = {};
  for (const [name, setting] of settingEntries()) {
    const place = setting.prop;
    const value = values[name];
    if (place === undefined || isStructured(setting.kind) || value === undefined) continue;
    if (!applies(setting, values)) continue;
    const path = place.name.split('.');
    let parent = props;
    for (const key of path.slice(0, -1)) {
      parent[key] ??= {};
      parent = parent[key] as Record<string, unknown>;
    }
    parent[path.at(-1)!] = asProp(setting, value);
  }
  // Built by path from the table, so typed here: the template tests compare what it builds.
  return props as Partial<BankingEventsPollerProps>;
}
