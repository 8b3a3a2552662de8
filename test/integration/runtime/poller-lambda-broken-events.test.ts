/**
 * An event that is not JSON at all, between valid ones, on the shipped artifact under the Lambda
 * runtime's rules: the page it is in is read without it, the event is quarantined as text, the
 * checkpoint goes past all of them. A proxy in front of the simulator breaks the event in poll
 * answers only (a lookup of its number still finds the bank's own).
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, it } from 'vitest';
import { BankingFaultProxy } from '../../support/banking-fault-proxy.ts';
import { summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(1_300);
let proxy: BankingFaultProxy | undefined;

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

describe('an event that is not JSON, as deployed', () => {
  it('is quarantined as text while the events around it are published, in poll mode', async () => {
    const s = await scenarios.start({ environment: { FEED_MODE: 'poll' } });
    proxy = await BankingFaultProxy.start(s.simulator.url);
    const program = s.simulator.programs[0]!;
    await scenarios.aws.secretsManager.send(
      new PutSecretValueCommand({
        SecretId: s.secretId,
        SecretString: JSON.stringify({
          base_url: proxy.url,
          client_id: program.clientId,
          client_secret: program.clientSecret,
        }),
      }),
    );
    const events = s.simulator.generate(3);
    proxy.corrupt(events[1]!.sequence_number, 'not-json');

    const invocation = await s.invoke();

    expect(summaryOf(invocation)).toMatchObject({ checkpoint: events[2]!.sequence_number });
    const delivered = (await s.deliveredBodies()).map(
      (body) => JSON.parse(body) as { 'detail-type': string; detail: Record<string, unknown> },
    );
    const quarantined = delivered.filter((event) => event['detail-type'] === 'invalid_event');
    expect(quarantined).toHaveLength(1);
    expect(quarantined[0]!.detail).toMatchObject({
      raw_is_text: true,
      raw: expect.stringContaining(`"id":"${events[1]!.id}"`),
      error: { code: 'PAYLOAD_INVALID', field: 'data[1]' },
    });
    // The two valid events, and the broken one's number as the bank has it (gap repair's lookup).
    expect(
      delivered
        .filter((event) => event['detail-type'] !== 'invalid_event')
        .map((event) => event.detail.id)
        .sort(),
    ).toEqual(events.map((event) => event.id).sort());
    expect(invocation.stdout + invocation.stderr).not.toContain('failed before a response');
  });
});
