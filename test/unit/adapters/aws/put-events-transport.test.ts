/**
 * PutEvents signed by hand, against a scripted loopback server: the request on the wire (body,
 * headers, a signature the AWS SDK's signer agrees with, the session token), where it goes
 * (endpoint overrides, the region's endpoint), and how each kind of answer is classified by the
 * publisher, as before (throttling, 5xx and resets retryable; a denied role or a missing bus a
 * configuration error; a refusal for size marked for the claim check; per-entry failures).
 */
import { inspect } from 'node:util';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBridgePublisher } from '../../../../functions/adapters/aws/eventbridge-publisher.ts';
import { SignedPutEvents } from '../../../../functions/adapters/aws/put-events-transport.ts';
import { ConfigurationError, PublishError } from '../../../../functions/core/errors.ts';
import { makeEvent } from '../../../support/in-memory-ports.ts';
import {
  closeAll,
  json,
  type Responder,
  startScriptedServer,
} from '../../../support/scripted-http-server.ts';
import { leaks } from '../../../support/secret-encodings.ts';
import { referenceSignature } from '../../../support/sigv4-reference.ts';

const CREDENTIALS = {
  accessKeyId: 'ASIAEXAMPLEKEY',
  secretAccessKey: 'example/secret+key',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token==',
};

afterEach(closeAll);

function client(endpoint: string, region = 'eu-west-1'): EventBridgeClient {
  return new EventBridgeClient({ endpoint, region, credentials: CREDENTIALS });
}

const accepted: Responder = (request, response) => {
  const count = (JSON.parse(request.body) as { Entries: unknown[] }).Entries.length;
  response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': 'req-1' });
  response.end(
    JSON.stringify({
      FailedEntryCount: 0,
      Entries: Array.from({ length: count }, (_, i) => ({ EventId: `e${i}` })),
    }),
  );
};

function publisherFor(endpoint: string): EventBridgePublisher {
  return new EventBridgePublisher({
    client: client(endpoint),
    eventBusName: 'bank-bus',
    source: 'banking.events',
  });
}

const events = [
  makeEvent(7, { created_dt: '2026-11-24T10:00:00.250Z' }),
  makeEvent(8, { type: 'account_status', created_dt: '2026-11-24T10:00:01.000Z' }),
];

describe('PutEvents signed by hand', () => {
  it('sends the JSON 1.1 request the SDK sends, signed as the SDK signs it, with the session token', async () => {
    const server = await startScriptedServer(accepted);

    const outcomes = await publisherFor(server.baseUrl).send(events, new AbortController().signal);

    const [request] = server.requests;
    expect(outcomes).toEqual([{ ok: true }, { ok: true }]);
    expect(request).toMatchObject({ method: 'POST', url: '/' });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'AWSEvents.PutEvents',
      'x-amz-security-token': CREDENTIALS.sessionToken,
    });
    expect(JSON.parse(request!.body)).toEqual({
      Entries: [
        {
          Source: 'banking.events',
          DetailType: 'transaction',
          Detail: events[0]!.detail,
          Time: Date.parse('2026-11-24T10:00:00.250Z') / 1000,
          EventBusName: 'bank-bus',
        },
        {
          Source: 'banking.events',
          DetailType: 'account_status',
          Detail: events[1]!.detail,
          Time: Date.parse('2026-11-24T10:00:01.000Z') / 1000,
          EventBusName: 'bank-bus',
        },
      ],
    });
    const amzDate = String(request!.headers['x-amz-date']);
    const reference = await referenceSignature({
      host: String(request!.headers.host),
      body: request!.body,
      headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': 'AWSEvents.PutEvents' },
      service: 'events',
      region: 'eu-west-1',
      credentials: CREDENTIALS,
      now: Date.parse(
        amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'),
      ),
    });
    expect(request!.headers.authorization).toBe(reference.authorization);
  });

  it('reports each entry EventBridge rejected, in request order', async () => {
    const server = await startScriptedServer(
      json(200, {
        FailedEntryCount: 1,
        Entries: [{ EventId: 'e0' }, { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' }],
      }),
    );

    const outcomes = await publisherFor(server.baseUrl).send(events, new AbortController().signal);

    expect(outcomes).toEqual([
      { ok: true },
      { ok: false, failure: 'transient', errorCode: 'InternalFailure', errorMessage: 'try again' },
    ]);
  });

  it.each([
    [
      'throttling',
      json(400, { __type: 'ThrottlingException', message: 'Rate exceeded' }),
      'ThrottlingException',
      'throttled',
    ],
    [
      'a server error',
      json(500, { __type: 'InternalException', message: 'oops' }),
      'InternalException',
      'transient',
    ],
    ['a 503 that is not JSON', json(503, '<html>busy</html>'), 'InternalFailure', 'transient'],
    [
      'a bad request',
      json(400, { __type: 'com.amazon.coral#InvalidRequest', message: 'no' }),
      'InvalidRequest',
      'rejected',
    ],
  ] as const)(
    "wraps %s as a PublishError named as the SDK names it, classified in the core's words",
    async (_case, answer, awsError, failure) => {
      const server = await startScriptedServer(answer);

      const error = await publisherFor(server.baseUrl)
        .send(events, new AbortController().signal)
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).failure).toBe(failure);
      expect((error as PublishError).context).toMatchObject({
        awsError,
        entries: 2,
        firstSequenceNumber: 7,
      });
    },
  );

  it('turns a denied role and a missing bus into configuration errors naming the bus', async () => {
    const server = await startScriptedServer([
      json(400, { __type: 'AccessDeniedException', message: 'not authorized' }),
      json(400, { __type: 'ResourceNotFoundException', message: 'Event bus bank-bus does not exist.' }),
    ]);
    const publisher = publisherFor(server.baseUrl);

    const denied = await publisher
      .send(events, new AbortController().signal)
      .catch((caught: unknown) => caught);
    const missing = await publisher
      .send(events, new AbortController().signal)
      .catch((caught: unknown) => caught);

    expect(denied).toBeInstanceOf(ConfigurationError);
    expect((denied as Error).message).toContain('events:PutEvents');
    expect(missing).toBeInstanceOf(ConfigurationError);
    expect((missing as Error).message).toContain('bank-bus');
  });

  it('names an error as the SDK does: the error-type header first, else the body, JSON or XML', async () => {
    const server = await startScriptedServer([
      json(403, { message: 'expired' }, { 'x-amzn-errortype': 'ExpiredTokenException:http://internal/' }),
      json(400, { code: 'ThrottlingException', message: 'slow down' }),
      (_request, response) => {
        response.writeHead(403, { 'content-type': 'text/xml' });
        response.end(
          '<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code><Message>bad signature</Message></Error></ErrorResponse>',
        );
      },
    ]);
    const publisher = publisherFor(server.baseUrl);
    const failure = async () => {
      const caught = await publisher
        .send(events, new AbortController().signal)
        .catch((error: unknown) => error);
      expect(caught).toBeInstanceOf(PublishError);
      return caught as PublishError;
    };

    const [expired, throttled, unsigned] = [await failure(), await failure(), await failure()];

    expect(expired.context).toMatchObject({ awsError: 'ExpiredTokenException', status: 403 });
    expect(expired.failure).toBe('rejected');
    expect(throttled.context).toMatchObject({ awsError: 'ThrottlingException' });
    expect(throttled.failure).toBe('throttled');
    expect(unsigned.context).toMatchObject({ awsError: 'SignatureDoesNotMatch', status: 403 });
    expect(unsigned.failure).toBe('rejected');
  });

  it('keeps the session token out of a signature error that quotes the canonical request', async () => {
    const server = await startScriptedServer(
      json(403, {
        __type: 'InvalidSignatureException',
        message:
          'The request signature we calculated does not match the signature you provided.\n\n' +
          `The Canonical String for this request should have been\n'POST\n/\n\nx-amz-security-token:${CREDENTIALS.sessionToken}\n'`,
      }),
    );

    const caught = await publisherFor(server.baseUrl)
      .send(events, new AbortController().signal)
      .catch((failure: unknown) => failure);

    expect(caught).toBeInstanceOf(PublishError);
    const error = caught as PublishError;
    expect((error.cause as Error).message).toBe(
      'The request signature we calculated does not match the signature you provided.',
    );
    expect(
      JSON.stringify({
        message: error.message,
        cause: (error.cause as Error).message,
        context: error.context,
      }),
    ).not.toContain(CREDENTIALS.sessionToken);
  });

  it('keeps the credentials out when AWS echoes them escaped, cut short, or in place of an error name', async () => {
    const escaped = JSON.stringify(CREDENTIALS.sessionToken).slice(1, -1).replaceAll('/', '\\/');
    const server = await startScriptedServer((_request, response) => {
      response.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      response.end(
        `{"__type":"${CREDENTIALS.sessionToken}","message":"token ${escaped} key ` +
          `${encodeURIComponent(CREDENTIALS.secretAccessKey).toLowerCase()} start ${CREDENTIALS.sessionToken.slice(0, 12)}"}`,
      );
    });

    const caught = await publisherFor(server.baseUrl)
      .send(events, new AbortController().signal)
      .catch((failure: unknown) => failure);

    expect(caught).toBeInstanceOf(PublishError);
    const error = caught as PublishError;
    const shown = inspect(error, { depth: 5 }) + JSON.stringify(error.context);
    expect(leaks(shown, [CREDENTIALS.sessionToken, CREDENTIALS.secretAccessKey])).toEqual([]);
    expect((error.cause as Error).message).toBe('token [redacted] key [redacted] start [redacted]');
    expect(error.context).toMatchObject({ awsError: 'Http400' });
  });

  it('marks a refusal for its size for the claim check', async () => {
    const server = await startScriptedServer(
      json(400, {
        __type: 'ValidationException',
        message: 'Total size of the entries in the request is over the limit.',
      }),
    );

    const error = await publisherFor(server.baseUrl)
      .send(events, new AbortController().signal)
      .catch((caught: unknown) => caught);

    expect((error as PublishError).failure).toBe('too-large');
  });

  it('wraps a connection reset as a retryable PublishError', async () => {
    const server = await startScriptedServer((_request, response) => {
      response.socket?.destroy();
    });

    const error = await publisherFor(server.baseUrl)
      .send(events, new AbortController().signal)
      .catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(PublishError);
    expect((error as PublishError).failure).toBe('transient');
  });

  it('goes where the SDK would: the configured endpoint variable, else the region endpoint', async () => {
    const server = await startScriptedServer(accepted);
    const previous = { ...process.env };
    Object.assign(process.env, {
      AWS_ENDPOINT_URL: 'http://127.0.0.1:1',
      AWS_ENDPOINT_URL_EVENTBRIDGE: server.baseUrl,
    });
    try {
      const viaVariable = new SignedPutEvents({
        client: new EventBridgeClient({ region: 'eu-west-1', credentials: CREDENTIALS }),
      });
      await viaVariable.putEvents([entry()], new AbortController().signal);
      delete process.env.AWS_ENDPOINT_URL;
      delete process.env.AWS_ENDPOINT_URL_EVENTBRIDGE;
      const agent = new MockAgent();
      agent.disableNetConnect();
      agent
        .get('https://events.ap-southeast-2.amazonaws.com')
        .intercept({ path: '/', method: 'POST' })
        .reply(200, { Entries: [{ EventId: 'regional' }] });
      const regional = new SignedPutEvents({
        client: new EventBridgeClient({ region: 'ap-southeast-2', credentials: CREDENTIALS }),
        dispatcher: agent,
      });

      const results = await regional.putEvents([entry()], new AbortController().signal);

      expect(server.requests).toHaveLength(1);
      expect(results).toEqual([{ EventId: 'regional' }]);
      agent.assertNoPendingInterceptors();
    } finally {
      process.env = previous;
    }
  });
});

function entry() {
  return {
    source: 'banking.events',
    detailType: 'transaction',
    detail: '{"id":"x"}',
    time: Date.now(),
    eventBusName: 'b',
  };
}
