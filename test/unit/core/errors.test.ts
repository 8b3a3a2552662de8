import { describe, expect, it } from 'vitest';
import * as errors from '../../../functions/core/errors.ts';
import { ConfigurationError, POLLER_ERRORS, PollerError } from '../../../functions/core/errors.ts';

describe('the poller error family', () => {
  it('lists every exported error class in POLLER_ERRORS, so docs checks see each code', () => {
    const exported = Object.values(errors).filter(
      (value): value is typeof PollerError =>
        typeof value === 'function' && value.prototype instanceof PollerError,
    );

    expect(exported.length).toBeGreaterThan(10);
    expect([...POLLER_ERRORS].sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      exported.sort((a, b) => a.name.localeCompare(b.name)),
    );
  });

  it('gives each class its own stable code', () => {
    const codes = POLLER_ERRORS.map((errorClass) => errorClass.code);

    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^[A-Z]+(_[A-Z]+)*$/);
  });

  it('carries the class code on each instance', () => {
    const error = new ConfigurationError('POLL_LIMIT must be a whole number', { variable: 'POLL_LIMIT' });

    expect(error.code).toBe(ConfigurationError.code);
    expect(error.name).toBe('ConfigurationError');
  });
});
