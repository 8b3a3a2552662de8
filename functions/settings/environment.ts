/**
 * The handler's environment, both ways, from the settings table: `readEnvironment` parses it once
 * at cold start (every error names the variable and the expected form), `writeEnvironment`
 * writes it for a deployed function from the construct's resolved settings.
 */
import { ConfigurationError } from '../core/errors.ts';
import type { Setting } from './setting.ts';
import { applies, SETTING_RULES } from './setting-rules.ts';
import {
  type ResolvedValue,
  SETTINGS,
  type SettingName,
  type SettingsAt,
  settingEntries,
} from './settings.ts';

type Settings = typeof SETTINGS;

/** Settings the handler reads itself (Powertools reads the others). */
export type HandlerSettingName = {
  [N in SettingsAt<'env'>]: Settings[N] extends { readonly env: { readonly readBy: string } } ? never : N;
}[SettingsAt<'env'>];

/** What `readEnvironment` returns: every handler setting, keyed by setting name. */
export type EnvironmentValues = { readonly [N in HandlerSettingName]: ResolvedValue<N> };

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Reads every setting the handler has an environment variable for; unset or blank takes the
 * default. Rules between settings are checked too.
 *
 * @throws ConfigurationError naming the variable and the expected form
 * @example
 * const values = readEnvironment(process.env);
 */
export function readEnvironment(env: Env): EnvironmentValues {
  const values: Partial<Record<SettingName, unknown>> = {};
  const variable = (name: SettingName): string => (SETTINGS[name] as Setting).env?.name ?? name;
  for (const [name, setting] of settingEntries()) {
    const place = setting.env;
    if (place === undefined || place.readBy !== undefined) continue;
    const raw = env[place.name]?.trim();
    if (!raw) {
      if (place.required) {
        throw new ConfigurationError(
          `Environment variable ${place.name} is required: ${setting.kind.expected}`,
          {
            variable: place.name,
          },
        );
      }
      values[name] = setting.default;
      continue;
    }
    const value = setting.kind.read(raw);
    if (value === undefined) {
      throw new ConfigurationError(
        `Environment variable ${place.name} must be ${setting.kind.expected}, got ${JSON.stringify(raw)}`,
        { variable: place.name },
      );
    }
    values[name] = value;
  }
  for (const rule of SETTING_RULES) {
    const problem = rule.check(values, variable);
    if (problem !== undefined) {
      throw new ConfigurationError(`Environment variable ${variable(rule.setting)} ${problem}`, {
        variable: variable(rule.setting),
      });
    }
  }
  return Object.freeze(values) as EnvironmentValues;
}

/** Variables the construct fills in from what it built or computed (`deployed: 'resource' | 'computed'`). */
export type DeployedVariable = {
  [N in SettingsAt<'env'>]: Settings[N] extends {
    readonly env: { readonly deployed: 'resource' | 'computed' };
  }
    ? Settings[N]['env']['name']
    : never;
}[SettingsAt<'env'>];

/**
 * The function's environment: each variable in table order, from `values` (the resolved props,
 * in the settings' own units) or from `deployed`. A setting without a value is left out (the
 * handler's "none"), and so is a stream setting outside stream mode and a custom-bus setting on the
 * classic bus.
 *
 * @example
 * writeEnvironment({ pollLimit: 100, feedMode: 'poll' }, { SECRET_ID: arn, … });
 */
export function writeEnvironment(
  values: Readonly<Partial<Record<SettingName, unknown>>>,
  deployed: Readonly<Record<DeployedVariable, string | undefined>>,
): Record<string, string> {
  const environment: Record<string, string> = {};
  for (const [name, setting] of settingEntries()) {
    const place = setting.env;
    if (place === undefined || !applies(setting, values)) continue;
    const text =
      place.deployed === 'resource' || place.deployed === 'computed'
        ? deployed[place.name as DeployedVariable]
        : place.deployed === 'fixed'
          ? formatted(setting, setting.default)
          : setting.prop === undefined
            ? undefined
            : formatted(setting, values[name]);
    if (text !== undefined) environment[place.name] = text;
  }
  return environment;
}

function formatted(setting: Setting, value: unknown): string | undefined {
  return value === undefined ? undefined : setting.kind.format(value);
}
