/**
 * The operator's clients print AWS errors: one that quotes the signed request (the session token
 * of the operator's credentials) is scrubbed before the CLI sees it.
 */
import { inspect } from 'node:util';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, expect, it, vi } from 'vitest';
import { AwsClients } from '../../../functions/cli/aws-clients.ts';
import { closeAll, json, startScriptedServer } from '../../support/scripted-http-server.ts';

const SESSION_TOKEN = 'IQoJb3BlcmF0b3JFWEFNUExF//token==';

afterEach(async () => {
  vi.unstubAllEnvs();
  await closeAll();
});

it("scrubs a signature error quoting the operator's session token", async () => {
  const server = await startScriptedServer(
    json(
      400,
      {
        __type: 'com.amazon.coral.service#InvalidSignatureException',
        message:
          'The request signature we calculated does not match the signature you provided.\n\n' +
          `The Canonical String for this request should have been\n'POST\n/\n\nx-amz-security-token:${SESSION_TOKEN}\n'`,
      },
      { 'content-type': 'application/x-amz-json-1.0' },
    ),
  );
  vi.stubEnv('AWS_ENDPOINT_URL', server.baseUrl);
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'ASIAOPERATOR');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'operator-secret-key');
  vi.stubEnv('AWS_SESSION_TOKEN', SESSION_TOKEN);
  const clients = new AwsClients({ region: 'eu-west-1' });

  const error = await clients.dynamodb
    .send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }))
    .catch((caught: unknown) => caught);
  clients.destroy();

  expect(error).toMatchObject({ name: 'InvalidSignatureException' });
  expect(`${inspect(error, { depth: 6 })}\n${(error as Error).stack}`).not.toContain(SESSION_TOKEN);
});
