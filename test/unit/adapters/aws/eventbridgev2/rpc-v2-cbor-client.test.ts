/**
 * The EventBridgeV2 RPC v2 CBOR caller against a scripted loopback server: the request on the wire
 * (path, protocol headers, CBOR body, a signature the AWS SDK's signer agrees with over the exact
 * bytes), the answer decoded (timestamps as dates), where it goes (endpoint variables, the
 * regional endpoint), and errors shaped as the SDK shapes them, with their messages made safe.
 */
import { inspect } from 'node:util';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { tag } from '@smithy/core/cbor';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EventBridgeV2Rpc,
  regionalEndpoint,
} from '../../../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { EventBridgeServiceError } from '../../../../../functions/adapters/aws/put-events-transport.ts';
import { ConfigurationError } from '../../../../../functions/core/errors.ts';
import { cborAnswer, decodedBody, sdkAuthorization } from '../../../../support/cbor-responders.ts';
import { closeAll, json, startScriptedServer } from '../../../../support/scripted-http-server.ts';
import { leaks } from '../../../../support/secret-encodings.ts';

const CREDENTIALS = {
  accessKeyId: 'ASIAEXAMPLEKEY',
  secretAccessKey: 'example/secret+key',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token==',
};
const BUS_ARN = 'arn:aws:events:eu-west-1:123456789012:event-busv2/bank/abcdefghijklmnopqrstuvwxy';

afterEach(closeAll);

function rpcFor(endpoint: string, region = 'eu-west-1'): EventBridgeV2Rpc {
  return new EventBridgeV2Rpc({
    client: new EventBridgeClient({ region, credentials: CREDENTIALS }),
    env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: endpoint },
  });
}

describe('EventBridgeV2Rpc', () => {
  it('POSTs the CBOR body to the operation path with the protocol headers, signed as the SDK signs it', async () => {
    const server = await startScriptedServer(cborAnswer(200, { Arn: BUS_ARN }));
    const input = { EventBusArn: BUS_ARN, Note: 'é😀日本', When: tag({ tag: 1, value: 1_764_151_200.5 }) };

    await rpcFor(server.baseUrl).call('DescribeEventBus', input);

    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'POST', url: '/service/AWSEventsV2/operation/DescribeEventBus' });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/cbor',
      accept: 'application/cbor',
      'smithy-protocol': 'rpc-v2-cbor',
      'x-amz-security-token': CREDENTIALS.sessionToken,
    });
    const body = decodedBody(request!) as Record<string, unknown>;
    expect(body.EventBusArn).toBe(BUS_ARN);
    expect(body.Note).toBe('é😀日本');
    expect(body.When).toMatchObject({ tag: 1, value: 1_764_151_200.5 });
    expect(request!.headers.authorization).toMatch(/Credential=ASIAEXAMPLEKEY\/\d{8}\/eu-west-1\/events\//);
    expect(request!.headers.authorization).toBe(
      await sdkAuthorization(request!, { service: 'events', region: 'eu-west-1', credentials: CREDENTIALS }),
    );
  });

  it('decodes the CBOR answer, its timestamps (tag 1) as dates', async () => {
    const server = await startScriptedServer(
      cborAnswer(200, {
        Arn: BUS_ARN,
        CreationTime: tag({ tag: 1, value: 1_764_151_200.25 }),
        Subscribers: [{ Name: 's1', LastModifiedTime: tag({ tag: 1, value: 1_764_151_201 }) }],
      }),
    );

    const answer = await rpcFor(server.baseUrl).call<{
      Arn: string;
      CreationTime: Date;
      Subscribers: { Name: string; LastModifiedTime: Date }[];
    }>('DescribeEventBus', { EventBusArn: BUS_ARN });

    expect(answer.Arn).toBe(BUS_ARN);
    expect(answer.CreationTime).toEqual(new Date('2025-11-26T10:00:00.250Z'));
    expect(answer.Subscribers[0]!.LastModifiedTime).toEqual(new Date('2025-11-26T10:00:01.000Z'));
  });

  it('keeps a base path of the configured endpoint, and prefers the service variable to AWS_ENDPOINT_URL', async () => {
    const wanted = await startScriptedServer(cborAnswer(200, {}));
    const other = await startScriptedServer(cborAnswer(200, {}));
    const rpc = new EventBridgeV2Rpc({
      client: new EventBridgeClient({ region: 'eu-west-1', credentials: CREDENTIALS }),
      env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: `${wanted.baseUrl}/stage/`, AWS_ENDPOINT_URL: other.baseUrl },
    });

    await rpc.call('ListEventBuses', {});

    expect(other.requests).toHaveLength(0);
    expect(wanted.requests[0]!.url).toBe('/stage/service/AWSEventsV2/operation/ListEventBuses');
    expect(wanted.requests[0]!.headers.authorization).toBe(
      await sdkAuthorization(wanted.requests[0]!, {
        service: 'events',
        region: 'eu-west-1',
        credentials: CREDENTIALS,
      }),
    );
  });

  it('falls back on AWS_ENDPOINT_URL, and on the regional endpoint when no variable is set', async () => {
    const shared = await startScriptedServer(cborAnswer(200, {}));
    await new EventBridgeV2Rpc({
      client: new EventBridgeClient({ region: 'eu-west-1', credentials: CREDENTIALS }),
      env: { AWS_ENDPOINT_URL: shared.baseUrl },
    }).call('ListEventBuses', {});
    expect(shared.requests).toHaveLength(1);

    const agent = new MockAgent();
    agent.disableNetConnect();
    agent
      .get('https://eventsv2.ap-southeast-2.amazonaws.com')
      .intercept({ path: '/service/AWSEventsV2/operation/ListEventBuses', method: 'POST' })
      .reply(200, Buffer.from([0xa0]));
    const regional = new EventBridgeV2Rpc({
      client: new EventBridgeClient({ region: 'ap-southeast-2', credentials: CREDENTIALS }),
      env: { AWS_ENDPOINT_URL: shared.baseUrl, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' },
      dispatcher: agent,
    });
    await expect(regional.call('ListEventBuses', {})).resolves.toEqual({});
    agent.assertNoPendingInterceptors();
    expect(shared.requests).toHaveLength(1);
    expect(regionalEndpoint('cn-north-1')).toBe('https://eventsv2.cn-north-1.amazonaws.com.cn');
    expect(regionalEndpoint('us-gov-west-1', true)).toBe('https://eventsv2-fips.us-gov-west-1.amazonaws.com');
  });

  it('refuses an endpoint variable that is not a URL, naming it', async () => {
    const rpc = new EventBridgeV2Rpc({
      client: new EventBridgeClient({ region: 'eu-west-1', credentials: CREDENTIALS }),
      env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: 'not a url' },
    });

    const error = await rpc.call('ListEventBuses', {}).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as ConfigurationError).context).toMatchObject({
      variable: 'AWS_ENDPOINT_URL_EVENTBRIDGEV2',
    });
  });

  it.each([
    [
      'a CBOR body naming a namespaced type',
      cborAnswer(429, {
        __type: 'com.amazonaws.eventbridgev2#ThrottlingException',
        Message: 'Rate exceeded',
      }),
      'ThrottlingException',
      429,
      'client',
      'Rate exceeded',
    ],
    [
      'a CBOR body with a lower-case message',
      cborAnswer(500, { __type: 'InternalException', message: 'oops' }),
      'InternalException',
      500,
      'server',
      'oops',
    ],
    [
      'only the error-type header',
      cborAnswer(404, {}, { 'x-amzn-errortype': 'ResourceNotFoundException:http://internal/' }),
      'ResourceNotFoundException',
      404,
      'client',
      'HTTP 404',
    ],
    [
      'an XML body from a front end',
      (_request: unknown, response: import('node:http').ServerResponse) => {
        response.writeHead(403, { 'content-type': 'text/xml' });
        response.end(
          '<ErrorResponse><Error><Code>SignatureDoesNotMatch</Code><Message>bad</Message></Error></ErrorResponse>',
        );
      },
      'SignatureDoesNotMatch',
      403,
      'client',
      'bad',
    ],
    ['a 503 that is neither', json(503, '<html>busy</html>'), 'InternalFailure', 503, 'server', 'HTTP 503'],
    [
      'a type that is no identifier',
      cborAnswer(400, { __type: 'two words <script>', Message: 'no' }),
      'Http400',
      400,
      'client',
      'no',
    ],
  ] as const)(
    'names an error from %s, in the SDK shape',
    async (_case, answer, name, status, fault, message) => {
      const server = await startScriptedServer(answer);

      const error = await rpcFor(server.baseUrl)
        .call('PutEvents', { EventBusArn: BUS_ARN, Entries: [] })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(EventBridgeServiceError);
      expect(error).toMatchObject({ name, message, $fault: fault, $metadata: { httpStatusCode: status } });
    },
  );

  it('keeps the request id, and never quotes the credentials an error body echoes', async () => {
    const server = await startScriptedServer(
      cborAnswer(403, {
        __type: 'InvalidSignatureException',
        Message:
          `Signature mismatch for token ${CREDENTIALS.sessionToken}. The Canonical String for this request should have been ` +
          `'POST\n/\nx-amz-security-token:${CREDENTIALS.sessionToken}'`,
      }),
    );

    const error = await rpcFor(server.baseUrl)
      .call('PutEvents', { EventBusArn: BUS_ARN, Entries: [] })
      .catch((caught: unknown) => caught);

    expect(error).toMatchObject({
      name: 'InvalidSignatureException',
      $metadata: { requestId: 'req-cbor-1' },
    });
    expect(
      leaks(inspect(error, { depth: 5 }), [CREDENTIALS.sessionToken, CREDENTIALS.secretAccessKey]),
    ).toEqual([]);
    expect((error as Error).message).toContain('Signature mismatch');
  });

  it('rejects with the signal reason once the caller aborts', async () => {
    const server = await startScriptedServer(() => {});
    const controller = new AbortController();
    const reason = new Error('deadline');

    const pending = rpcFor(server.baseUrl).call('ListEventBuses', {}, controller.signal);
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
  });
});
