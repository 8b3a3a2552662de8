/**
 * The ways the deployed function can read the feed, for the suite every one of them must pass
 * (`poller-lambda-modes-*.test.ts`): the same scenarios, only the function's environment and the
 * simulator's stream shape differ.
 */
import type { SimulatorOptions } from '../../functions/simulator/banking-simulator.ts';

export interface FeedModeCase {
  readonly name: string;
  readonly environment: Readonly<Record<string, string>>;
  readonly simulator: SimulatorOptions;
}

export const POLL_MODES: readonly FeedModeCase[] = [
  { name: 'poll mode', environment: { FEED_MODE: 'poll' }, simulator: {} },
];

export const STREAM_MODES: readonly FeedModeCase[] = [
  {
    name: 'stream mode, transactions read from pages (the stream as a doorbell)',
    environment: { FEED_MODE: 'stream', STREAM_RECOVERY: 'page' },
    simulator: { streamShape: 'documented' },
  },
  {
    name: 'stream mode, transactions looked up (GET /event/:id)',
    environment: { FEED_MODE: 'stream', STREAM_RECOVERY: 'lookup' },
    simulator: { streamShape: 'documented' },
  },
  {
    name: 'stream mode, a service whose stream keeps data.type',
    environment: { FEED_MODE: 'stream' },
    simulator: { streamShape: 'type-preserved' },
  },
];
