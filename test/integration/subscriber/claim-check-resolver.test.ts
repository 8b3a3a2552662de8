import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { S3ClaimCheckStore } from '../../../functions/adapters/aws/s3-claim-check-store.ts';
import type { BankingEvent } from '../../../functions/core/banking-event.ts';
import { claimCheckKey, claimCheckPointer } from '../../../functions/core/claim-check.ts';
import {
  ClaimCheckMismatchError,
  ClaimCheckReadError,
  ClaimCheckResolver,
  parseEvent,
  SubscriberConfigurationError,
} from '../../../functions/subscriber/index.ts';
import { type MotoEnvironment, useMotoEnvironment } from '../../support/aws-test-env.ts';
import { deliveredText, published, rawEvent } from '../../support/published-events.ts';

/** What the poller does with an event too large for the bus: its store writes the body, the pointer names it. */
async function claimCheck(event: BankingEvent, bucket: string): Promise<string> {
  const location = await new S3ClaimCheckStore({ bucket }).put(
    claimCheckKey(event),
    event.detail,
    new AbortController().signal,
  );
  return deliveredText(claimCheckPointer(event, location));
}

describe('ClaimCheckResolver against moto S3', () => {
  let aws: MotoEnvironment;
  let s3: S3Client;
  let bucket: string;
  const [large, other] = published([
    rawEvent(11, 'transaction', {
      transaction_id: 'tx-large',
      amount: 12_345,
      note: `é${'x'.repeat(200_000)}`,
    }),
    rawEvent(12, 'account_status', { account_id: 'acc-1', status: 'OPEN' }),
  ]);

  beforeAll(async () => {
    aws = useMotoEnvironment(inject('motoEndpoint'));
    s3 = new S3Client({});
    bucket = aws.uniqueName('claims');
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  });

  afterAll(() => {
    s3?.destroy();
    aws?.restore();
  });

  it('reads a pointer event whole through the client it was given', async () => {
    const reads: unknown[] = [];
    const recording: Pick<S3Client, 'send'> = {
      send: ((command: { input: unknown }) => {
        reads.push(command.input);
        return s3.send(command as never);
      }) as S3Client['send'],
    };
    const resolver = new ClaimCheckResolver({ s3Client: recording, bucket });

    const event = await resolver.resolve(parseEvent(await claimCheck(large!, bucket)));

    expect(event).toMatchObject({
      kind: 'transaction',
      detail: { id: large!.id, sequence_number: 11, data: { transaction_id: 'tx-large', amount: 12_345 } },
      claimCheck: { bucket, key: claimCheckKey(large!) },
    });
    expect(event.kind === 'transaction' && event.detail.data.note?.length).toBe(200_001);
    expect(reads).toEqual([{ Bucket: bucket, Key: claimCheckKey(large!) }]);
  });

  it('passes a complete event through without reading S3', async () => {
    const resolver = new ClaimCheckResolver({ s3ClientConfig: { endpoint: 'http://127.0.0.1:9' } });
    const event = parseEvent(deliveredText(other!));

    await expect(resolver.resolve(event)).resolves.toBe(event);
  });

  it('refuses a body changed after the pointer was published', async () => {
    const pointer = parseEvent(await claimCheck(large!, bucket));
    const tampered = large!.detail.replace('"amount":12345', '"amount":92345');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: claimCheckKey(large!), Body: tampered }));

    const error = await new ClaimCheckResolver({ s3Client: s3 }).resolve(pointer).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ClaimCheckMismatchError);
    expect(error).toMatchObject({
      code: 'CLAIM_CHECK_MISMATCH',
      context: { eventId: large!.id, bucket, key: claimCheckKey(large!) },
    });
  });

  it('says which object it could not read, and why', async () => {
    const pointer = parseEvent(await claimCheck(other!, bucket));
    const gone = aws.uniqueName('gone');
    await s3.send(new CreateBucketCommand({ Bucket: gone }));
    const elsewhere = pointer.kind === 'claim_check' ? pointer : undefined;
    const missing = {
      ...elsewhere!,
      detail: { ...elsewhere!.detail, claim_check: { ...elsewhere!.detail.claim_check, bucket: gone } },
    };

    const error = await new ClaimCheckResolver({ s3Client: s3 }).resolve(missing).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(ClaimCheckReadError);
    expect(error).toMatchObject({ code: 'CLAIM_CHECK_UNREADABLE', context: { bucket: gone } });
    expect((error as Error).message).toMatch(/NoSuchKey/);
  });

  it('refuses a pointer to another bucket than the claim-check bucket it was pinned to, reading nothing', async () => {
    const pointer = parseEvent(await claimCheck(other!, bucket));
    const resolver = new ClaimCheckResolver({
      s3ClientConfig: { endpoint: 'http://127.0.0.1:9' },
      bucket: 'the-real-claim-checks',
    });

    await expect(resolver.resolve(pointer)).rejects.toThrow(
      new RegExp(`names bucket ${bucket}, not the claim-check bucket the-real-claim-checks`),
    );
  });

  it('takes a client or its configuration, not both', () => {
    expect(() => new ClaimCheckResolver({ s3Client: s3, s3ClientConfig: {} })).toThrow(
      SubscriberConfigurationError,
    );
  });
});
