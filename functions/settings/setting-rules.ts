/**
 * Rules between settings, which no one setting's kind can state. Each place (environment,
 * context, props) checks them with its own names for the settings, so an error names what the
 * person in front of it wrote.
 */
import type { SettingName } from './settings.ts';

export interface SettingRule {
  /** The setting the error is reported on. */
  readonly setting: SettingName;
  /**
   * The problem, worded to follow the setting's name ("must differ from …"), or `undefined`.
   * `values` holds what was read; `nameOf` spells another setting as the place does.
   */
  check(
    values: Readonly<Partial<Record<SettingName, unknown>>>,
    nameOf: (name: SettingName) => string,
  ): string | undefined;
}

export const SETTING_RULES: readonly SettingRule[] = [
  {
    setting: 'pollLimitParam',
    check: (values, nameOf) =>
      values.pollLimitParam !== undefined && values.pollLimitParam === values.pollCursorParam
        ? `must differ from ${nameOf('pollCursorParam')} (${JSON.stringify(values.pollCursorParam)}): one names the cursor, the other the page size`
        : undefined,
  },
];

/** Stream settings count only in stream mode: elsewhere they are not deployed, and the construct refuses them. */
export function applies(
  streamOnly: boolean | undefined,
  values: Readonly<Partial<Record<SettingName, unknown>>>,
): boolean {
  return streamOnly !== true || values.feedMode === 'stream';
}
