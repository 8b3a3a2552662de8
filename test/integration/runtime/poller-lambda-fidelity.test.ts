/**
 * Events reach the bus exactly as the bank sent them, run as Lambda runs it: the Detail of every
 * PutEvents entry (recorded by a proxy in front of moto, so byte for byte what EventBridge gets)
 * is compared as text with the bank's own; late and re-sent events; a rotated secret found out
 * only when the old token expires on its own.
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { AwsFaultProxy } from '../../support/aws-fault-proxy.ts';
import { emfDocuments, simulatorSecret, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(300);
let proxy: AwsFaultProxy;

beforeAll(async () => {
  proxy = await AwsFaultProxy.start(inject('motoEndpoint'));
});

afterAll(() => proxy?.close());

/** Values a JSON round trip through JavaScript numbers or a re-serializer would change. */
const STRESS_DATA = [
  '{"transaction_id":"tx-1","amount":9007199254740993,"status":"COMPLETE","type":"card"}',
  '{"transaction_id":"tx-2","amount":9223372036854775807,"network_fee":0.00040000,"type":"fee"}',
  '{"transaction_id":"tx-3","amount":1250,"network_fee":12.50,"rate":1.0E-7,"ratio":-0.0,"type":"intra"}',
  '{"transaction_id":"tx-4","note":"Caf\\u00e9 \\"Zürich\\" \\\\ \\n 😀","memo":"日本語","type":"inbound"}',
  '{"transaction_id":"tx-5","note":null,"card_id":null,"extra":{},"list":[],"undocumented":{"deep":[1.10,{"x":"y"}]}}',
];

describe('payload fidelity, as deployed', () => {
  it('puts on the bus the text the bank sent, with only sequence_number and type normalized', async () => {
    const s = await scenarios.start({ environment: { AWS_ENDPOINT_URL_EVENTBRIDGE: proxy.endpoint } });
    const events = STRESS_DATA.map((dataText) => s.simulator.append({ type: 'TRANSACTION', dataText }));

    const summary = summaryOf(await s.invoke());

    expect(summary.published).toBe(events.length);
    const sent = new Map(
      proxy.sentEntries
        .filter((entry) => entry.Detail?.includes(`"program_id":"${events[0]!.program_id}"`))
        .map((entry) => [JSON.parse(entry.Detail!).id as string, entry.Detail]),
    );
    events.forEach((event, index) => {
      expect(sent.get(event.id)).toBe(
        `{"id":"${event.id}","program_id":"${event.program_id}","sequence_number":${event.sequence_number},` +
          `"created_dt":"${event.created_dt}","type":"transaction","data":${STRESS_DATA[index]}}`,
      );
    });
    // Past EventBridge (moto re-serializes the detail with Python's json), the integers survive too.
    const bodies = await s.deliveredBodies();
    expect(bodies.some((body) => /"amount": 9007199254740993\b/.test(body))).toBe(true);
    expect(bodies.some((body) => /"amount": 9223372036854775807\b/.test(body))).toBe(true);
  });

  it('publishes an event filled late into a gap it recorded, and only that', async () => {
    const s = await scenarios.start();
    const before = s.simulator.generate(3);
    const gap = s.simulator.skip(2);
    const after = s.simulator.generate(2);
    const first = summaryOf(await s.invoke());
    expect(first.published).toBe(5);
    expect(await s.deliveredIds()).toEqual([...before, ...after].map((event) => event.id));

    const late = s.simulator.fill(gap.from, { type: 'TRANSACTION', data: { transaction_id: 'late' } });
    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 1, checkpoint: after.at(-1)!.sequence_number });
    expect(await s.deliveredIds()).toEqual([late.id]);
    expect(emfDocuments(invocation.stdout)).toContainEqual(expect.objectContaining({ LateEvents: 1 }));
    expect(JSON.parse((await s.item())!.open_gaps!.S!)).toEqual([
      { from: gap.to, to: gap.to, seenAt: expect.any(Number) },
    ]);
  });

  it('counts an event sent again and does not publish it again', async () => {
    const s = await scenarios.start();
    const events = s.simulator.generate(3);
    expect(summaryOf(await s.invoke()).published).toBe(3);
    await s.deliveredIds();
    s.simulator.resend(events[1]!.sequence_number);

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 0, checkpoint: 3 });
    expect(emfDocuments(invocation.stdout)).toContainEqual(expect.objectContaining({ LateEvents: 1 }));
    expect(await s.deliveredIds()).toEqual([]);
  });

  it('recovers within one invocation when a rotated secret is found out by the token endpoint itself', async () => {
    // Tokens live 2 s: the poller renews its token on its own, with the cached credentials.
    const s = await scenarios.start({ simulator: { tokenLifetimeSeconds: 2 } });
    s.simulator.generate(2);
    expect(summaryOf(await s.invoke()).published).toBe(2);
    s.simulator.rotateClientSecret();
    await scenarios.aws.secretsManager.send(
      new PutSecretValueCommand({ SecretId: s.secretId, SecretString: simulatorSecret(s.simulator) }),
    );
    const later = s.simulator.generate(3);

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ published: 3, checkpoint: later.at(-1)!.sequence_number });
    expect(s.simulator.requests.some((r) => r.path === '/oauth2/token' && r.status === 401)).toBe(true);
  });
});
