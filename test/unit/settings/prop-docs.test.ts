/**
 * A construct prop that is a setting is described twice: by its TypeDoc in
 * `infra/constructs/poller-props.ts` (the construct's API reference) and by the setting's `doc` in
 * `functions/settings/settings.ts` (docs/configuration.md). Neither may state another bound or
 * unit than the setting's kind, nor name another setting's variable. (Their `@default`s are
 * checked against the table by `test/infra/constructs/setting-props.test.ts`.) Facts only: the
 * numbers of "1 to 1000", "at least 1 minute", "at most 24 hours", and the unit of "whole seconds".
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import type { Setting } from '../../../functions/settings/setting.ts';
import { SETTINGS, settingEntries } from '../../../functions/settings/settings.ts';
import type { IntegerKind, TimeUnit } from '../../../functions/settings/value-kinds.ts';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PROPS_FILE = path.join(REPO_ROOT, 'infra/constructs/poller-props.ts');

/** The TypeDoc text (tags left out) of every member of the props interfaces, by prop path. */
function propDocs(): Map<string, string> {
  const source = ts.createSourceFile(
    PROPS_FILE,
    readFileSync(PROPS_FILE, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const interfaces = new Map<string, ts.InterfaceDeclaration>();
  source.forEachChild((node) => {
    if (ts.isInterfaceDeclaration(node)) interfaces.set(node.name.text, node);
  });
  const docs = new Map<string, string>();
  const visit = (declaration: ts.InterfaceDeclaration, prefix: string) => {
    for (const member of declaration.members) {
      if (!ts.isPropertySignature(member) || !ts.isIdentifier(member.name)) continue;
      const name = `${prefix}${member.name.text}`;
      const text = ts
        .getJSDocCommentsAndTags(member)
        .filter(ts.isJSDoc)
        .map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '')
        .join(' ');
      docs.set(name, text.replace(/\s+/g, ' '));
      const nested = member.type?.getText(source);
      if (nested !== undefined && interfaces.has(nested)) visit(interfaces.get(nested)!, `${name}.`);
    }
  };
  visit(interfaces.get('BankingEventsPollerProps')!, '');
  return docs;
}

const UNIT_MS: Readonly<Record<string, number>> = {
  millisecond: 1,
  second: 1_000,
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};
const SETTING_UNIT_MS: Readonly<Record<TimeUnit, number>> = {
  milliseconds: 1,
  seconds: 1_000,
  minutes: 60_000,
  days: 86_400_000,
};
const AMOUNT = String.raw`(\d[\d,_]*)`;
const UNIT = String.raw`(?:\s*(milliseconds?|seconds?|minutes?|hours?|days?)\b)?`;

interface StatedBounds {
  readonly min: number[];
  readonly max: number[];
  /** The unit of "whole seconds". */
  readonly units: TimeUnit[];
}

/** The bounds and the unit `text` states, in the setting's own unit. */
function statedBounds(text: string, unit: TimeUnit | undefined): StatedBounds {
  const inSettingUnit = (amount: string, spoken: string | undefined): number => {
    const value = Number(amount.replaceAll(/[,_]/g, ''));
    if (spoken === undefined || unit === undefined) return value;
    return (value * UNIT_MS[spoken.replace(/s$/, '')]!) / SETTING_UNIT_MS[unit];
  };
  const min: number[] = [];
  const max: number[] = [];
  for (const [, from, fromUnit, to, toUnit] of text.matchAll(
    new RegExp(`${AMOUNT}${UNIT} to ${AMOUNT}${UNIT}`, 'g'),
  )) {
    // "0 to 24 hours": the unit said once, after the second number, holds for both.
    min.push(inSettingUnit(from!, fromUnit ?? toUnit));
    max.push(inSettingUnit(to!, toUnit));
  }
  for (const [, amount, spoken] of text.matchAll(new RegExp(`at least ${AMOUNT}${UNIT}`, 'g'))) {
    min.push(inSettingUnit(amount!, spoken));
  }
  for (const [, amount, spoken] of text.matchAll(new RegExp(`at most ${AMOUNT}${UNIT}`, 'g'))) {
    max.push(inSettingUnit(amount!, spoken));
  }
  const units = [...text.matchAll(/whole (milliseconds|seconds|minutes|days)\b/gi)].map(
    ([, spoken]) => spoken!.toLowerCase() as TimeUnit,
  );
  return { min, max, units };
}

/** What `text` says of `setting` that its kind does not: a bound, a unit, another setting's variable. */
function disagreements(setting: Setting, text: string): string[] {
  const kind = setting.kind as Partial<IntegerKind>;
  const problems: string[] = [];
  if (kind.min !== undefined) {
    const stated = statedBounds(text, kind.unit);
    for (const min of stated.min) if (min !== kind.min) problems.push(`minimum ${min}, not ${kind.min}`);
    for (const max of stated.max) if (max !== kind.max) problems.push(`maximum ${max}, not ${kind.max}`);
    for (const unit of stated.units) if (unit !== kind.unit) problems.push(`whole ${unit}, not ${kind.unit}`);
  }
  const variables = settingEntries().flatMap(([, other]) => (other.env ? [other.env.name] : []));
  for (const [, named] of text.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) {
    if (variables.includes(named!) && named !== setting.env?.name) problems.push(`names ${named}`);
  }
  return problems;
}

const PROP_SETTINGS = settingEntries().filter(([, setting]) => setting.prop !== undefined);

describe("the props' descriptions and the settings' docs", () => {
  const docs = propDocs();

  it('are read for every prop that is a setting', () => {
    expect(PROP_SETTINGS.filter(([, setting]) => !docs.has(setting.prop!.name))).toEqual([]);
    expect(PROP_SETTINGS.length).toBeGreaterThan(20);
  });

  it.each(PROP_SETTINGS.map(([name, setting]) => [setting.prop!.name, name, setting] as const))(
    'prop %s says what setting %s is: the same bounds and unit, its own variable',
    (prop, _name, setting) => {
      expect(disagreements(setting, docs.get(prop)!), `poller-props.ts: ${prop}`).toEqual([]);
      expect(disagreements(setting, setting.doc), `settings.ts: doc of ${prop}`).toEqual([]);
    },
  );

  it('state bounds where a reader needs them: every bounded whole-number prop but a few', () => {
    const stating = PROP_SETTINGS.filter(([, setting]) => {
      const kind = setting.kind as Partial<IntegerKind>;
      if (kind.min === undefined) return false;
      const stated = statedBounds(docs.get(setting.prop!.name)!, kind.unit);
      return stated.min.length + stated.max.length > 0;
    });
    expect(stating.length).toBeGreaterThanOrEqual(9);
  });

  it('would catch another bound, another unit, or another setting named', () => {
    expect(
      disagreements(SETTINGS.pollLimit, 'Events asked for per poll request (`POLL_LIMIT`), 1 to 1000.'),
    ).toEqual([]);
    expect(disagreements(SETTINGS.pollLimit, 'Events per poll request, 1 to 500.')).toEqual([
      'maximum 500, not 1000',
    ]);
    expect(disagreements(SETTINGS.startClockSkewAllowanceSeconds, '0 to 24 hours, whole seconds.')).toEqual(
      [],
    );
    expect(disagreements(SETTINGS.startClockSkewAllowanceSeconds, '0 to 12 hours, whole minutes.')).toEqual([
      'maximum 43200, not 86400',
      'whole minutes, not seconds',
    ]);
    expect(disagreements(SETTINGS.lagThresholdSeconds, '(at least 2 minutes)')).toEqual([
      'minimum 120, not 60',
    ]);
    expect(disagreements(SETTINGS.pollLimit, 'Events per poll request (`POLL_LIMIT_PARAM`)')).toEqual([
      'names POLL_LIMIT_PARAM',
    ]);
  });
});
