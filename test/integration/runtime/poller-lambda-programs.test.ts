/**
 * The deployed function's programs and secrets, run as Lambda runs it: each program is polled
 * with its own secret only, a checkpoint row is only ever fed by the feed it started with, one
 * invocation per program polls at a time, and a rotated secret is picked up after a 401.
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { describe, expect, inject, it, vi } from 'vitest';
import { startSimulator } from '../../../functions/simulator/banking-simulator.ts';
import {
  emfDocuments,
  pollerLambda,
  simulatorSecret,
  summaryOf,
  usePollerScenarios,
} from '../../support/poller-lambda.ts';

const scenarios = usePollerScenarios(200);
const scenario = scenarios.start;

describe('programs and their secrets, as deployed', () => {
  it('polls each program with its own secret and refuses unknown programs and foreign secrets', async () => {
    const s = await scenario({ simulator: { programs: [{}, {}] } });
    const [first, second] = s.simulator.programs;
    const secondSecret = await scenarios.aws.createSecret(simulatorSecret(s.simulator, 1));
    const container = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: s.secretId,
      checkpointTable: scenarios.checkpointTable,
      eventBusName: s.busName,
      environment: {
        DEFAULT_PROGRAM: s.program,
        PROGRAM_SECRETS: JSON.stringify({ second: secondSecret }),
      },
    });
    try {
      const ofFirst = s.simulator.generate(4, { programId: first!.programId });
      const ofSecond = s.simulator.generate(6, { programId: second!.programId });

      const defaultRun = await container.invoke({ program: s.program });
      const secondRun = await container.invoke({ program: 'second' });
      const unknown = await container.invoke({ program: 'third' });
      const foreign = await container.invoke({ program: s.program, secretId: secondSecret });

      expect(summaryOf(defaultRun)).toMatchObject({ published: 4 });
      expect(summaryOf(secondRun)).toMatchObject({ published: 6 });
      expect(await s.checkpoint()).toBe(ofFirst.at(-1)!.sequence_number);
      expect(await s.checkpoint('second')).toBe(ofSecond.at(-1)!.sequence_number);
      expect(unknown.outcome).toMatchObject({
        kind: 'error',
        errorType: 'ConfigurationError',
        errorMessage: expect.stringContaining(`event.program "third" is not one of this function's programs`),
      });
      expect(foreign.outcome).toMatchObject({
        kind: 'error',
        errorType: 'ConfigurationError',
        errorMessage: expect.stringContaining('event.secretId is not the secret of program'),
      });
      expect((await s.deliveredIds()).sort()).toEqual([...ofFirst, ...ofSecond].map((e) => e.id).sort());
    } finally {
      await container.close();
    }
  });

  it("stops with FEED_PROGRAM_MISMATCH when another program's credentials are put in the secret", async () => {
    // Credentials re-read on every invocation, so the pasted ones take effect at once.
    const s = await scenario({
      simulator: { programs: [{}, {}] },
      environment: { CREDENTIALS_TTL_SECONDS: '0' },
    });
    const [first, second] = s.simulator.programs;
    const published = s.simulator.generate(3, { programId: first!.programId });
    s.simulator.generate(9, { programId: second!.programId });
    expect(summaryOf(await s.invoke()).published).toBe(3);
    await scenarios.aws.secretsManager.send(
      new PutSecretValueCommand({ SecretId: s.secretId, SecretString: simulatorSecret(s.simulator, 1) }),
    );

    const invocation = await s.invoke();

    expect(invocation.outcome).toMatchObject({
      kind: 'error',
      errorType: 'FeedProgramMismatchError',
      errorMessage: expect.stringContaining(
        `returned an event of program_id ${second!.programId} (sequence 4), but this checkpoint belongs to program_id ${first!.programId}`,
      ),
    });
    expect(await s.checkpoint()).toBe(published.at(-1)!.sequence_number);
    expect((await s.item())?.feed_program_id?.S).toBe(first!.programId);
    expect((await s.deliveredIds()).sort()).toEqual(published.map((e) => e.id).sort());
  });

  it('lets one invocation poll a program at a time: one that may not wait finds the lease busy', async () => {
    const s = await scenario({ simulator: { maxPollHoldMs: 60_000 } });
    const rival = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: s.secretId,
      checkpointTable: scenarios.checkpointTable,
      eventBusName: s.busName,
      environment: { DEFAULT_PROGRAM: s.program, LEASE_WAIT_MS: '0' },
    });
    try {
      const first = s.invoke();
      await vi.waitFor(async () => expect((await s.item())?.lease_owner?.S).toBeDefined(), {
        timeout: 4_000,
        interval: 50,
      });

      const second = await rival.invoke({});

      expect(summaryOf(second)).toMatchObject({ status: 'lease-busy', published: 0 });
      expect(emfDocuments(second.stdout)).toContainEqual(expect.objectContaining({ LeaseBusy: 1 }));
      expect(summaryOf(await first)).toMatchObject({ status: 'completed' });
    } finally {
      await rival.close();
    }
  });

  it('an asynchronous invocation delivered twice (one request id) polls once: the lease owner is unique per delivery', async () => {
    const s = await scenario({ simulator: { maxPollHoldMs: 60_000 } });
    const again = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: s.secretId,
      checkpointTable: scenarios.checkpointTable,
      eventBusName: s.busName,
      environment: { DEFAULT_PROGRAM: s.program, LEASE_WAIT_MS: '0' },
    });
    try {
      const first = s.lambda.invoke({}, { requestId: 'delivered-twice' });
      await vi.waitFor(async () => expect((await s.item())?.lease_owner?.S).toBeDefined(), {
        timeout: 4_000,
        interval: 50,
      });
      const holder = (await s.item())?.lease_owner?.S;

      const second = await again.invoke({}, { requestId: 'delivered-twice' });

      expect(holder).toMatch(/^delivered-twice#[0-9a-f]{8}$/);
      expect(summaryOf(second)).toMatchObject({ status: 'lease-busy', published: 0 });
      expect(summaryOf(await first)).toMatchObject({ status: 'completed' });
    } finally {
      await again.close();
    }
  });

  it('hands the lease over: the next tick waits for the run before it and polls on from its checkpoint', async () => {
    const s = await scenario({ simulator: { maxPollHoldMs: 60_000 }, timeoutMs: 6_000 });
    const next = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId: s.secretId,
      checkpointTable: scenarios.checkpointTable,
      eventBusName: s.busName,
      timeoutMs: 8_000,
      // As deployed: wait until the predecessor's lease would expire (its timeout + 5 s).
      environment: { DEFAULT_PROGRAM: s.program, LEASE_WAIT_MS: '11000' },
    });
    try {
      const before = s.simulator.generate(3);
      const current = s.invoke();
      await vi.waitFor(async () => expect((await s.item())?.lease_owner?.S).toBeDefined(), {
        timeout: 4_000,
        interval: 50,
      });
      const successor = next.invoke({});
      expect(summaryOf(await current)).toMatchObject({ status: 'completed', published: 3 });
      const after = s.simulator.generate(4);

      const handedOver = await successor;

      expect(summaryOf(handedOver)).toMatchObject({
        status: 'completed',
        published: 4,
        startCheckpoint: before.at(-1)!.sequence_number,
        checkpoint: after.at(-1)!.sequence_number,
      });
      const [metrics] = emfDocuments(handedOver.stdout);
      expect(metrics).toMatchObject({ HandoverWaitMs: expect.any(Number) });
      expect(metrics).not.toHaveProperty('LeaseBusy');
      expect((await s.deliveredIds()).sort()).toEqual([...before, ...after].map((e) => e.id).sort());
    } finally {
      await next.close();
    }
  });

  it('re-reads a rotated secret after a 401 and continues against the new credentials', async () => {
    const s = await scenario();
    const events = s.simulator.generate(3);
    expect(summaryOf(await s.invoke()).published).toBe(3);
    // The new environment serves the same program: its feed continues the same sequence.
    const rotated = await startSimulator({
      seed: 999,
      maxPollHoldMs: 500,
      unknownTypeRatio: 0,
      programs: [
        {
          programId: s.simulator.programs[0]!.programId,
          clientId: 'rotated-id',
          clientSecret: 'rotated-secret',
        },
      ],
    });
    try {
      rotated.generate(events.length + 4);
      await scenarios.aws.secretsManager.send(
        new PutSecretValueCommand({ SecretId: s.secretId, SecretString: simulatorSecret(rotated) }),
      );
      // The old credentials are still cached (5 min TTL): only the 401 makes the poller re-read.
      s.simulator.faults.revokeTokens();

      const invocation = await s.invoke();

      expect(summaryOf(invocation)).toMatchObject({ published: 4, checkpoint: events.length + 4 });
      expect(rotated.stats.tokensIssued).toBe(1);
      expect(s.lambda.output).not.toContain('rotated-secret');
      expect(rotated.issuedTokens().some((token) => s.lambda.output.includes(token))).toBe(false);
    } finally {
      await rotated.close();
    }
  });
});
