/**
 * What EventBridge takes in one PutEvents request, on either bus, as the publishers state it to
 * the core (`PublishLimits`) and the settings bound `MAX_EVENT_ENTRY_BYTES` with. The core knows
 * none of these numbers: it asks its publisher.
 *
 * Sizes: EventBridge raised its entry (and request) cap from 256 KB to 1 MB (1 MiB, 1,048,576
 * bytes) on 2026-01-29 (AWS Compute Blog, "More room to build: serverless services now support
 * payloads up to 1 MB"). The bus then delivers each event wrapped in its envelope (id, time,
 * account, region, source, detail-type) to targets whose own cap is 1 MiB (SQS, asynchronous
 * Lambda): the default, 1,000,000, leaves 48 KiB of room for that envelope, so every event
 * published is also deliverable. The Custom Event Bus documents no size limit of its own that we
 * could find; the classic bus's are kept, and a refusal for size is still recognised
 * (`put-events-failure.ts`) and goes through the claim check.
 */

/** The bus's own cap on a PutEvents entry and request (1 MiB); the setting may not exceed it. */
export const PUT_EVENTS_MAX_BYTES = 1_048_576;

/** Largest entry (and request) the poller sends by default; larger events go through the claim check. */
export const DEFAULT_MAX_ENTRY_BYTES = 1_000_000;

/** The smallest setting that makes sense: below it, ordinary events would be claim-checked. */
export const MIN_MAX_ENTRY_BYTES = 1_024;

/** Entries per PutEvents request on the classic bus. */
export const CLASSIC_BUS_MAX_ENTRIES = 10;

/** Entries per PutEvents request on the Custom Event Bus. */
export const CUSTOM_BUS_MAX_ENTRIES = 100;
