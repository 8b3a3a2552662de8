/**
 * What the handler's integration tests share: a Lambda context with a real countdown, the
 * simulator's credentials as the secret's JSON, captured stdout/stderr, and a fresh copy of the
 * handler module per test file (its configuration and caches live at module scope).
 */
import type { Context } from 'aws-lambda';
import { vi } from 'vitest';
import type { PollerResult } from '../../functions/poller/handler.ts';
import type { RunningSimulator } from '../simulator/banking-simulator.ts';

export type PollerHandler = (event: unknown, context: Context) => Promise<PollerResult>;

let invocations = 0;

/** A context whose `getRemainingTimeInMillis` counts down from `remainingMs`, with a unique request id. */
export function lambdaContext(remainingMs = 4_000): Context {
  invocations += 1;
  const deadline = Date.now() + remainingMs;
  return {
    awsRequestId: `req-${invocations}-${Date.now()}`,
    functionName: 'banking-events-poller',
    getRemainingTimeInMillis: () => deadline - Date.now(),
  } as unknown as Context;
}

/** The secret value `{"base_url", "client_id", "client_secret"}` for the simulator's first program. */
export function simulatorSecret(simulator: RunningSimulator): string {
  const program = simulator.programs[0]!;
  return JSON.stringify({
    base_url: simulator.url,
    client_id: program.clientId,
    client_secret: program.clientSecret,
  });
}

/**
 * Captures everything written to stdout and stderr (EMF metrics, logs) into the returned array,
 * for assertions, and keeps it out of the test output. `vi.restoreAllMocks()` undoes it.
 */
export function captureOutput(): string[] {
  const written: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
  }
  return written;
}

/** Sets the handler's environment, then imports a fresh copy of the module. */
export async function loadHandler(env: Readonly<Record<string, string>>): Promise<PollerHandler> {
  Object.assign(process.env, { MIN_POLL_WINDOW_MS: '500', ...env });
  vi.resetModules();
  const module = await import('../../functions/poller/handler.ts');
  return module.handler;
}
