/**
 * A program's own settings over the deployment's. A program record (`core/fleet/program-record.ts`)
 * may hold, in `settings`, a value for any setting the table marks `perProgram` (how its feed is
 * read, where it starts, how fast it publishes), keyed by the setting's name. Each value is read by
 * the setting's own kind, as the environment's is, so a record is refused with the same words as a
 * variable; and the rules between settings hold over the program's values (its own, else the
 * deployment's). Every error names the program and the setting (`ProgramSettingError`).
 *
 * As in the environment, a stream setting of a program that polls is read, checked and unused.
 */
import { ProgramSettingError } from '../core/errors.ts';
import type { ProgramSettings, ProgramSettingValue } from '../core/fleet/program-record.ts';
import type { Setting } from './setting.ts';
import { SETTING_RULES } from './setting-rules.ts';
import { type ResolvedValue, SETTINGS, type SettingName, settingEntries } from './settings.ts';

type Settings = typeof SETTINGS;

/** The settings a program record may hold. */
export type PerProgramSettingName = {
  [N in SettingName]: Settings[N] extends { readonly perProgram: true } ? N : never;
}[SettingName];

/** A program's values of the per-program settings: its own, else the deployment's. */
export type ProgramSettingValues = { readonly [N in PerProgramSettingName]: ResolvedValue<N> };

/** The per-program settings, in table order. */
export const PER_PROGRAM_SETTINGS: readonly PerProgramSettingName[] = Object.freeze(
  settingEntries()
    .filter(([, setting]) => setting.perProgram === true)
    .map(([name]) => name as PerProgramSettingName),
);

const PER_PROGRAM: ReadonlySet<string> = new Set(PER_PROGRAM_SETTINGS);
/**
 * A refused value as an error shows it: a number or a flag as it is, text only by its length (a
 * record is edited by hand; text in the wrong field may be anything, a credential included).
 */
function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return typeof value === 'string' ? `a text of ${value.length} character(s)` : `a ${typeof value}`;
}

/**
 * Reads a program's overrides: each a per-program setting and a value of its kind, in the form the
 * kind gives (`"100"` becomes `100`). What the CLI writes, and what a worker checks again.
 *
 * @throws ProgramSettingError naming the program and the setting.
 * @example
 * parseProgramSettings('cards', { pollLimit: '50', feedMode: 'stream' }); // { pollLimit: 50, feedMode: 'stream' }
 */
export function parseProgramSettings(
  program: string,
  raw: Readonly<Record<string, unknown>>,
): ProgramSettings {
  const parsed: Record<string, ProgramSettingValue> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!PER_PROGRAM.has(name)) {
      throw new ProgramSettingError(
        `Program ${program}: settings.${name} is not a setting that may differ per program; those are ` +
          `${PER_PROGRAM_SETTINGS.join(', ')}`,
        { program, setting: name },
      );
    }
    const setting = SETTINGS[name as PerProgramSettingName] as Setting;
    const read = setting.kind.read(value);
    if (read === undefined) {
      throw new ProgramSettingError(
        `Program ${program}: settings.${name} must be ${setting.kind.expected}, got ${shown(value)}`,
        { program, setting: name },
      );
    }
    parsed[name] = read as ProgramSettingValue;
  }
  return Object.freeze(parsed);
}

/**
 * A program's values: its overrides (checked as `parseProgramSettings` does) over the deployment's
 * `defaults`, then the rules between settings over the result.
 *
 * @param defaults the deployment's values (the handler's `PollerConfig`, the CLI's flags).
 * @throws ProgramSettingError naming the program and the setting.
 * @example
 * resolveProgramSettings('cards', record.settings, config).pollLimit;
 */
export function resolveProgramSettings(
  program: string,
  overrides: ProgramSettings,
  defaults: ProgramSettingValues,
): ProgramSettingValues {
  const own = parseProgramSettings(program, overrides);
  const values: Record<string, unknown> = {};
  for (const name of PER_PROGRAM_SETTINGS)
    values[name] = Object.hasOwn(own, name) ? own[name] : defaults[name];
  for (const rule of SETTING_RULES) {
    const problem = rule.check(values, (name) => `settings.${name}`);
    if (problem !== undefined) {
      throw new ProgramSettingError(`Program ${program}: settings.${rule.setting} ${problem}`, {
        program,
        setting: rule.setting,
      });
    }
  }
  return Object.freeze(values) as ProgramSettingValues;
}
