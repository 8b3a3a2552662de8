/**
 * The closed sets of values some props take, as enums: what Python, Java, .NET and Go users pick
 * from (`FeedMode.STREAM`). Each member's value is the string the prop has always taken, and the
 * props still take those strings (`feedMode: 'stream'`), so TypeScript call sites are unchanged.
 * The settings table (`functions/settings/settings.ts`) declares the values; a test keeps each
 * enum equal to its setting's values.
 */

/** How the handler reads the feed (`feedMode`). */
export enum FeedMode {
  /** Long-polls `GET /events`. */
  POLL = 'poll',
  /** Reads `GET /events/stream` (SSE), falling back to polls. */
  STREAM = 'stream',
}

/** Stream mode: how a transaction whose `data.type` the stream may have replaced is fetched (`streamRecovery`). */
export enum StreamRecovery {
  /** Reads `GET /events` from the cursor (the stream acts as a doorbell). */
  PAGE = 'page',
  /** Fetches each one with `GET /event/:id`. */
  LOOKUP = 'lookup',
}

/** Where a program without a checkpoint starts (`startPosition`), besides a sequence number. */
export enum StartPosition {
  /** Every event the feed still has. */
  BEGINNING = 'beginning',
  /** Only events created from the first run on. */
  LATEST = 'latest',
}

/** Which kind of EventBridge bus the poller publishes to (`eventBusKind`). */
export enum EventBusKind {
  /** An EventBridge event bus: rules and targets, an archive; at-least-once, unordered. */
  CLASSIC = 'classic',
  /** The EventBridge Custom Event Bus (`AWS::EventsV2::EventBus`): subscribers, FIFO per event group. */
  CUSTOM = 'custom',
}

/** Custom bus only: the event group a FIFO subscriber keeps in order (`eventGroupBy`). */
export enum EventGroupBy {
  /** The program's whole feed. */
  PROGRAM = 'program',
  /** Each account's status changes, and each transaction's own lifecycle. */
  ACCOUNT = 'account',
  /** No order. */
  NONE = 'none',
}
