import { describe, expect, it } from 'vitest';
import { ProgramSettingError } from '../../../functions/core/errors.ts';
import { loadPollerConfig } from '../../../functions/poller/poller-config.ts';
import {
  PER_PROGRAM_SETTINGS,
  parseProgramSettings,
  resolveProgramSettings,
} from '../../../functions/settings/program-settings.ts';
import { SETTINGS, settingEntries } from '../../../functions/settings/settings.ts';

const deployment = loadPollerConfig({
  SECRET_ID: 'arn:secret:a',
  CHECKPOINT_TABLE: 'checkpoints',
  EVENT_BUS_NAME: 'bus',
  POLL_LIMIT: '200',
});

/** The error `action` throws, which must be a `ProgramSettingError`. */
function refusal(action: () => unknown): ProgramSettingError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ProgramSettingError);
    return error as ProgramSettingError;
  }
  throw new Error('accepted');
}

describe('the per-program settings', () => {
  it('are settings the handler reads from its environment, acting within one cycle', () => {
    for (const name of PER_PROGRAM_SETTINGS) {
      expect(SETTINGS[name].env, name).toBeDefined();
    }
    expect(PER_PROGRAM_SETTINGS).toEqual(expect.arrayContaining(['startPosition', 'feedMode', 'pollLimit']));
  });

  it('leave out the resources, the bus, the secrets and the workers', () => {
    const shared = settingEntries()
      .filter(([, setting]) => setting.env?.deployed === 'resource' || setting.customBusOnly)
      .map(([name]) => name);

    expect(shared.length).toBeGreaterThan(3);
    for (const name of [
      ...shared,
      'workerCount',
      'maxConcurrentPrograms',
      'secretsPrefix',
      'programSecrets',
    ]) {
      expect(PER_PROGRAM_SETTINGS, name).not.toContain(name);
    }
  });
});

describe('resolveProgramSettings', () => {
  it("takes the deployment's values where the program has none of its own", () => {
    const values = resolveProgramSettings('cards', {}, deployment);

    expect(values.pollLimit).toBe(200);
    expect(values.feedMode).toBe('poll');
    expect(values.startPosition).toBe('beginning');
  });

  it("takes the program's own values, read by the setting's kind as a variable is", () => {
    const values = resolveProgramSettings(
      'cards',
      { pollLimit: '50', feedMode: 'stream', startPosition: 'latest', gapRepairGraceSeconds: 60 },
      deployment,
    );

    expect(values).toMatchObject({
      pollLimit: 50,
      feedMode: 'stream',
      startPosition: 'latest',
      gapRepairGraceSeconds: 60,
    });
    expect(values.publishConcurrency).toBe(deployment.publishConcurrency);
  });

  it.each<[string, Record<string, string | number | boolean>, string, RegExp]>([
    [
      'a value out of range',
      { pollLimit: 5000 },
      'pollLimit',
      /settings\.pollLimit must be an integer from 1 to 1000, got 5000/,
    ],
    [
      'a word it does not know',
      { feedMode: 'push' },
      'feedMode',
      /settings\.feedMode must be "poll" or "stream"/,
    ],
    [
      'a setting that may not differ per program',
      { eventBus: 'other' },
      'eventBus',
      /not a setting that may differ per program/,
    ],
    [
      'a setting that does not exist',
      { polLimit: 5 },
      'polLimit',
      /not a setting that may differ per program/,
    ],
    [
      'a page size parameter named like the cursor',
      { pollLimitParam: 'last_sequence_number' },
      'pollLimitParam',
      /settings\.pollLimitParam must differ from settings\.pollCursorParam/,
    ],
  ])('refuses %s, naming the program and the setting', (_name, overrides, setting, message) => {
    const error = refusal(() => resolveProgramSettings('cards', overrides, deployment));

    expect(error.context).toMatchObject({ program: 'cards', setting });
    expect(error.message).toMatch(/^Program cards: /);
    expect(error.message).toMatch(message);
  });

  it('shows refused text by its length alone: a record may hold anything in the wrong field', () => {
    const error = refusal(() =>
      resolveProgramSettings('cards', { pollCursorParam: 'hunter2 is my password' }, deployment),
    );

    expect(error.message).toContain('got a text of 22 character(s)');
    expect(error.message).not.toContain('hunter2');
  });
});

describe('parseProgramSettings', () => {
  it('gives the values in their kind’s form, as a writer stores them', () => {
    expect(parseProgramSettings('cards', { pollLimit: '50', startPosition: '1200' })).toEqual({
      pollLimit: 50,
      startPosition: 1200,
    });
  });
});
