import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3ClaimCheckStore } from '../../../../functions/adapters/aws/s3-claim-check-store.ts';
import { ConfigurationError, DeadlineExceededError } from '../../../../functions/core/errors.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../../support/aws-test-env.ts';

describe('S3ClaimCheckStore against moto', () => {
  let aws: MotoEnvironment;
  let s3: S3Client;
  let bucket: string;

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    // Built from the default configuration, as the handler's is: AWS_ENDPOINT_URL points at moto.
    s3 = new S3Client({});
    bucket = aws.uniqueName('claims');
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  });

  afterAll(() => {
    s3?.destroy();
    aws?.restore();
  });

  it('stores the text under the key, byte for byte, and says where', async () => {
    const store = new S3ClaimCheckStore({ bucket });
    const body = `{"id":"e-1","amount":12.50,"note":"\\u00e9${'x'.repeat(300_000)}"}`;

    const location = await store.put('program-1/7-e-1.json', body, new AbortController().signal);

    expect(location).toEqual({ bucket, key: 'program-1/7-e-1.json' });
    const object = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: location.key }));
    expect(await object.Body!.transformToString('utf8')).toBe(body);
    expect(object.ContentType).toMatch(/^application\/json/);
  });

  it('names a missing bucket as a configuration problem', async () => {
    const store = new S3ClaimCheckStore({ bucket: aws.uniqueName('missing') });

    const error = await store.put('k.json', '{}', new AbortController().signal).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/claim-check bucket missing-.* does not exist/);
  });

  it('gives up with DeadlineExceededError when the deadline has come', async () => {
    const store = new S3ClaimCheckStore({ bucket });
    const controller = new AbortController();
    controller.abort();

    await expect(store.put('k.json', '{}', controller.signal)).rejects.toBeInstanceOf(DeadlineExceededError);
  });
});
