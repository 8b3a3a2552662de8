import { describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../../functions/core/errors.ts';
import { loadPollerConfig, resolveInvocationTarget } from '../../../functions/poller/poller-config.ts';

const base = { SECRET_ID: 'arn:secret:a', CHECKPOINT_TABLE: 'checkpoints', EVENT_BUS_NAME: 'bus' };

describe('loadPollerConfig', () => {
  it('applies documented defaults', () => {
    expect(loadPollerConfig(base)).toMatchObject({
      eventSource: 'banking.events',
      defaultProgram: 'default',
      pollLimit: 100,
      cursorParam: 'last_sequence_number',
      limitParam: 'limit',
      safetyMarginMs: 10_000,
      credentialsTtlMs: 300_000,
      publishMaxAttempts: 5,
    });
  });

  it.each(['SECRET_ID', 'CHECKPOINT_TABLE', 'EVENT_BUS_NAME'])('names a missing %s', (variable) => {
    const env: Record<string, string> = { ...base };
    delete env[variable];
    expect(() => loadPollerConfig(env)).toThrow(ConfigurationError);
    expect(() => loadPollerConfig(env)).toThrow(new RegExp(`Environment variable ${variable} is required`));
  });

  it('names a malformed number and its range', () => {
    expect(() => loadPollerConfig({ ...base, POLL_LIMIT: '0' })).toThrow(
      'Environment variable POLL_LIMIT must be an integer from 1 to 1000, got "0"',
    );
    expect(() => loadPollerConfig({ ...base, SAFETY_MARGIN_MS: 'ten' })).toThrow(/SAFETY_MARGIN_MS/);
  });

  it('refuses a cursor parameter name that could inject into the query string', () => {
    expect(() => loadPollerConfig({ ...base, POLL_CURSOR_PARAM: 'a&token=x' })).toThrow(/POLL_CURSOR_PARAM/);
  });
});

describe('resolveInvocationTarget', () => {
  const config = loadPollerConfig({
    ...base,
    ALLOWED_SECRET_IDS: 'arn:secret:b, arn:secret:c',
    DEFAULT_PROGRAM: 'main',
  });

  it('defaults to SECRET_ID and DEFAULT_PROGRAM for an empty event', () => {
    expect(resolveInvocationTarget({}, config)).toEqual({ program: 'main', secretId: 'arn:secret:a' });
  });

  it('takes the program and a granted secret from the schedule payload', () => {
    expect(resolveInvocationTarget({ program: 'card-program', secretId: 'arn:secret:c' }, config)).toEqual({
      program: 'card-program',
      secretId: 'arn:secret:c',
    });
  });

  it('refuses a secret the function was not granted, before any call', () => {
    expect(() => resolveInvocationTarget({ secretId: 'arn:secret:other' }, config)).toThrow(
      /not one of this function's secrets; add it to ALLOWED_SECRET_IDS/,
    );
  });

  it('refuses a program name that is not a safe key', () => {
    expect(() => resolveInvocationTarget({ program: 'a b' }, config)).toThrow(/event\.program must be/);
    expect(() => resolveInvocationTarget({ program: 42 }, config)).toThrow(/event\.program must be/);
  });
});
