import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { deadLocalOwnerPid, localInvocationId } from '../../../functions/cli/local-lease-owner.ts';

const gone = (): boolean => false;
const alive = (): boolean => true;

describe('deadLocalOwnerPid', () => {
  it('names the process of a CLI run on this host that no longer exists', () => {
    expect(deadLocalOwnerPid(`${localInvocationId(4242)}#0a1b2c3d`, gone)).toBe(4242);
  });

  it('leaves alone a lease of a process that still runs', () => {
    expect(deadLocalOwnerPid(`${localInvocationId(4242)}#0a1b2c3d`, alive)).toBeUndefined();
  });

  it('leaves alone a lease of another host, a Lambda request, or its own process', () => {
    expect(deadLocalOwnerPid(`cli-not-${hostname()}-4242#0a1b2c3d`, gone)).toBeUndefined();
    expect(deadLocalOwnerPid('6c1f2e4a-1b2c-4d5e-8f90-a1b2c3d4e5f6#3f9c2b1d', gone)).toBeUndefined();
    expect(deadLocalOwnerPid(`${localInvocationId()}#0a1b2c3d`, gone)).toBeUndefined();
    expect(deadLocalOwnerPid(`${localInvocationId(4242)}-extra#0a1b2c3d`, gone)).toBeUndefined();
  });

  it('sees this very test process as alive', () => {
    // The real existence check, on a pid that exists (the parent) and one that cannot (beyond pid_max).
    expect(deadLocalOwnerPid(`${localInvocationId(process.ppid)}#0a1b2c3d`)).toBeUndefined();
    expect(deadLocalOwnerPid(`${localInvocationId(2 ** 22 + 1)}#0a1b2c3d`)).toBe(2 ** 22 + 1);
  });
});
