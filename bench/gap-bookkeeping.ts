/**
 * `npm run bench:gaps`: what a feed that skips numbers everywhere costs the cycle. CPU time per
 * 1 000 events published, the whole cycle over in-memory ports (no network, gap repair on with
 * lookups that find nothing), for a contiguous feed and for feeds whose every event is followed by
 * two skipped numbers, at growing sizes: 1 000, 5 000 and 20 000 ranges (up to 40 000 skipped
 * numbers in one run). Bookkeeping that grew with the number of ranges would show as CPU per event
 * rising with the size; the gap ledger's in-run bound and binary searches keep it flat.
 *
 * Rounds alternate the feeds so drift on a shared machine hits all alike; the median is reported.
 * Writes bench/results/gaps-<date>.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MemoryCheckpointStore } from '../functions/adapters/local/memory-checkpoint-store.ts';
import { systemClock } from '../functions/adapters/system-clock.ts';
import type { BankingEvent, FeedPage } from '../functions/core/banking-event.ts';
import { runPollCycle } from '../functions/core/poll-cycle.ts';
import type { EventFeed, EventLookup, PollRequest } from '../functions/core/ports.ts';
import {
  InMemoryPublisher,
  makeEvent,
  RecordingLogger,
  RecordingMetrics,
} from '../test/support/in-memory-ports.ts';

const ROUNDS = Number(process.argv[2] ?? 5);
const SIZES = [1_000, 5_000, 20_000] as const;
const PAGE = 100;

/** A feed over a fixed list, by cursor; "nothing new" at once once it is read to the end. */
class ListFeed implements EventFeed, EventLookup {
  constructor(private readonly events: readonly BankingEvent[]) {}

  async poll({ after }: PollRequest): Promise<FeedPage> {
    let low = 0;
    let high = this.events.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.events[middle]!.sequence_number <= (after ?? 0)) low = middle + 1;
      else high = middle;
    }
    const events = this.events.slice(low, low + PAGE);
    return { events, lastSequenceNumber: events.at(-1)?.sequence_number ?? after };
  }

  async fetchEventBySequence(): Promise<BankingEvent | null> {
    return null;
  }

  async fetchEventById(): Promise<BankingEvent | null> {
    return null;
  }
}

/** `count` events, each followed by `skip` unused numbers. */
function feedOf(count: number, skip: number): BankingEvent[] {
  return Array.from({ length: count }, (_, index) => makeEvent(1 + index * (1 + skip)));
}

/** One cycle draining `events`; CPU milliseconds per 1 000 events published. */
async function drain(events: readonly BankingEvent[]): Promise<{ cpuMsPer1000: number; openGaps: number }> {
  const feed = new ListFeed(events);
  const checkpoints = new MemoryCheckpointStore();
  const stop = new AbortController();
  const before = process.cpuUsage();
  const summary = await runPollCycle(
    {
      feed,
      lookup: feed,
      publisher: new InMemoryPublisher(),
      checkpoints,
      clock: systemClock,
      metrics: new RecordingMetrics(),
      logger: new RecordingLogger(),
    },
    {
      program: 'bench',
      owner: 'bench',
      remainingMs: 600_000,
      stopSignal: stop.signal,
      onCaughtUp: () => stop.abort(),
    },
  );
  const used = process.cpuUsage(before);
  if (summary.published !== events.length)
    throw new Error(`published ${summary.published} of ${events.length}`);
  const openGaps = (await checkpoints.read()).openGaps.length;
  return { cpuMsPer1000: (used.user + used.system) / 1_000 / (events.length / 1_000), openGaps };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Row {
  readonly events: number;
  readonly skippedRanges: number;
  readonly cpuMsPer1000: number;
  readonly openGapsInItem: number;
}

async function main(): Promise<void> {
  const cases = SIZES.flatMap((size) => [
    { size, skip: 0, events: feedOf(size, 0) },
    { size, skip: 2, events: feedOf(size, 2) },
  ]);
  const samples = new Map(cases.map((entry) => [entry, [] as number[]]));
  const gapsInItem = new Map<(typeof cases)[number], number>();
  await drain(feedOf(2_000, 2)); // warm-up: JIT, first allocations
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const entry of round % 2 === 0 ? cases : [...cases].reverse()) {
      const { cpuMsPer1000, openGaps } = await drain(entry.events);
      samples.get(entry)!.push(cpuMsPer1000);
      gapsInItem.set(entry, openGaps);
    }
  }
  const rows: Row[] = cases.map((entry) => ({
    events: entry.size,
    skippedRanges: entry.skip === 0 ? 0 : entry.size - 1,
    cpuMsPer1000: Number(median(samples.get(entry)!).toFixed(1)),
    openGapsInItem: gapsInItem.get(entry)!,
  }));
  console.log('events   skipped ranges   CPU ms / 1 000 events   ranges in the item');
  for (const row of rows) {
    console.log(
      `${String(row.events).padStart(6)}   ${String(row.skippedRanges).padStart(14)}   ${String(row.cpuMsPer1000).padStart(21)}   ${String(row.openGapsInItem).padStart(18)}`,
    );
  }
  const gappy = rows.filter((row) => row.skippedRanges > 0);
  const slope = gappy.at(-1)!.cpuMsPer1000 / gappy[0]!.cpuMsPer1000;
  console.log(
    `CPU per event, ${gappy.at(-1)!.skippedRanges} ranges ÷ ${gappy[0]!.skippedRanges}: ${slope.toFixed(2)}`,
  );
  const directory = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
  mkdirSync(directory, { recursive: true });
  const date = new Date().toISOString().slice(0, 10);
  writeFileSync(
    path.join(directory, `gaps-${date}.json`),
    `${JSON.stringify({ date, rounds: ROUNDS, node: process.version, rows, slope }, null, 2)}\n`,
  );
}

await main();
