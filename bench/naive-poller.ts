/**
 * The baseline of the throughput benchmark: the loop a user would write by hand. Poll a page,
 * send its batches of 10 to PutEvents one after another, write the checkpoint, repeat. It stops
 * after `NAIVE_TARGET` events. Bundled and run in its own process by bench/throughput.ts, with
 * the same endpoints as the handler.
 *
 * Environment: BANKING_BASE_URL, BANKING_CLIENT_ID, BANKING_CLIENT_SECRET, CHECKPOINT_TABLE,
 * PROGRAM, EVENT_BUS_NAME, POLL_LIMIT, NAIVE_TARGET, and the AWS SDK's own variables.
 */
import { DynamoDBClient, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const baseUrl = env('BANKING_BASE_URL');
const limit = Number(env('POLL_LIMIT'));
const target = Number(env('NAIVE_TARGET'));
const eventBridge = new EventBridgeClient({});
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
  for (let i = 0; i < page.data.length; i += 10) {
    await eventBridge.send(
      new PutEventsCommand({
        Entries: page.data.slice(i, i + 10).map((event) => ({
          Source: 'banking.events',
          DetailType: event.type.toLowerCase(),
          Detail: JSON.stringify(event),
          Time: new Date(event.created_dt),
          EventBusName: env('EVENT_BUS_NAME'),
        })),
      }),
    );
  }
  cursor = page.data.at(-1)!.sequence_number;
  published += page.data.length;
  await dynamodb.send(
    new UpdateItemCommand({
      TableName: env('CHECKPOINT_TABLE'),
      Key: { pk: { S: `program#${env('PROGRAM')}` } },
      UpdateExpression: 'SET checkpoint = :c',
      ExpressionAttributeValues: { ':c': { N: String(cursor) } },
    }),
  );
}
