/**
 * The runbook "A credential is suspected leaked", as deployed: the bank deactivates the access
 * (the client secret refused, every token revoked) until the operator stores rotated credentials.
 * Meanwhile each run fails with AUTHENTICATION_FAILED after a handful of requests (no retry
 * storm) and the checkpoint stays; after the rotation the next run publishes everything created
 * meanwhile.
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { simulatorSecret, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(1_650);

/** Requests a run makes to the bank while refused: a token request (or a poll), and one more with the secret read again. */
const MAX_REQUESTS_PER_REFUSED_RUN = 2;

describe('while the banking access is deactivated', () => {
  it('fails each run fast with AUTHENTICATION_FAILED, keeps the checkpoint, and catches up after the rotation', async () => {
    const s = await scenarios.start();
    const before = s.simulator.generate(3);
    expect(summaryOf(await s.invoke())).toMatchObject({ published: 3 });
    // The bank deactivates the access: the old secret no longer works, nor any token it gave.
    s.simulator.rotateClientSecret();
    s.simulator.faults.revokeTokens();
    const meanwhile = s.simulator.generate(5);

    const refused = [];
    for (let run = 0; run < 3; run += 1) {
      const seen = s.simulator.requests.length;
      const invocation = await s.invoke();
      refused.push({ invocation, requests: s.simulator.requests.length - seen });
    }
    const checkpointWhileRefused = await s.checkpoint();
    // The operator stores the new credentials (`secret set --verify` writes the same value).
    await scenarios.aws.secretsManager.send(
      new PutSecretValueCommand({ SecretId: s.secretId, SecretString: simulatorSecret(s.simulator) }),
    );
    const recovered = summaryOf(await s.invoke());

    for (const { invocation, requests } of refused) {
      expect(invocation.outcome).toMatchObject({ kind: 'error', errorType: 'AuthenticationError' });
      expect(requests).toBeLessThanOrEqual(MAX_REQUESTS_PER_REFUSED_RUN);
    }
    expect(checkpointWhileRefused).toBe(before.at(-1)!.sequence_number);
    expect(recovered).toMatchObject({ published: 5, checkpoint: meanwhile.at(-1)!.sequence_number });
    expect(await s.deliveredIds()).toEqual([...before, ...meanwhile].map((event) => event.id));
  });
});
