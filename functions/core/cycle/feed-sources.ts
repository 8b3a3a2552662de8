/**
 * How a cycle reads the feed: long polls (`FeedReader`), or the stream (`StreamReader`) with
 * page reads beside it. Both answer `next(after)` alike, so nothing after this knows the mode.
 */
import { FeedReader, type FeedSource, type ReadWindow } from '../feed-reader.ts';
import type { GapLedger } from '../gap-ledger.ts';
import type { JumpRule } from '../sequence-jumps.ts';
import { StreamReader } from '../stream/stream-reader.ts';
import type { CycleDeps } from './cycle-deps.ts';
import type { CycleSettings } from './cycle-options.ts';

export interface FeedSources {
  /** What the cycle reads from: the page reader, or the stream reader. */
  readonly reader: FeedSource;
  /** Long polls: the start position's walk, and the stream's page reads. */
  readonly pages: FeedReader;
  /** The stream reader in stream mode: told when publishing settles (its micro-batches wait on that). */
  readonly stream: StreamReader | undefined;
}

/**
 * The readers of one cycle, reading within `window`. `recordedGaps` lets a late event for a
 * skipped number through; `jumps` holds events implausibly far past the cursor, in both modes
 * alike; `publishing.busy` says whether pages are being published.
 */
export function openFeedSources(
  deps: CycleDeps,
  settings: CycleSettings,
  window: ReadWindow,
  recordedGaps: GapLedger,
  jumps: JumpRule,
  publishing: { readonly busy: boolean },
): FeedSources {
  const reading = {
    clock: deps.clock,
    metrics: deps.metrics,
    logger: deps.logger,
    random: deps.random,
    cpuTurns: deps.cpuTurns,
    recordedGaps,
    jumps,
  };
  const pages = new FeedReader(
    { ...reading, feed: deps.feed },
    {
      minPollWindowMs: settings.minPollWindowMs,
      pollBackoff: settings.pollBackoff,
      minEmptyPollIntervalMs: settings.minEmptyPollIntervalMs,
    },
    window,
  );
  if (settings.feedMode !== 'stream' || deps.stream === undefined) {
    return { reader: pages, pages, stream: undefined };
  }
  const stream = new StreamReader(
    { ...reading, stream: deps.stream, pages, lookup: deps.lookup, publishing },
    {
      recovery: settings.stream.recovery,
      lingerMs: settings.stream.lingerMs,
      // A micro-batch is worth sending at once when it fills a request to the bus.
      maxBatch: deps.publisher.limits.maxEntriesPerBatch,
      minPollWindowMs: settings.minPollWindowMs,
      reconnectBackoff: settings.stream.reconnectBackoff,
      // A quarter of what the cycle may hold; the rest is for what is being published.
      maxBufferedBytes: Math.floor(settings.heldBytes / 4),
    },
    window,
  );
  return { reader: stream, pages, stream };
}
