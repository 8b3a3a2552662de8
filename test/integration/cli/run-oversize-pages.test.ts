/**
 * `run` against a bank that ignores `limit` (65,000 events, about 9 MB, to every poll asking for
 * 100) and a slow bus (each PutEvents answered after 50 ms), the built CLI under a 256 MiB heap
 * (`node --max-old-space-size=256`, through NODE_OPTIONS): it holds what its heap allows, ends by
 * itself at `--duration` with its last checkpoint written, loses nothing, and says what the bank
 * did.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli-process.ts';
import { LimitIgnoringBank } from '../../support/limit-ignoring-bank.ts';
import { SlowEventBus } from '../../support/slow-event-bus.ts';

const opened: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const resource of opened.splice(0).reverse()) await resource.close();
});

describe('run against a bank that ignores limit, under a 256 MiB heap', () => {
  it('ends by itself with its checkpoint written, losing nothing, and says the pages were larger than asked for', async () => {
    const bank = await LimitIgnoringBank.start({ total: 200_000, pageEvents: 65_000 });
    const bus = await SlowEventBus.start({ latencyMs: 50 });
    opened.push(bank, bus);
    const checkpointFile = join(await mkdtemp(join(tmpdir(), 'run-oversize-')), 'checkpoint.json');

    const result = await runCli(
      ['run', '--duration', '6', '--event-bus', 'oversize-bus', '--checkpoint-file', checkpointFile],
      {
        env: {
          NODE_OPTIONS: '--max-old-space-size=256',
          BANKING_BASE_URL: bank.url,
          BANKING_CLIENT_ID: bank.clientId,
          BANKING_CLIENT_SECRET: bank.clientSecret,
          AWS_ENDPOINT_URL_EVENTBRIDGE: bus.endpoint,
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'testing',
          AWS_SECRET_ACCESS_KEY: 'testing',
          AWS_SESSION_TOKEN: undefined,
          AWS_PROFILE: undefined,
        },
      },
    );

    expect(result.code, result.stderr).toBe(0);
    expect(bank.polls[0]).toMatchObject({ limit: 100, answered: 65_000 });
    const { checkpoint } = JSON.parse(await readFile(checkpointFile, 'utf8')) as { checkpoint: number };
    expect(checkpoint).toBeGreaterThan(0);
    expect(result.stderr).toContain(`stopped at checkpoint ${checkpoint}`);
    expect(bus.missingThrough(checkpoint)).toEqual([]);
    expect(result.stderr).toMatch(/"level":"warn"[^\n]*more events than the poll asked for[^\n]*"asked":100/);
    for (const secret of bank.secrets) expect(result.stdout + result.stderr).not.toContain(secret);
  });
});
