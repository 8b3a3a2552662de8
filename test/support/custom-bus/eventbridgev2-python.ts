/**
 * boto3 with the `eventbridgev2` client, installed into a project-local directory: the machine's own
 * botocore is older (moto pins it), so the conformance test runs its driver with PYTHONPATH at this
 * directory instead. `ensureEventBridgeV2Python()` installs it once (pip, from the configured index);
 * `.ci/run` calls this file directly so CI installs it up front.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The first boto3 release with `eventbridgev2` this project tested against. */
export const BOTO3_VERSION = '1.43.107';
export const EVENTBRIDGEV2_PYTHON_PATH = fileURLToPath(
  new URL('../../../node_modules/.cache/eventbridgev2-python', import.meta.url),
);
const MARKER = `${EVENTBRIDGEV2_PYTHON_PATH}/.installed-boto3`;

export function pythonInterpreter(): string {
  return process.env.EVENTBRIDGEV2_PYTHON ?? process.env.MOTO_PYTHON ?? 'python3';
}

/** Installs boto3 at `BOTO3_VERSION` into `EVENTBRIDGEV2_PYTHON_PATH` unless it is there already. */
export async function ensureEventBridgeV2Python(): Promise<string> {
  if (existsSync(MARKER) && readFileSync(MARKER, 'utf8').trim() === BOTO3_VERSION)
    return EVENTBRIDGEV2_PYTHON_PATH;
  const python = pythonInterpreter();
  const args = [
    '-m',
    'pip',
    'install',
    '--quiet',
    '--disable-pip-version-check',
    '--no-warn-conflicts',
    '--upgrade',
    '--target',
    EVENTBRIDGEV2_PYTHON_PATH,
    `boto3==${BOTO3_VERSION}`,
  ];
  const { code, output } = await run(python, args);
  if (code !== 0) {
    throw new Error(
      `Could not install boto3 ${BOTO3_VERSION} (for its eventbridgev2 client) with '${python} ${args.join(' ')}':\n${output}`,
    );
  }
  writeFileSync(MARKER, `${BOTO3_VERSION}\n`);
  return EVENTBRIDGEV2_PYTHON_PATH;
}

function run(command: string, args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output: output.slice(-4_000) }));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureEventBridgeV2Python().then(
    (path) => console.log(`boto3 ${BOTO3_VERSION} (eventbridgev2) ready at ${path}`),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
