/**
 * `doctor`'s results and how they read: one line per check with its verdict and, for a failure,
 * the fix. Pure, so the wording is unit-tested.
 */
import type { CheckResult, CheckVerdict } from '../adapters/banking-http/bank-checks.ts';
import type { Terminal } from './terminal.ts';
import { paint } from './terminal.ts';

export type { CheckResult, CheckVerdict } from '../adapters/banking-http/bank-checks.ts';

const MARKS: Readonly<Record<CheckVerdict, string>> = { ok: '✔', failed: '✖', warning: '!', skipped: '-' };

export function renderReport(results: readonly CheckResult[], terminal: Terminal): string {
  const colors = paint(terminal);
  const color: Readonly<Record<CheckVerdict, (text: string) => string>> = {
    ok: colors.green,
    failed: colors.red,
    warning: colors.yellow,
    skipped: colors.dim,
  };
  const width = Math.max(...results.map((result) => result.check.length));
  const lines = results.map((result) => {
    const line = `${color[result.verdict](MARKS[result.verdict])} ${result.check.padEnd(width)}  ${result.detail}`;
    return result.fix === undefined ? line : `${line}\n  ${' '.repeat(width)}  → ${result.fix}`;
  });
  const failed = results.filter((result) => result.verdict === 'failed').length;
  const warned = results.filter((result) => result.verdict === 'warning').length;
  const summary =
    failed === 0
      ? `All ${results.length - results.filter((r) => r.verdict === 'skipped').length} checks passed${warned ? ` (${warned} warning(s))` : ''}.`
      : `${failed} check(s) failed.`;
  return `${lines.join('\n')}\n\n${summary}\n`;
}

export function failedChecks(results: readonly CheckResult[]): number {
  return results.filter((result) => result.verdict === 'failed').length;
}
