import { describe, expect, it } from 'vitest';
import { formatDuration, formatInstant, formatLag } from '../../../functions/cli/output-format.ts';
import {
  OVERVIEW_COLUMNS,
  overviewRow,
  programStatus,
  statusRows,
} from '../../../functions/cli/program-status.ts';

const NOW = Date.parse('2026-11-22T12:00:00.000Z');

describe('status of a program', () => {
  it('reads a busy row: lease live, lag, last cycle and the last error kept after a success', () => {
    const status = programStatus(
      'cards',
      {
        checkpoint: 1234,
        updatedAt: '2026-11-22T11:59:30.000Z',
        lease: { owner: 'req-7', expiresAt: NOW + 20_000 },
        feedProgramId: 'feed-1',
        openGaps: [
          { from: 1200, to: 1200, seenAt: NOW - 60_000 },
          { from: 1100, to: 1102, seenAt: NOW - 7_200_000, gaveUpAt: NOW - 6_900_000 },
        ],
        newestCreatedDt: '2026-11-22T11:59:28.000Z',
        lastCycle: {
          endedAt: '2026-11-22T11:59:00.000Z',
          outcome: 'completed',
          published: 42,
          lagSeconds: 2.5,
        },
        lastError: {
          code: 'UPSTREAM_HTTP_ERROR',
          message: 'GET /events: HTTP 503',
          at: '2026-11-22T11:00:00.000Z',
        },
      },
      NOW,
    );

    expect(status).toMatchObject({
      checkpoint: 1234,
      lease: { holder: 'req-7', live: true },
      lagSeconds: 2.5,
    });
    expect(Object.fromEntries(statusRows(status, NOW))).toEqual({
      checkpoint: '1234',
      'last moved': '2026-11-22T11:59:30.000Z (30 s ago)',
      lease: 'held: req-7 until 2026-11-22T12:00:20.000Z (in 20 s)',
      lag: '2.5 s',
      'newest event': 'created 2026-11-22T11:59:28.000Z (32 s ago)',
      'last cycle': 'completed, 42 published, ended 2026-11-22T11:59:00.000Z (1 min ago)',
      'last error': 'UPSTREAM_HTTP_ERROR: GET /events: HTTP 503 (2026-11-22T11:00:00.000Z (1 h ago))',
      'skipped numbers':
        '1200 (seen 2026-11-22T11:59:00.000Z (1 min ago), still looked up); ' +
        '1100-1102 (no event by 2026-11-22T10:05:00.000Z (1 h 55 min ago); no longer looked up)',
      'feed program_id': 'feed-1',
    });
  });

  it('reads a program that never ran', () => {
    const status = programStatus(
      'new',
      { checkpoint: null, updatedAt: null, lease: null, feedProgramId: null, openGaps: [] },
      NOW,
    );

    expect(Object.fromEntries(statusRows(status, NOW))).toMatchObject({
      checkpoint: 'none yet (the first run starts at the start position)',
      'last moved': 'never',
      lease: 'free',
      lag: 'unknown (no cycle recorded)',
      'last error': 'none recorded',
      'skipped numbers': 'none',
    });
  });

  it('reads a program whose first run landed on an empty feed: no checkpoint, reading from the beginning', () => {
    const status = programStatus(
      'new',
      {
        checkpoint: null,
        updatedAt: null,
        lease: null,
        feedProgramId: null,
        openGaps: [],
        start: { position: 'latest', appliedAt: '2026-11-22T11:58:00.000Z' },
      },
      NOW,
    );

    expect(status.start).toEqual({ position: 'latest', appliedAt: '2026-11-22T11:58:00.000Z' });
    expect(Object.fromEntries(statusRows(status, NOW)).checkpoint).toBe(
      'none yet (start position latest applied 2026-11-22T11:58:00.000Z (2 min ago): reading from the beginning of the feed)',
    );
  });

  it('names the sequence jumps awaiting a decision, and none once decided', () => {
    const held = { eventId: 'e', fingerprint: 'f'.repeat(64), heldAt: NOW - 60_000 };
    const row = (decisions: ReadonlyArray<'accepted' | 'rejected' | undefined>) =>
      Object.fromEntries(
        statusRows(
          programStatus(
            'cards',
            {
              checkpoint: 5,
              updatedAt: null,
              lease: null,
              feedProgramId: null,
              openGaps: [],
              heldJumps: decisions.map((decision, index) => ({
                ...held,
                sequenceNumber: 2_000_000 + index,
                ...(decision === undefined ? {} : { decision, decidedAt: NOW }),
              })),
            },
            NOW,
          ),
          NOW,
        ),
      )['sequence jumps'];

    expect(row([undefined, 'rejected', undefined])).toBe(
      '2000000, 2000002 held, awaiting a decision (jumps list)',
    );
    expect(row(['accepted'])).toBeUndefined();
  });

  it('formats durations with their two largest units and lag in seconds until a minute', () => {
    expect([
      formatDuration(42_000),
      formatDuration(185_000),
      formatDuration(7_800_000),
      formatDuration(90_000_000),
    ]).toEqual(['42 s', '3 min 5 s', '2 h 10 min', '1 d 1 h']);
    expect([formatLag(0), formatLag(12.34), formatLag(600), formatLag(null)]).toEqual([
      '0 s',
      '12.3 s',
      '10 min',
      'unknown',
    ]);
    expect(formatInstant(null, NOW)).toBe('never');
  });
});

describe("a program's line in the overview of many", () => {
  it('gives each column its value: checkpoint, lag, the last cycle and error by their age, the lease', () => {
    const busy = programStatus(
      'cards',
      {
        checkpoint: 1234,
        updatedAt: '2026-11-22T11:59:30.000Z',
        lease: { owner: 'req-7', expiresAt: NOW - 5_000 },
        feedProgramId: 'feed-1',
        openGaps: [],
        lastCycle: { endedAt: '2026-11-22T11:59:00.000Z', outcome: 'failed', published: 3, lagSeconds: 95 },
        lastError: { code: 'LEASE_LOST', message: 'taken over', at: '2026-11-22T11:59:00.000Z' },
      },
      NOW,
    );
    const idle = programStatus(
      'new',
      { checkpoint: null, updatedAt: null, lease: null, feedProgramId: null, openGaps: [] },
      NOW,
    );

    expect(OVERVIEW_COLUMNS).toEqual(['program', 'checkpoint', 'lag', 'last cycle', 'lease', 'last error']);
    expect(overviewRow(busy, NOW)).toEqual([
      'cards',
      '1234',
      '1 min 35 s',
      'failed, 3 published, 1 min ago',
      'expired',
      'LEASE_LOST, 1 min ago',
    ]);
    expect(overviewRow(idle, NOW)).toEqual(['new', 'none yet', 'unknown', 'none recorded', 'free', 'none']);
  });
});
