/**
 * AWS errors that quote the caller's credentials, through real SDK clients against a scripted
 * loopback server: a JSON service's signature error quoting the canonical request in its message,
 * S3's XML one quoting it in `CanonicalRequest`/`StringToSign` (fields the SDK copies onto the
 * error), and a message echoing the session token escaped. Whatever a logger could print of the
 * error (inspected, with its stack) must not show the session token or the secret key.
 */
import { inspect } from 'node:util';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { withScrubbedErrors } from '../../../../functions/adapters/aws/service-error-redaction.ts';
import {
  closeAll,
  json,
  type Responder,
  startScriptedServer,
} from '../../../support/scripted-http-server.ts';
import { ENCODINGS, leaks } from '../../../support/secret-encodings.ts';

const CREDENTIALS = {
  accessKeyId: 'ASIAEXAMPLEKEY',
  secretAccessKey: 'example/secret+key/0123',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token==',
};
const HELD = [CREDENTIALS.sessionToken, CREDENTIALS.secretAccessKey];

afterEach(closeAll);

const config = (endpoint: string) => ({
  endpoint,
  region: 'eu-west-1',
  credentials: CREDENTIALS,
  maxAttempts: 1,
});

/** Everything a logger could print of `error`: its fields, its stack, its cause chain. */
function printed(error: unknown): string {
  return `${inspect(error, { depth: 6 })}\n${(error as Error).stack}\n${JSON.stringify(error)}`;
}

const jsonSignatureError = json(
  400,
  {
    __type: 'com.amazon.coral.service#InvalidSignatureException',
    message:
      'The request signature we calculated does not match the signature you provided.\n\n' +
      `The Canonical String for this request should have been\n'POST\n/\n\nx-amz-security-token:${CREDENTIALS.sessionToken}\n'`,
  },
  { 'content-type': 'application/x-amz-json-1.0' },
);

const s3SignatureError: Responder = (_request, response) => {
  response.writeHead(403, { 'content-type': 'application/xml' });
  response.end(
    '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SignatureDoesNotMatch</Code>' +
      '<Message>The request signature we calculated does not match the signature you provided.</Message>' +
      `<AWSAccessKeyId>${CREDENTIALS.accessKeyId}</AWSAccessKeyId>` +
      `<StringToSign>AWS4-HMAC-SHA256\n20261126T000000Z\n${CREDENTIALS.sessionToken}</StringToSign>` +
      `<CanonicalRequest>PUT\n/bucket/key\n\nx-amz-security-token:${CREDENTIALS.sessionToken}\n</CanonicalRequest>` +
      '</Error>',
  );
};

async function getItemError(client: DynamoDBClient): Promise<unknown> {
  return client
    .send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'a' } } }))
    .catch((error: unknown) => error);
}

async function putObjectError(client: S3Client): Promise<unknown> {
  return client
    .send(new PutObjectCommand({ Bucket: 'bucket', Key: 'key', Body: '{}' }))
    .catch((error: unknown) => error);
}

describe('withScrubbedErrors', () => {
  it('the SDK alone would show the session token of a quoted canonical request (JSON and S3)', async () => {
    const server = await startScriptedServer([jsonSignatureError, s3SignatureError]);

    const fromJson = await getItemError(new DynamoDBClient(config(server.baseUrl)));
    const fromS3 = await putObjectError(new S3Client({ ...config(server.baseUrl), forcePathStyle: true }));

    expect(printed(fromJson)).toContain(CREDENTIALS.sessionToken);
    expect(printed(fromS3)).toContain(CREDENTIALS.sessionToken);
  });

  it('cuts the canonical request out of a JSON service error, stack included, and keeps its name', async () => {
    const server = await startScriptedServer(jsonSignatureError);
    const client = withScrubbedErrors(new DynamoDBClient(config(server.baseUrl)));

    const error = await getItemError(client);

    expect(error).toMatchObject({
      name: 'InvalidSignatureException',
      message: 'The request signature we calculated does not match the signature you provided.',
      $metadata: { httpStatusCode: 400 },
    });
    expect(leaks(printed(error), HELD)).toEqual([]);
  });

  it("drops S3's CanonicalRequest and StringToSign fields", async () => {
    const server = await startScriptedServer(s3SignatureError);
    const client = withScrubbedErrors(new S3Client({ ...config(server.baseUrl), forcePathStyle: true }));

    const error = await putObjectError(client);

    expect(error).toMatchObject({ name: 'SignatureDoesNotMatch', $metadata: { httpStatusCode: 403 } });
    expect(error).not.toHaveProperty('CanonicalRequest');
    expect(error).not.toHaveProperty('StringToSign');
    expect(leaks(printed(error), HELD)).toEqual([]);
  });

  it('redacts the credentials echoed escaped in a message', async () => {
    const echoed = ENCODINGS['JSON-escaped with \\/']!(CREDENTIALS.sessionToken);
    const server = await startScriptedServer(
      json(
        400,
        `{"__type":"ValidationException","message":"bad token ${echoed} key ${ENCODINGS['percent-encoded, lower case']!(CREDENTIALS.secretAccessKey)}"}`,
        { 'content-type': 'application/x-amz-json-1.0' },
      ),
    );
    const client = withScrubbedErrors(new DynamoDBClient(config(server.baseUrl)));

    const error = await getItemError(client);

    expect((error as Error).message).toBe('bad token [redacted] key [redacted]');
    expect(leaks(printed(error), HELD)).toEqual([]);
  });
});
