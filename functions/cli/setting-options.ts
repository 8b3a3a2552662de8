/**
 * Flags for the settings the CLI shares with the handler (`cli` in the settings table): one
 * spelling in every command, the table's default, and the table's check, so `--limit 5000` is
 * refused as the handler refuses `POLL_LIMIT=5000`; a bad value stops the command before anything
 * runs, naming the flag and the expected form (exit code 2).
 */
import { InvalidArgumentError, Option } from 'commander';
import type { Setting } from '../settings/setting.ts';
import { SETTINGS, type SettingsAt } from '../settings/settings.ts';

/**
 * The flag of setting `name`; `description` is the command's own wording of it. Commander names
 * the parsed value after the flag (`--limit` → `limit`), as for any other option.
 *
 * @example
 * command.addOption(settingOption('pollLimit', 'events per page'));
 */
export function settingOption(name: SettingsAt<'cli'>, description: string): Option {
  const setting: Setting = SETTINGS[name];
  const option = new Option(setting.cli!.flag, description).argParser((raw: string) => {
    const value = setting.kind.read(raw);
    if (value === undefined) throw new InvalidArgumentError(`expected ${setting.kind.expected}.`);
    return value;
  });
  return setting.default === undefined ? option : option.default(setting.default);
}
