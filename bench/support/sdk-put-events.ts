/**
 * PutEvents through the AWS SDK's client, as the handler sent it before signing by hand: the
 * baseline of `npm run bench:put-events`.
 */
import {
  type EventBridgeClient,
  PutEventsCommand,
  type PutEventsRequestEntry,
  type PutEventsResultEntry,
} from '@aws-sdk/client-eventbridge';
import type {
  PutEventsEntry,
  PutEventsTransport,
} from '../../functions/adapters/aws/put-events-transport.ts';

/** PutEvents through the AWS SDK client. */
export class SdkPutEvents implements PutEventsTransport {
  readonly #client: EventBridgeClient;

  constructor(client: EventBridgeClient) {
    this.#client = client;
  }

  async putEvents(
    entries: readonly PutEventsEntry[],
    signal: AbortSignal,
  ): Promise<readonly PutEventsResultEntry[]> {
    const Entries: PutEventsRequestEntry[] = entries.map((entry) => ({
      Source: entry.source,
      DetailType: entry.detailType,
      Detail: entry.detail,
      Time: new Date(entry.time),
      EventBusName: entry.eventBusName,
    }));
    const output = await this.#client.send(new PutEventsCommand({ Entries }), { abortSignal: signal });
    return output.Entries ?? [];
  }
}
