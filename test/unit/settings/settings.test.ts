import { describe, expect, it } from 'vitest';
import type { Setting } from '../../../functions/settings/setting.ts';
import { SETTINGS, settingEntries } from '../../../functions/settings/settings.ts';
import { type IntegerKind, isStructured } from '../../../functions/settings/value-kinds.ts';

const entries = settingEntries();
const at = (place: 'env' | 'context' | 'prop' | 'cli') =>
  entries.filter(([, setting]) => setting[place] !== undefined);

describe('the settings table', () => {
  it.each(entries.filter(([, setting]) => setting.default !== undefined && !isStructured(setting.kind)))(
    '%s: its default is a value of its own kind',
    (_name, setting) => {
      expect(setting.kind.read(setting.default)).toEqual(setting.default);
      // As an environment variable or a flag carries it: text.
      expect(setting.kind.read(setting.kind.format(setting.default))).toEqual(setting.default);
    },
  );

  it.each(at('context').filter(([, setting]) => setting.context?.kind !== undefined))(
    '%s: the context spells the default in its own form, and reads it back',
    (_name, setting) => {
      const { kind } = setting.context!;

      expect(kind!.read(kind!.format(setting.default))).toBe(setting.default);
    },
  );

  it.each([
    ['env', (setting: Setting) => setting.env?.name],
    ['context', (setting: Setting) => setting.context?.key],
    ['prop', (setting: Setting) => setting.prop?.name],
    ['cli', (setting: Setting) => setting.cli?.flag.split(' ')[0]],
  ] as const)('names each setting differently at %s', (place, nameOf) => {
    const names = at(place).map(([, setting]) => nameOf(setting));

    expect(new Set(names).size).toBe(names.length);
  });

  it.each(at('prop').filter(([, setting]) => setting.prop?.duration))(
    '%s: a Duration prop counts a time unit',
    (_name, setting) => {
      expect((setting.kind as IntegerKind).unit).toBeDefined();
    },
  );

  it('marks every stream setting as applying to stream mode only', () => {
    const streamSettings = entries
      .filter(([, setting]) => setting.env?.name.startsWith('STREAM_'))
      .map(([name]) => name);

    expect(entries.filter(([, setting]) => setting.streamOnly).map(([name]) => name)).toEqual(streamSettings);
  });

  it('spells the interface cursor parameter once, for polls and for the stream', () => {
    expect(SETTINGS.streamCursorParam.default).toBe(SETTINGS.pollCursorParam.default);
    expect(SETTINGS.pollCursorParam.default).toBe('last_sequence_number');
  });

  it('has no variable the handler must be given that the construct does not give it', () => {
    const required = entries.filter(([, setting]) => setting.env?.required);

    for (const [name, setting] of required) expect(setting.env?.deployed, name).toBe('resource');
  });
});
