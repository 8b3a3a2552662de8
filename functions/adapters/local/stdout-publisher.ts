import type { Writable } from 'node:stream';
import type { BankingEvent } from '../../core/banking-event.ts';
import type { BusEntryRules } from '../../core/bus-entry-rules.ts';
import type { EntryOutcome, EventPublisher, PublishLimits } from '../../core/ports.ts';
import { SETTINGS } from '../../settings/settings.ts';
import { CLASSIC_BUS_ENTRY_RULES } from '../aws/eventbridge-entry-rules.ts';

/**
 * The local mode's bus: each event becomes one NDJSON line, shaped like the EventBridge event a
 * rule target would receive, so `npm start | jq` shows what downstream consumers will see.
 */
export class StdoutPublisher implements EventPublisher {
  readonly limits: PublishLimits = {
    maxEntriesPerBatch: 100,
    maxBatchBytes: 1024 * 1024,
    maxEntryBytes: 1024 * 1024,
  };
  /** The classic bus's, as its events are shaped like the classic bus's. */
  readonly entryRules: BusEntryRules = CLASSIC_BUS_ENTRY_RULES;
  readonly #out: Writable;
  readonly #source: string;

  constructor(options: { out?: Writable; source?: string } = {}) {
    this.#out = options.out ?? process.stdout;
    this.#source = options.source ?? SETTINGS.eventSource.default;
  }

  entrySize(event: BankingEvent): number {
    return Buffer.byteLength(event.detail);
  }

  async send(batch: readonly BankingEvent[], signal: AbortSignal): Promise<readonly EntryOutcome[]> {
    signal.throwIfAborted();
    // Spliced as text: the detail goes out exactly as the bank sent it.
    const source = JSON.stringify(this.#source);
    const lines = batch
      .map(
        (event) =>
          `{"source":${source},"detail-type":${JSON.stringify(event.type)},"time":${JSON.stringify(event.created_dt)},"detail":${event.detail}}`,
      )
      .join('\n');
    // Wait for the write so back-pressure (a slow pipe) slows the poller instead of growing memory.
    await new Promise<void>((resolve, reject) =>
      this.#out.write(`${lines}\n`, (error) => (error ? reject(error) : resolve())),
    );
    return batch.map(() => ({ ok: true }) as const);
  }
}
