import { UpstreamHttpError } from '../errors.ts';
import type { CycleLogger, EventLookup } from '../ports.ts';
import type { BufferedEvent } from './stream-buffer.ts';

/**
 * How an event the stream may carry differently from a poll (see `stream-payload.ts`) is fetched
 * before it is published: `lookup` asks for each one (`GET /event/:id`); `page` reads the page
 * from the cursor (`GET /events`), the stream serving only as a doorbell for such events.
 */
export const STREAM_RECOVERIES = ['page', 'lookup'] as const;
export type StreamRecovery = (typeof STREAM_RECOVERIES)[number];

export interface LookupRecoveryDeps {
  readonly lookup: EventLookup;
  readonly logger: CycleLogger;
  /** Whether an entry is still buffered (the cursor may have passed it meanwhile). */
  readonly isBuffered: (entry: BufferedEvent) => boolean;
  /** Called when a lookup ended: the entry may be ready (or left for a page). */
  readonly onSettled: () => void;
  /** Called with what cannot be retried (authentication): the reader fails with it. */
  readonly onFatal: (error: unknown) => void;
}

/**
 * `lookup` recovery: each queued entry is replaced by the event `GET /event/:id` gives, a few
 * lookups at a time; an entry whose lookup finds nothing or fails is left for a page read.
 */
export class LookupRecovery {
  readonly #deps: LookupRecoveryDeps;
  readonly #concurrency: number;
  readonly #signal: AbortSignal;
  readonly #queue: BufferedEvent[] = [];
  #inFlight = 0;

  constructor(deps: LookupRecoveryDeps, options: { concurrency: number; signal: AbortSignal }) {
    this.#deps = deps;
    this.#concurrency = options.concurrency;
    this.#signal = options.signal;
  }

  /** Queues an entry to be looked up. */
  enqueue(entry: BufferedEvent): void {
    this.#queue.push(entry);
  }

  /** Starts queued lookups, up to the concurrency. */
  start(): void {
    while (this.#inFlight < this.#concurrency && this.#queue.length > 0) {
      const entry = this.#queue.shift()!;
      if (!this.#deps.isBuffered(entry)) continue;
      this.#inFlight += 1;
      entry.state = 'recovering';
      void this.#recover(entry).finally(() => {
        this.#inFlight -= 1;
        this.start();
        this.#deps.onSettled();
      });
    }
  }

  /** Replaces the streamed event with the one `GET /event/:id` gives; a page read if that fails. */
  async #recover(entry: BufferedEvent): Promise<void> {
    const { event } = entry;
    const { logger } = this.#deps;
    try {
      // A signal of its own: lookups run side by side, and each request listens to its signal.
      const found = await this.#deps.lookup.fetchEventById(event.id, AbortSignal.any([this.#signal]));
      if (found !== null && found.sequence_number === event.sequence_number) {
        entry.event = found;
        entry.state = 'ready';
        return;
      }
      entry.state = 'unrecoverable';
      logger.warn('The lookup of a streamed event did not find it; reading its page instead', {
        eventId: event.id,
        sequenceNumber: event.sequence_number,
        foundSequenceNumber: found?.sequence_number ?? null,
      });
    } catch (error) {
      entry.state = 'unrecoverable';
      if (this.#signal.aborted) return;
      if (error instanceof UpstreamHttpError && error.retryable) {
        logger.warn('The lookup of a streamed event failed; reading its page instead', {
          eventId: event.id,
          sequenceNumber: event.sequence_number,
          status: error.status,
        });
        return;
      }
      this.#deps.onFatal(error);
    }
  }
}
