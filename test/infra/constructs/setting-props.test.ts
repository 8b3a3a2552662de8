/**
 * The construct's props that are settings: their documented `@default`s and docs/construct.md's table of
 * props agree with the settings table, their types with the table's values, and the app's
 * settings → props mapping leaves none out.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import * as logs from 'aws-cdk-lib/aws-logs';
import ts from 'typescript';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Setting } from '../../../functions/settings/setting.ts';
import {
  type FeedMode,
  SETTINGS,
  type SettingValue,
  type StreamRecovery,
  settingEntries,
} from '../../../functions/settings/settings.ts';
import { type IntegerKind, isStructured } from '../../../functions/settings/value-kinds.ts';
import {
  type BankingEventsPollerProps,
  EventBusKind,
  EventGroupBy,
  FeedMode as FeedModeEnum,
  type GapRepairOptions,
  StartPosition,
  StreamRecovery as StreamRecoveryEnum,
} from '../../../infra/constructs/index.ts';
import { resolveSettingProps, settingProps } from '../../../infra/constructs/setting-props.ts';
import { REPO_ROOT } from '../support/poller-app-fixture.ts';

const PROP_SETTINGS = settingEntries().filter(([, setting]) => setting.prop !== undefined);

/** `@default` of every member of the props interfaces, by prop path (`gapRepair.maxLookups`). */
function documentedDefaults(): Map<string, string> {
  const file = path.join(REPO_ROOT, 'infra/constructs/poller-props.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const defaults = new Map<string, string>();
  const visit = (declaration: ts.InterfaceDeclaration, prefix: string) => {
    for (const member of declaration.members) {
      if (!ts.isPropertySignature(member) || !ts.isIdentifier(member.name)) continue;
      const name = `${prefix}${member.name.text}`;
      const tag = ts.getJSDocTags(member).find((candidate) => candidate.tagName.text === 'default');
      if (tag !== undefined) defaults.set(name, ts.getTextOfJSDocComment(tag.comment) ?? '');
      const nested = member.type?.getText(source);
      if (nested !== undefined && interfaces.has(nested)) visit(interfaces.get(nested)!, `${name}.`);
    }
  };
  visit(interfaces.get('BankingEventsPollerProps')!, '');
  return defaults;
}

/** A time in its largest whole unit: 300 s is 5 minutes. */
function naturalDuration(setting: Setting): { readonly amount: number; readonly unit: string } {
  const toMs = { milliseconds: 1, seconds: 1_000, minutes: 60_000, days: 86_400_000 } as const;
  const ms = (setting.default as number) * toMs[(setting.kind as IntegerKind).unit!];
  const units = [
    ['days', 86_400_000],
    ['hours', 3_600_000],
    ['minutes', 60_000],
    ['seconds', 1_000],
  ] as const;
  const [unit, size] = units.find(([, size]) => ms % size === 0 && ms > 0) ?? ['millis', 1];
  return { amount: ms / size, unit };
}

/** Whether `documented` (an `@default`, or a cell of docs/construct.md) states the setting's default. */
function statesDefault(setting: Setting, documented: string): boolean {
  const text = documented.trim();
  const startsWith = (expected: string) =>
    text === expected || (text.startsWith(expected) && /^[\s:(]/.test(text.slice(expected.length)));
  if (setting.default === undefined) return text.startsWith('-');
  if (isStructured(setting.kind)) {
    const words = (value: string) => value.replaceAll(/[\s"'`]/g, '');
    // Spelt out (`[{ name: 'default' }]`), or in words naming every entry ("a queue each for …").
    return (
      words(text) === words(JSON.stringify(setting.default)) ||
      (!Array.isArray(setting.default) &&
        Object.keys(setting.default as object).every((key) => text.includes(key)))
    );
  }
  if (setting.prop?.duration) {
    const { amount, unit } = naturalDuration(setting);
    const human = `${amount} ${amount === 1 ? unit.slice(0, -1) : unit}`;
    return startsWith(`Duration.${unit}(${amount})`) || startsWith(human);
  }
  if (setting.prop?.name === 'logRetention') {
    const name = /^logs\.RetentionDays\.([A-Z_]+)/.exec(text)?.[1];
    return (
      name !== undefined && logs.RetentionDays[name as keyof typeof logs.RetentionDays] === setting.default
    );
  }
  if (typeof setting.default === 'number')
    return (
      startsWith(String(setting.default)) ||
      startsWith(setting.default.toLocaleString('en').replaceAll(',', '_'))
    );
  return startsWith(typeof setting.default === 'string' ? `'${setting.default}'` : String(setting.default));
}

describe('the documented defaults of every prop', () => {
  it('gives every optional prop of the props interfaces an @default', () => {
    const file = path.join(REPO_ROOT, 'infra/constructs/poller-props.ts');
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const undocumented: string[] = [];
    let optional = 0;
    source.forEachChild((node) => {
      if (!ts.isInterfaceDeclaration(node)) return;
      for (const member of node.members) {
        if (!ts.isPropertySignature(member) || member.questionToken === undefined) continue;
        optional += 1;
        const documented = ts.getJSDocTags(member).some((tag) => tag.tagName.text === 'default');
        if (!documented) undocumented.push(`${node.name.text}.${member.name.getText(source)}`);
      }
    });

    expect(optional).toBeGreaterThan(40);
    expect(undocumented).toEqual([]);
  });
});

describe('the documented defaults of the props that are settings', () => {
  const defaults = documentedDefaults();

  it.each(PROP_SETTINGS.map(([name, setting]) => [setting.prop!.name, name, setting] as const))(
    '%s documents the default of setting %s',
    (prop, _name, setting) => {
      expect(defaults.has(prop), `${prop} has no @default`).toBe(true);
      expect(statesDefault(setting, defaults.get(prop)!), `@default ${defaults.get(prop)}`).toBe(true);
    },
  );

  it("would catch a documented default that is not the table's", () => {
    expect(statesDefault(SETTINGS.pollLimit, '1000')).toBe(false);
    expect(statesDefault(SETTINGS.safetyMarginMs, 'Duration.seconds(5)')).toBe(false);
    expect(statesDefault(SETTINGS.feedMode, "'stream'")).toBe(false);
  });

  it("agree with docs/construct.md's table of the props most people set", () => {
    const readme = readFileSync(path.join(REPO_ROOT, 'docs/construct.md'), 'utf8');
    const section = readme.slice(readme.indexOf('| Prop | Default |'));
    const rows = section.slice(0, section.indexOf('\n\n')).split('\n').slice(2);
    let checked = 0;
    for (const row of rows) {
      const [props = '', documented = ''] = row.split(' | ').map((cell) => cell.replace(/^\| /, ''));
      // A cell of props (`a`, `b`) pairs with a cell of their defaults (1 minute, 5 minutes).
      const names = props.split(', ');
      const values = documented.split(', ');
      if (names.length !== values.length || !names.every((name) => /^`[^`]+`$/.test(name))) continue;
      names.forEach((cell, index) => {
        const setting = PROP_SETTINGS.find(([, candidate]) => cell === `\`${candidate.prop!.name}\``)?.[1];
        if (setting?.default === undefined) return;
        expect(statesDefault(setting, values[index]!.replaceAll('`', '')), row).toBe(true);
        checked += 1;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});

describe("the props' types", () => {
  it("take the table's values, as the strings TypeScript apps give or as the enums of every language", () => {
    expectTypeOf<BankingEventsPollerProps['feedMode']>().toEqualTypeOf<FeedMode | FeedModeEnum | undefined>();
    expectTypeOf<BankingEventsPollerProps['streamRecovery']>().toEqualTypeOf<
      StreamRecovery | StreamRecoveryEnum | undefined
    >();
    expectTypeOf<BankingEventsPollerProps['startPosition']>().toEqualTypeOf<
      SettingValue<'startPosition'> | StartPosition | undefined
    >();
    expectTypeOf<BankingEventsPollerProps['eventBusKind']>().toEqualTypeOf<
      SettingValue<'eventBusKind'> | EventBusKind | undefined
    >();
    expectTypeOf<BankingEventsPollerProps['eventGroupBy']>().toEqualTypeOf<
      SettingValue<'eventGroupBy'> | EventGroupBy | undefined
    >();
    expectTypeOf<GapRepairOptions['maxLookups']>().toEqualTypeOf<number | undefined>();
  });

  it.each([
    ['feedMode', FeedModeEnum],
    ['streamRecovery', StreamRecoveryEnum],
    ['eventBusKind', EventBusKind],
    ['eventGroupBy', EventGroupBy],
  ] as const)("%s's enum holds exactly the table's values", (name, values) => {
    const kind = SETTINGS[name].kind as unknown as { readonly values: readonly string[] };
    expect(Object.values(values).sort()).toEqual([...kind.values].sort());
  });

  it("startPosition's enum holds the table's words, each accepted", () => {
    expect(Object.values(StartPosition).sort()).toEqual(['beginning', 'latest']);
    for (const value of Object.values(StartPosition)) {
      expect(resolveSettingProps({ startPosition: value }).startPosition).toBe(value);
    }
  });
});

describe('settingProps', () => {
  it('gives every setting the app and the construct share a prop, in its form', () => {
    const props = settingProps({
      scheduleRateMinutes: 5,
      lagThresholdSeconds: 600,
      safetyMarginMs: 20_000,
      feedMode: 'stream',
      streamLingerMs: 0,
      gapRepairMaxLookups: 7,
      gapRepairGraceSeconds: 60,
      maxPutEventsPerSecond: undefined,
    });

    expect(props.scheduleInterval?.toMinutes()).toBe(5);
    expect(props.lagThreshold?.toSeconds()).toBe(600);
    expect(props.safetyMargin?.toMilliseconds()).toBe(20_000);
    expect(props.streamLinger?.toMilliseconds()).toBe(0);
    expect(props.gapRepair?.maxLookups).toBe(7);
    expect(props.gapRepair?.gracePeriod?.toSeconds()).toBe(60);
    expect(props).not.toHaveProperty('maxPutEventsPerSecond');
  });

  it('leaves the stream settings out in poll mode', () => {
    expect(settingProps({ feedMode: 'poll', streamLingerMs: 0, streamRecovery: 'lookup' })).toEqual({
      feedMode: 'poll',
    });
  });

  it('maps back to the same values, for every setting with a context key and a prop', () => {
    const shared = settingEntries().filter(
      ([, setting]) =>
        setting.context !== undefined && setting.prop !== undefined && !isStructured(setting.kind),
    );
    const values = Object.fromEntries(
      shared.map(([name, setting]) => [name, setting.default ?? setting.context?.default ?? sample(setting)]),
    );

    expect(resolveSettingProps({ ...settingProps({ ...values, feedMode: 'stream' }) })).toMatchObject({
      ...values,
      feedMode: 'stream',
    });
  });
});

/** A value of a setting without a default. */
function sample(setting: Setting): unknown {
  return setting.prop?.name === 'alarmEmail' ? 'oncall@example.com' : (setting.kind as IntegerKind).min;
}

describe('resolveSettingProps', () => {
  it('names the prop, the expected Duration and what it got', () => {
    expect(() => resolveSettingProps({ scheduleInterval: Duration.seconds(90) })).toThrow(
      'BankingEventsPoller: scheduleInterval must be a Duration of whole minutes from 1 to 14; got 1.5 minutes',
    );
    expect(() => resolveSettingProps({ safetyMargin: 10 })).toThrow(
      'BankingEventsPoller: safetyMargin must be a Duration of whole milliseconds from 0 to 600000; got 10',
    );
  });

  it('refuses at synth what the handler would refuse at run time', () => {
    expect(() => resolveSettingProps({ safetyMargin: Duration.minutes(11) })).toThrow(/safetyMargin must be/);
    expect(() => resolveSettingProps({ eventSource: 'aws.banking' })).toThrow(/eventSource must be/);
  });
});
