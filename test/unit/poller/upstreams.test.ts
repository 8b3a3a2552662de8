import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import { type FeedReading, Upstreams } from '../../../functions/poller/upstreams.ts';
import { RecordingMetrics } from '../../support/in-memory-ports.ts';

const client = new SecretsManagerClient({ region: 'us-east-1' });
afterAll(() => client.destroy());

const reading: FeedReading = {
  pollLimit: 100,
  pollCursorParam: 'last_sequence_number',
  pollLimitParam: 'limit',
  streamCursorParam: 'last_sequence_number',
  maxPageBytes: 1_000_000,
};

describe('Upstreams', () => {
  it('keeps one upstream per secret and way of reading, reused while the container is warm', () => {
    const upstreams = new Upstreams({
      secretsManager: client,
      credentialsTtlSeconds: 300,
      entryRules: CLASSIC_BUS_ENTRY_RULES,
    });
    const metrics = new RecordingMetrics();

    const first = upstreams.get('bep/Test/cards', reading, metrics);

    expect(upstreams.get('bep/Test/cards', reading, metrics)).toBe(first);
    expect(upstreams.get('bep/Test/cards', { ...reading, pollLimit: 50 }, metrics)).not.toBe(first);
    expect(upstreams.get('bep/Test/cards', { ...reading, maxPageBytes: 500_000 }, metrics)).not.toBe(first);
    expect(upstreams.get('bep/Test/loans', reading, metrics)).not.toBe(first);
    expect(upstreams.all()).toHaveLength(4);
  });

  it('reports to the metrics of the program it serves now', () => {
    const upstreams = new Upstreams({
      secretsManager: client,
      credentialsTtlSeconds: 300,
      entryRules: CLASSIC_BUS_ENTRY_RULES,
    });
    const [cards, other] = [new RecordingMetrics(), new RecordingMetrics()];

    upstreams.get('bep/Test/shared', reading, cards);
    const upstream = upstreams.get('bep/Test/shared', reading, other);

    expect(upstream.metrics).toBe(other);
  });

  it('drops the upstreams used longest ago beyond what it keeps', async () => {
    const upstreams = new Upstreams({
      secretsManager: client,
      credentialsTtlSeconds: 300,
      entryRules: CLASSIC_BUS_ENTRY_RULES,
    });
    const metrics = new RecordingMetrics();
    const [a, b, c] = ['a', 'b', 'c'].map((name) => upstreams.get(`bep/Test/${name}`, reading, metrics));
    upstreams.get('bep/Test/a', reading, metrics);

    await upstreams.trim(2);

    expect(upstreams.all()).toEqual([c, a]);
    expect(upstreams.all()).not.toContain(b);
  });
});
