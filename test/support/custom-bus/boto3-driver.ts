/**
 * The conformance test's handle on `boto3_driver.py`: boto3's real `eventbridgev2` client (its
 * serializer, signer, parser and waiters) in a Python child process, called one request at a time.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pythonInterpreter } from './eventbridgev2-python.ts';

const DRIVER = fileURLToPath(new URL('./boto3_driver.py', import.meta.url));

export type Boto3Answer =
  | { readonly ok: Record<string, unknown>; readonly error?: undefined }
  | {
      readonly ok?: undefined;
      readonly error: { readonly code: string; readonly message: string; readonly status: number | null };
    };

export interface Boto3Driver {
  /** botocore's version, as the driver reported it. */
  readonly botocoreVersion: string;
  /** `client.<call>(**args)`; timestamps as `{ $timestamp: seconds }`. */
  call(
    call: string,
    args: Record<string, unknown>,
    client?: 'default' | 'wrong-secret' | 'unvalidated',
  ): Promise<Boto3Answer>;
  /** `client.get_waiter(waiter).wait(**args)`. */
  wait(waiter: string, args: Record<string, unknown>): Promise<Boto3Answer>;
  /** botocore's ParamValidator report per value (empty when valid) against each operation's input or output shape. */
  validate(
    items: readonly { operation: string; kind: 'input' | 'output'; value: unknown }[],
  ): Promise<string[]>;
  close(): Promise<void>;
}

export async function startBoto3Driver(options: {
  endpoint: string;
  region: string;
  pythonPath: string;
}): Promise<Boto3Driver> {
  const child = spawn(pythonInterpreter(), [DRIVER], {
    env: {
      PATH: process.env.PATH ?? '',
      PYTHONPATH: options.pythonPath,
      CUSTOM_BUS_ENDPOINT: options.endpoint,
      AWS_REGION: options.region,
      // Keep a developer's own AWS configuration out of the client.
      AWS_CONFIG_FILE: '/dev/null',
      AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8_000);
  });
  const lines = createInterface({ input: child.stdout });
  const waiting = new Map<number, (answer: Record<string, unknown>) => void>();
  let ready: (version: string) => void;
  let failed: (error: Error) => void;
  const started = new Promise<string>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  lines.on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    if (typeof message.ready === 'string') ready(message.ready);
    else waiting.get(message.id as number)?.(message);
  });
  child.once('close', (code) => {
    const error = new Error(`boto3 driver exited (${code}):\n${stderr}`);
    failed(error);
    for (const [, resolve] of waiting)
      resolve({ error: { code: 'DriverExited', message: error.message, status: null } });
    waiting.clear();
  });
  const botocoreVersion = await started;
  let nextId = 0;
  const send = (request: Record<string, unknown>): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      const id = ++nextId;
      waiting.set(id, (answer) => {
        waiting.delete(id);
        resolve(answer);
      });
      (child as ChildProcessWithoutNullStreams).stdin.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  return {
    botocoreVersion,
    call: async (call, args, client = 'default') =>
      (await send({ call, args, client })) as unknown as Boto3Answer,
    wait: async (waiter, args) => (await send({ waiter, args })) as unknown as Boto3Answer,
    validate: async (items) => (await send({ validate: items })).ok as string[],
    close: async () => {
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
      child.stdin.end();
      await exited;
    },
  };
}
