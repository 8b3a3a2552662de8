/**
 * Vitest globalSetup for the `integration` project: builds the CLI bundle once per run with the
 * project's own build script, so the CLI tests spawn exactly what `npm ci` gives a user.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export default function setup(): void {
  execFileSync('npm', ['run', '--silent', 'build'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
