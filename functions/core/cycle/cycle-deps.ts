import type { CheckpointStore } from '../checkpoint/store.ts';
import type {
  Clock,
  CpuTurns,
  CycleLogger,
  EventFeed,
  EventLookup,
  EventPublisher,
  EventStream,
  MetricsSink,
} from '../ports.ts';

/** The ports a poll cycle works over; adapters implement them (Lambda, local mode, tests). */
export interface CycleDeps {
  readonly feed: EventFeed;
  /** Single-event lookups: gap repair, and recovery of streamed events. Without them, neither. */
  readonly lookup?: EventLookup;
  /** The feed as a stream; required when `feedMode` is `stream`. */
  readonly stream?: EventStream;
  readonly publisher: EventPublisher;
  readonly checkpoints: CheckpointStore;
  readonly clock: Clock;
  readonly metrics: MetricsSink;
  readonly logger: CycleLogger;
  /** Source of jitter; injectable for deterministic tests. @default Math.random */
  readonly random?: () => number;
  /**
   * Turns on a thread shared with other programs' cycles (a worker's): taken before parsing a
   * page and before each request to the bus. @default none: the cycle has the thread to itself
   */
  readonly cpuTurns?: CpuTurns;
}
