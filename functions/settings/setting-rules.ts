/**
 * Rules between settings, which no one setting's kind can state. Each place (environment,
 * context, props) checks them with its own names for the settings, so an error names what the
 * person in front of it wrote.
 */
import type { SettingDetails } from './setting.ts';
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

/**
 * Stream settings count only in stream mode, custom-bus settings only on the custom bus: elsewhere
 * they are not deployed, and the construct refuses them.
 */
export function applies(
  setting: Pick<SettingDetails, 'streamOnly' | 'customBusOnly'>,
  values: Readonly<Partial<Record<SettingName, unknown>>>,
): boolean {
  return applicability(setting).every((needs) => values[needs.setting] === needs.value);
}

/** What a setting that does not apply needs, for the construct's refusal. */
export function applicability(setting: Pick<SettingDetails, 'streamOnly' | 'customBusOnly'>): {
  readonly setting: 'feedMode' | 'eventBusKind';
  readonly value: string;
}[] {
  return [
    ...(setting.streamOnly === true ? [{ setting: 'feedMode' as const, value: 'stream' }] : []),
    ...(setting.customBusOnly === true ? [{ setting: 'eventBusKind' as const, value: 'custom' }] : []),
  ];
}
