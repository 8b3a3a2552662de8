/**
 * The baseline of the throughput benchmark on the Custom Event Bus: bench/naive-poller.ts's loop
 * (poll a page, put it request by request, each awaited, write the checkpoint, repeat) over the
 * same signed RPC v2 CBOR path the handler uses (`EventBridgeV2Rpc`, the PutEvents body written by
 * `encodePutEventsRequest`), there being no SDK client for this API. `NAIVE_BATCH` entries per
 * request: 1 (one event per PutEvents, awaited) or up to 100, the bus's maximum. Each entry names
 * the program as its event group and the event's id as its de-duplication key, as the handler does
 * with EVENT_GROUP_BY=program. Bundled and run in its own process by bench/throughput.ts.
 *
 * Environment: BANKING_BASE_URL, BANKING_CLIENT_ID, BANKING_CLIENT_SECRET, CHECKPOINT_TABLE,
 * PROGRAM, EVENT_BUS_NAME (the bus's ARN), POLL_LIMIT, NAIVE_TARGET, NAIVE_BATCH,
 * AWS_ENDPOINT_URL_EVENTBRIDGEV2 and the AWS SDK's own variables.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { encodePutEventsRequest } from '../functions/adapters/aws/eventbridgev2/put-events-request.ts';
import { EventBridgeV2Rpc } from '../functions/adapters/aws/eventbridgev2/rpc-v2-cbor-client.ts';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const baseUrl = env('BANKING_BASE_URL');
const limit = Number(env('POLL_LIMIT'));
const target = Number(env('NAIVE_TARGET'));
const batchSize = Number(env('NAIVE_BATCH'));
const busArn = env('EVENT_BUS_NAME');
const program = env('PROGRAM');
const rpc = new EventBridgeV2Rpc();
const dynamodb = new DynamoDBClient({});

const tokenResponse = await fetch(`${baseUrl}/oauth2/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: env('BANKING_CLIENT_ID'),
    client_secret: env('BANKING_CLIENT_SECRET'),
  }),
});
const { access_token: token } = (await tokenResponse.json()) as { access_token: string };

interface Event {
  id: string;
  sequence_number: number;
  type: string;
  created_dt: string;
}

let cursor = 0;
let published = 0;
while (published < target) {
  const response = await fetch(`${baseUrl}/events?last_sequence_number=${cursor}&limit=${limit}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const page = (await response.json()) as { data: Event[] };
  if (page.data.length === 0) continue;
  for (let i = 0; i < page.data.length; i += batchSize) {
    const answer = await rpc.callEncoded<{ FailedEntryCount?: number }>(
      'PutEvents',
      encodePutEventsRequest(
        busArn,
        page.data.slice(i, i + batchSize).map((event) => ({
          source: 'banking.events',
          detailType: event.type.toLowerCase(),
          detail: JSON.stringify(event),
          time: Date.parse(event.created_dt),
          eventGroupId: program,
          deduplicationId: event.id,
        })),
      ),
    );
    if (answer.FailedEntryCount) throw new Error(`${answer.FailedEntryCount} entries failed`);
  }
  cursor = page.data.at(-1)!.sequence_number;
  published += page.data.length;
  await dynamodb.send(
    new UpdateItemCommand({
      TableName: env('CHECKPOINT_TABLE'),
      Key: { pk: { S: `program#${program}` } },
      UpdateExpression: 'SET checkpoint = :c',
      ExpressionAttributeValues: { ':c': { N: String(cursor) } },
    }),
  );
}
