/**
 * A token endpoint that misbehaves, against the shipped bundle under the Lambda runtime harness:
 * one that never answers (while the run ends early), and one that issues tokens the function must
 * not use (control characters, separators, 9 MiB, a type other than Bearer).
 */
import { PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { AwsFaultProxy } from '../../support/aws-fault-proxy.ts';
import { BankingFaultProxy } from '../../support/banking-fault-proxy.ts';
import { pollerLambda, summaryOf, usePollerScenarios } from '../../support/poller-lambda.ts';
import { closeAll, json, startScriptedServer } from '../../support/scripted-http-server.ts';

const scenarios = usePollerScenarios(3_100);
const started: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const server of started.splice(0).reverse()) await server.close();
  await closeAll();
});

describe('a token request the bank never answers', () => {
  it('is cut short with the run that sent it; the warm next invocation gets a token and publishes everything', async () => {
    const aws = await AwsFaultProxy.start(inject('motoEndpoint'));
    started.push(aws);
    const s = await scenarios.start({ environment: { AWS_ENDPOINT_URL_DYNAMODB: aws.endpoint } });
    const bank = await BankingFaultProxy.start(s.simulator.url);
    started.push(bank);
    const program = s.simulator.programs[0]!;
    await scenarios.aws.secretsManager.send(
      new PutSecretValueCommand({
        SecretId: s.secretId,
        SecretString: JSON.stringify({
          base_url: bank.url,
          client_id: program.clientId,
          client_secret: program.clientSecret,
        }),
      }),
    );
    // The first token request is held, unanswered, for good; the run then fails early (the lease
    // write refused), long before its deadline, with the request still waiting.
    let tokenRequested = (): void => {};
    const tokenArrived = new Promise<void>((resolve) => {
      tokenRequested = resolve;
    });
    let heldClosed: Promise<void> | undefined;
    bank.onRequest((path, request) => {
      if (path !== '/oauth2/token' || heldClosed !== undefined) return;
      heldClosed = new Promise<void>((resolve) => request.socket.once('close', () => resolve()));
      tokenRequested();
      return new Promise<void>(() => {});
    });
    let refused = false;
    aws.intercept(async (call) => {
      if (call.service === 'dynamodb' && call.operation === 'UpdateItem' && !refused) {
        refused = true;
        await tokenArrived;
      }
      return 'forward' as const;
    });
    aws.refuseDynamoDb(1, { operation: 'UpdateItem', status: 400, errorType: 'ValidationException' });
    const events = s.simulator.generate(3);

    const first = await s.invoke();

    expect(first.outcome).toMatchObject({ kind: 'error' });
    // The request did not stay behind in the frozen container, waiting on a signal nobody aborts.
    await heldClosed;

    const second = await s.invoke();

    expect(second.coldStart).toBe(false);
    expect(summaryOf(second)).toMatchObject({ published: 3, checkpoint: events.at(-1)!.sequence_number });
    expect(await s.deliveredIds()).toEqual(events.map((event) => event.id));
  });
});

/** Token responses the function must refuse, each with the field it names. */
const BAD_TOKENS: ReadonlyArray<readonly [string, Record<string, unknown>, 'access_token' | 'token_type']> = [
  [
    'CR LF in access_token',
    { access_token: 'tok3n\r\nX-Injected: yes', token_type: 'Bearer' },
    'access_token',
  ],
  ['NUL in access_token', { access_token: 'tok3n\u0000after-nul', token_type: 'Bearer' }, 'access_token'],
  ['non-Latin access_token', { access_token: 'tok3n-ключ-доступа', token_type: 'Bearer' }, 'access_token'],
  ['spaces, commas, semicolons', { access_token: 'tok3n a,b;c=d', token_type: 'Bearer' }, 'access_token'],
  [
    'a 9 MiB access_token',
    { access_token: 'T'.repeat(9 * 1024 * 1024), token_type: 'Bearer' },
    'access_token',
  ],
  ['token_type mac', { access_token: 'tok3n-of-another-type', token_type: 'mac' }, 'token_type'],
  ['token_type DPoP', { access_token: 'tok3n-of-another-type', token_type: 'DPoP' }, 'token_type'],
];

describe('a token the function must not use', () => {
  it.each(BAD_TOKENS)('%s: refused once by field, never sent, never shown', async (_label, answer, field) => {
    const bank = await startScriptedServer(json(200, { data: [] }), {
      routes: { '/oauth2/token': json(200, { ...answer, expires_in: 3600 }) },
    });
    const secretId = await scenarios.aws.createSecret(
      JSON.stringify({ base_url: bank.baseUrl, client_id: 'client-1', client_secret: 'client-secret-value' }),
    );
    const bus = await scenarios.aws.createRecordedBus();
    const lambda = pollerLambda({
      artifact: inject('pollerArtifact'),
      motoEndpoint: inject('motoEndpoint'),
      secretId,
      checkpointTable: scenarios.checkpointTable,
      eventBusName: bus.busName,
      environment: { DEFAULT_PROGRAM: scenarios.aws.uniqueName('program') },
    });
    started.push(lambda);

    const invocation = await lambda.invoke({});

    expect(invocation.outcome).toMatchObject({ kind: 'error', errorType: 'AuthenticationError' });
    const message = invocation.outcome.kind === 'error' ? invocation.outcome.errorMessage : '';
    expect(message).toContain(`${field} is`);
    // Not retried as a network error: the token endpoint was asked at most twice (ahead of the
    // lease, and by the first poll unless it joined that request), and nothing was sent with the token.
    const urls = bank.requests.map((request) => request.url);
    expect(new Set(urls)).toEqual(new Set(['/oauth2/token']));
    expect(urls.length).toBeLessThanOrEqual(2);
    // One error line for the run, not one per poll.
    expect(lambda.output.match(/"code":"AUTHENTICATION_FAILED"/g) ?? []).toHaveLength(1);
    const token = String(answer.access_token);
    expect(lambda.output).not.toContain(token.slice(0, 12));
    expect(message).not.toContain(token.slice(0, 12));
  });
});
