/**
 * A bank that echoes the credentials back escaped, against the shipped bundle run as Lambda runs
 * it: the client secret in a 401 from the token endpoint (`\/` for `/`), the bearer token in a
 * 500 from `/events` (lower-case percent-encoding, `\uXXXX`, cut short). Neither the invocation's
 * error nor any line the function wrote may show either, in any encoding or by a prefix of 8+.
 */
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import type { LambdaContainer } from '../../support/lambda-runtime/lambda-container.ts';
import { pollerLambda } from '../../support/poller-lambda.ts';
import { closeAll, json, type Responder, startScriptedServer } from '../../support/scripted-http-server.ts';
import { ENCODINGS, leaks } from '../../support/secret-encodings.ts';

const SECRET = 's3cr3t/with+plus=and/slash';
const TOKEN = 'tok/3n+V4lue/with/slashes==';

let aws: MotoEnvironment;
let checkpointTable: string;
const running: LambdaContainer[] = [];

beforeAll(async () => {
  aws = useMotoEnvironment(inject('motoEndpoint'));
  checkpointTable = await aws.createCheckpointTable();
});
afterEach(async () => {
  for (const lambda of running.splice(0)) await lambda.close();
  await closeAll();
});
afterAll(() => aws?.restore());

/** A JSON error body of `detail` alone (as in the issue), carrying `echoed` as the bank wrote it (already escaped). */
function echoing(
  status: number,
  echoed: (request: { body: string; authorization: string }) => string,
): Responder {
  return (request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    const seen = { body: request.body, authorization: String(request.headers.authorization ?? '') };
    response.end(`{"detail":"you sent ${echoed(seen)}"}`);
  };
}

async function invokeAgainst(eventsAnswer: Responder, tokenAnswer: Responder) {
  const bank = await startScriptedServer(eventsAnswer, { routes: { '/oauth2/token': tokenAnswer } });
  const secretId = await aws.createSecret(
    JSON.stringify({ base_url: bank.baseUrl, client_id: 'client-1', client_secret: SECRET }),
  );
  const bus = await aws.createRecordedBus();
  const lambda = pollerLambda({
    artifact: inject('pollerArtifact'),
    motoEndpoint: inject('motoEndpoint'),
    secretId,
    checkpointTable,
    eventBusName: bus.busName,
    environment: { DEFAULT_PROGRAM: aws.uniqueName('program') },
  });
  running.push(lambda);
  const invocation = await lambda.invoke({});
  return { invocation, output: lambda.output, bank };
}

describe('the shipped function against a bank that echoes credentials escaped', () => {
  it('401 from the token endpoint echoing the client secret with \\/: AuthenticationError, nothing shown', async () => {
    const tokenAnswer = echoing(401, ({ body }) =>
      ENCODINGS['JSON-escaped with \\/']!(new URLSearchParams(body).get('client_secret') ?? ''),
    );

    const { invocation, output } = await invokeAgainst(json(200, { data: [] }), tokenAnswer);

    expect(invocation.outcome).toMatchObject({ kind: 'error', errorType: 'AuthenticationError' });
    const message = invocation.outcome.kind === 'error' ? invocation.outcome.errorMessage : '';
    expect(message).toContain('you sent [redacted]');
    expect(leaks(`${message}\n${output}`, [SECRET])).toEqual([]);
  });

  it.each([
    ['lower-case percent-encoding', ENCODINGS['percent-encoded, lower case']!],
    ['\\uXXXX escapes', ENCODINGS['\\uXXXX for every character']!],
    ['cut short', (text: string) => text.slice(0, 14)],
  ])('500 from /events echoing the bearer token (%s): nothing shown in any line', async (_label, encode) => {
    const eventsAnswer = echoing(500, ({ authorization }) => encode(authorization.replace(/^Bearer /, '')));
    const tokenAnswer = json(200, { access_token: TOKEN, expires_in: 3600 });

    const { invocation, output, bank } = await invokeAgainst(eventsAnswer, tokenAnswer);

    // The function polled and got the echo: the failure went through the error path under test.
    expect(bank.requests.some((request) => request.url.startsWith('/events'))).toBe(true);
    expect(output).toContain('you sent [redacted]');
    const message = invocation.outcome.kind === 'error' ? invocation.outcome.errorMessage : '';
    expect(leaks(`${message}\n${output}`, [TOKEN, SECRET])).toEqual([]);
  });
});
