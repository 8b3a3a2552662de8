/**
 * The Custom Event Bus publisher against a scripted loopback server that checks the signature and
 * answers CBOR: the entries it sends (source, type, the bank's text, time, the group and the
 * de-duplication id), how each result is read (PUBLISHED and DEDUPLICATED accepted, errors and
 * missing results failed), and how a request that failed as a whole is classified.
 */

import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { afterEach, describe, expect, it } from 'vitest';
import { CLASSIC_BUS_ENTRY_RULES } from '../../../../../functions/adapters/aws/eventbridge-entry-rules.ts';
import {
  CustomBusPublisher,
  deduplicationIdOf,
} from '../../../../../functions/adapters/aws/eventbridgev2/custom-bus-publisher.ts';
import { EventBridgeV2Rpc } from '../../../../../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';
import { DEFAULT_MAX_ENTRY_BYTES } from '../../../../../functions/adapters/aws/put-events-limits.ts';
import {
  ConfigurationError,
  PayloadValidationError,
  PublishError,
} from '../../../../../functions/core/errors.ts';
import type { EventGroupBy } from '../../../../../functions/core/event-groups.ts';
import { invalidEvent } from '../../../../../functions/core/invalid-event.ts';
import { cborAnswer, decodedBody, sdkAuthorization } from '../../../../support/cbor-responders.ts';
import { goldenCases } from '../../../../support/eventbridgev2-golden.ts';
import { makeEvent } from '../../../../support/in-memory-ports.ts';
import { closeAll, type Responder, startScriptedServer } from '../../../../support/scripted-http-server.ts';

const CREDENTIALS = {
  accessKeyId: 'ASIAEXAMPLEKEY',
  secretAccessKey: 'example/secret+key',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token==',
};
const BUS_ARN = 'arn:aws:events:eu-west-1:123456789012:event-busv2/bank-events/abcdefghijklmnopqrstuvwxy';
const ACCOUNT = '6c1f2a9e-6d0b-4c1e-9a55-0f5d0e3b2a11';

afterEach(closeAll);

/** Accepts every entry, PUBLISHED, numbering them as the bus would. */
const published: Responder = (request, response) => {
  const count = (decodedBody(request) as { Entries: unknown[] }).Entries.length;
  cborAnswer(200, {
    FailedEntryCount: 0,
    Entries: Array.from({ length: count }, (_, i) => ({
      EventId: `e${i}`,
      SequenceNumber: String(i + 1),
      SuccessCode: 'PUBLISHED',
    })),
  })(request, response);
};

function publisherFor(endpoint: string, groupBy: EventGroupBy = 'program'): CustomBusPublisher {
  return new CustomBusPublisher({
    rpc: new EventBridgeV2Rpc({
      client: new EventBridgeClient({ region: 'eu-west-1', credentials: CREDENTIALS }),
      env: { AWS_ENDPOINT_URL_EVENTBRIDGEV2: endpoint },
    }),
    eventBusArn: BUS_ARN,
    source: 'banking.events',
    program: 'retail',
    groupBy,
  });
}

const events = [
  makeEvent(7, {
    type: 'account_status',
    created_dt: '2026-11-24T10:00:00.250Z',
    data: { account_id: ACCOUNT, status: 'OPEN' },
  }),
  makeEvent(8, {
    type: 'transaction',
    created_dt: '2026-11-24T10:00:01.000Z',
    data: { transaction_id: 'tx-8' },
  }),
];

const signal = () => new AbortController().signal;

describe('CustomBusPublisher', () => {
  it('sends each event as an entry with its group and its id as de-duplication id, signed as the SDK signs', async () => {
    const server = await startScriptedServer(published);

    const outcomes = await publisherFor(server.baseUrl).send(events, signal());

    const [request] = server.requests;
    expect(outcomes).toEqual([{ ok: true }, { ok: true }]);
    expect(request!.url).toBe('/service/AWSEventsV2/operation/PutEvents');
    expect(decodedBody(request!)).toEqual({
      EventBusArn: BUS_ARN,
      Entries: [
        {
          Source: 'banking.events',
          DetailType: 'account_status',
          Detail: events[0]!.detail,
          Time: expect.objectContaining({ tag: 1, value: Date.parse('2026-11-24T10:00:00.250Z') / 1000 }),
          SystemMetadata: {
            EventGroupId: 'retail',
            DeduplicationId: `${events[0]!.id}@${events[0]!.sequence_number}`,
          },
        },
        {
          Source: 'banking.events',
          DetailType: 'transaction',
          Detail: events[1]!.detail,
          Time: expect.objectContaining({ tag: 1, value: Date.parse('2026-11-24T10:00:01.000Z') / 1000 }),
          SystemMetadata: {
            EventGroupId: 'retail',
            DeduplicationId: `${events[1]!.id}@${events[1]!.sequence_number}`,
          },
        },
      ],
    });
    expect(request!.headers.authorization).toBe(
      await sdkAuthorization(request!, { service: 'events', region: 'eu-west-1', credentials: CREDENTIALS }),
    );
  });

  it('groups by account (a transaction in its own group), or names no group with none', async () => {
    const server = await startScriptedServer(published);

    await publisherFor(server.baseUrl, 'account').send(events, signal());
    await publisherFor(server.baseUrl, 'none').send(events, signal());

    const metadata = (index: number) =>
      (decodedBody(server.requests[index]!) as { Entries: { SystemMetadata: unknown }[] }).Entries.map(
        (entry) => entry.SystemMetadata,
      );
    expect(metadata(0)).toEqual([
      {
        EventGroupId: `account:${ACCOUNT}`,
        DeduplicationId: `${events[0]!.id}@${events[0]!.sequence_number}`,
      },
      { EventGroupId: 'transaction:tx-8', DeduplicationId: `${events[1]!.id}@${events[1]!.sequence_number}` },
    ]);
    expect(metadata(1)).toEqual([
      { DeduplicationId: `${events[0]!.id}@${events[0]!.sequence_number}` },
      { DeduplicationId: `${events[1]!.id}@${events[1]!.sequence_number}` },
    ]);
  });

  it('names the same group as it sends, for the publish pipeline, per program', async () => {
    const server = await startScriptedServer(published);
    const publisher = publisherFor(server.baseUrl, 'account');

    expect(publisher.eventGroup(events[0]!)).toBe(`account:${ACCOUNT}`);
    expect(publisher.eventGroup(makeEvent(9, { type: 'card', data: {} }))).toBe('retail');
    expect(publisher.forProgram('business').eventGroup(makeEvent(9, { type: 'card', data: {} }))).toBe(
      'business',
    );
    expect(publisherFor(server.baseUrl, 'none').eventGroup(events[0]!)).toBeUndefined();
  });

  it('de-duplicates on id and sequence number, a quarantined event on its fingerprint; a key the bus would refuse is hashed', () => {
    const text = '{"id":"evt-1","type":"account_status"}';
    const quarantined = invalidEvent(
      { value: JSON.parse(text), text, span: { start: 0, end: text.length } },
      new PayloadValidationError('data[0].sequence_number is missing', { field: 'data[0].sequence_number' }),
      {
        sequenceNumber: null,
        receivedAt: Date.parse('2026-11-26T10:00:00Z'),
        rules: CLASSIC_BUS_ENTRY_RULES,
      },
    );

    expect(deduplicationIdOf(quarantined)).toBe(quarantined.invalid!.fingerprint);
    expect(deduplicationIdOf(makeEvent(1, { id: 'x'.repeat(300) }))).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(deduplicationIdOf(makeEvent(1, { id: 'evt-1' }))).toBe('evt-1@1');
    // The same event sent again keeps its key; an id the bank reused at a new number does not.
    expect(deduplicationIdOf(makeEvent(7, { id: 'evt-1' }))).toBe('evt-1@7');
  });

  it('accepts PUBLISHED and DEDUPLICATED entries and fails the rest, reading the answer botocore encodes', async () => {
    const golden = goldenCases().find((each) => each.name === 'unicode-times-and-sizes')!;
    const server = await startScriptedServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/cbor', 'smithy-protocol': 'rpc-v2-cbor' });
      response.end(golden.response);
    });
    const batch = [makeEvent(1), makeEvent(2), makeEvent(3), makeEvent(4)];

    const outcomes = await publisherFor(server.baseUrl).send(batch, signal());

    expect(outcomes).toEqual([
      { ok: true },
      { ok: true },
      { ok: false, failure: 'transient', errorCode: 'InternalException', errorMessage: 'Try again' },
      {
        ok: false,
        failure: 'transient',
        errorCode: 'MissingResult',
        errorMessage: 'PutEvents returned no result for this entry',
      },
    ]);
  });

  it('fails an entry whose result has neither a success code nor an error', async () => {
    const server = await startScriptedServer(cborAnswer(200, { Entries: [{ SequenceNumber: '1' }] }));

    const [outcome] = await publisherFor(server.baseUrl).send([makeEvent(1)], signal());

    expect(outcome).toMatchObject({ ok: false, errorCode: 'MissingSuccessCode' });
  });

  it.each([
    [
      'throttling',
      cborAnswer(429, { __type: 'ThrottlingException', Message: 'Rate exceeded' }),
      'ThrottlingException',
      'throttled',
    ],
    [
      'a server error',
      cborAnswer(500, { __type: 'InternalException', Message: 'oops' }),
      'InternalException',
      'transient',
    ],
    [
      'a refused input',
      cborAnswer(400, { __type: 'InvalidInputException', Message: 'bad Source' }),
      'InvalidInputException',
      'rejected',
    ],
  ] as const)(
    "wraps %s as a PublishError, classified in the core's words",
    async (_case, answer, awsError, failure) => {
      const server = await startScriptedServer(answer);

      const error = await publisherFor(server.baseUrl)
        .send(events, signal())
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(PublishError);
      expect((error as PublishError).failure).toBe(failure);
      expect((error as PublishError).context).toMatchObject({
        awsError,
        eventBusArn: BUS_ARN,
        entries: 2,
        firstSequenceNumber: 7,
        lastSequenceNumber: 8,
      });
    },
  );

  it('marks a refusal for size for the claim check', async () => {
    const server = await startScriptedServer(
      cborAnswer(400, {
        __type: 'InvalidInputException',
        Message: 'Total size of the entries in the request is over the limit',
      }),
    );

    const error = await publisherFor(server.baseUrl)
      .send(events, signal())
      .catch((caught: unknown) => caught);

    expect((error as PublishError).failure).toBe('too-large');
  });

  it('turns a denied role and a missing bus into configuration errors naming the bus', async () => {
    const server = await startScriptedServer([
      cborAnswer(403, { __type: 'AccessDeniedException', Message: 'not authorized' }),
      cborAnswer(404, { __type: 'ResourceNotFoundException', Message: 'no such bus' }),
    ]);
    const publisher = publisherFor(server.baseUrl);

    const denied = await publisher.send(events, signal()).catch((caught: unknown) => caught);
    const missing = await publisher.send(events, signal()).catch((caught: unknown) => caught);

    expect(denied).toBeInstanceOf(ConfigurationError);
    expect((denied as Error).message).toContain('events:PutEvents');
    expect((denied as Error).message).toContain(BUS_ARN);
    expect(missing).toBeInstanceOf(ConfigurationError);
    expect((missing as Error).message).toContain(BUS_ARN);
  });

  it('surfaces the deadline, not the aborted request', async () => {
    const server = await startScriptedServer(() => {});
    const controller = new AbortController();
    const reason = new Error('deadline');

    const pending = publisherFor(server.baseUrl).send(events, controller.signal);
    await expect.poll(() => server.requests.length).toBe(1);
    controller.abort(reason);

    await expect(pending).rejects.toBe(reason);
  });

  it('takes up to 100 entries per request, the classic size limits, and refuses what is not a custom bus ARN', () => {
    const publisher = publisherFor('http://127.0.0.1:9');
    const make = (eventBusArn: string) => () =>
      new CustomBusPublisher({ eventBusArn, source: 'banking.events', program: 'retail' });

    expect(publisher.limits).toEqual({
      maxEntriesPerBatch: 100,
      maxBatchBytes: DEFAULT_MAX_ENTRY_BYTES,
      maxEntryBytes: DEFAULT_MAX_ENTRY_BYTES,
    });
    expect(publisher.entrySize(events[0]!)).toBe(
      14 + 'banking.events'.length + 'account_status'.length + Buffer.byteLength(events[0]!.detail),
    );
    expect(make('bank-events')).toThrow(ConfigurationError);
    expect(make('arn:aws:events:eu-west-1:123456789012:event-bus/bank-events')).toThrow(/classic bus/);
    expect(make(BUS_ARN)).not.toThrow();
  });
});
