import { createServer, type Server, type Socket } from 'node:net';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boundedClientConfig } from '../../../../functions/adapters/aws/bounded-client-config.ts';

/** A server that accepts connections and never answers: a hung AWS endpoint. */
let server: Server;
const sockets: Socket[] = [];
let endpoint: string;

beforeAll(async () => {
  server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  endpoint = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('boundedClientConfig', () => {
  it('turns a hung endpoint into an error after its attempts instead of waiting forever', async () => {
    const client = new DynamoDBClient({
      ...boundedClientConfig,
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });

    const error = await client
      .send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' } } }))
      .catch((caught: unknown) => caught as Error & { $metadata?: { attempts?: number } });

    expect(error).toBeInstanceOf(Error);
    expect((error as Error).name).toMatch(/Timeout/);
    expect((error as { $metadata?: { attempts?: number } }).$metadata?.attempts).toBe(3);
    expect(sockets.length).toBeGreaterThanOrEqual(3);
    client.destroy();
  }, 30_000);
});
