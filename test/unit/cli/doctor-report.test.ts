import { describe, expect, it } from 'vitest';
import { renderReport } from '../../../functions/cli/doctor-report.ts';
import type { Terminal } from '../../../functions/cli/terminal.ts';

const plain: Terminal = {
  interactive: false,
  stdoutIsTerminal: false,
  stdinIsTerminal: false,
  color: false,
  out: () => {},
  err: () => {},
};

describe("doctor's report", () => {
  it('gives each check a mark and its detail, a failure its fix, and sums up', () => {
    const text = renderReport(
      [
        {
          check: 'secret (default)',
          verdict: 'failed',
          detail: 'client_id is a placeholder',
          fix: 'banking-events-poller secret set',
        },
        { check: 'event bus', verdict: 'ok', detail: 'banking-events exists' },
        { check: 'alarms', verdict: 'skipped', detail: 'needs --stack' },
      ],
      plain,
    );

    expect(text).toBe(
      [
        '✖ secret (default)  client_id is a placeholder',
        '                    → banking-events-poller secret set',
        '✔ event bus         banking-events exists',
        '- alarms            needs --stack',
        '',
        '1 check(s) failed.',
        '',
      ].join('\n'),
    );
  });

  it('counts only the checks that ran when all passed', () => {
    const text = renderReport(
      [
        { check: 'event bus', verdict: 'ok', detail: 'fine' },
        { check: 'alarms', verdict: 'skipped', detail: 'needs --stack' },
        {
          check: 'GET /events',
          verdict: 'warning',
          detail: 'no answer within 15 s',
          fix: 'an empty feed looks like this',
        },
      ],
      plain,
    );

    expect(text.trim().split('\n').at(-1)).toBe('All 2 checks passed (1 warning(s)).');
  });
});
