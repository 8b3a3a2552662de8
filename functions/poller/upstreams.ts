/**
 * The banking services as the container's clients see them: one `Upstream` per secret (and per
 * way of reading its feed), kept while the container is warm so that its credentials, token and
 * connections are reused across invocations. A worker serves many programs, so the cache is
 * bounded: after a worker's run the upstreams no program used for longest are dropped, their
 * connections closed, until `maxKept` remain.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SecretsManagerCredentialsProvider } from '../adapters/aws/secrets-manager-credentials.ts';
import { BankConnections } from '../adapters/banking-http/bank-connections.ts';
import { BankingEventFeed } from '../adapters/banking-http/banking-event-feed.ts';
import { BankingEventStream } from '../adapters/banking-http/banking-event-stream.ts';
import { ClientCredentialsTokenProvider } from '../adapters/banking-http/token-cache.ts';
import type { BusEntryRules } from '../core/bus-entry-rules.ts';
import type { MetricsSink } from '../core/ports.ts';

/**
 * The banking service as one secret's client sees it: polls and lookups, and the stream; one
 * token for both, and one set of connections (its client certificate, the egress proxy).
 */
export interface Upstream {
  readonly credentials: SecretsManagerCredentialsProvider;
  readonly feed: BankingEventFeed;
  readonly stream: BankingEventStream;
  readonly connections: BankConnections;
  /** Where its token refreshes are counted: the metrics of the program it serves now. */
  metrics: MetricsSink;
}

/** How a program's feed is read: the settings an upstream is built with (they may differ per program). */
export interface FeedReading {
  readonly pollLimit: number;
  readonly pollCursorParam: string;
  readonly pollLimitParam: string;
  readonly streamCursorParam: string;
  /** The most of a page's body (or a stream message) read at once: the program's part of the memory. */
  readonly maxPageBytes: number;
}

export interface UpstreamsOptions {
  readonly secretsManager: SecretsManagerClient;
  readonly credentialsTtlSeconds: number;
  /** What the deployment's bus accepts: an event it would refuse is quarantined as it is read. */
  readonly entryRules: BusEntryRules;
}

const NO_METRICS: MetricsSink = { add: () => {} };

export class Upstreams {
  readonly #options: UpstreamsOptions;
  /** In the order last used: the first is the one no program used for longest. */
  readonly #cache = new Map<string, Upstream>();

  constructor(options: UpstreamsOptions) {
    this.#options = options;
  }

  /** The upstream of `secretId` read as `reading` says, built on first use; it reports to `metrics`. */
  get(secretId: string, reading: FeedReading, metrics: MetricsSink): Upstream {
    const key = JSON.stringify([
      secretId,
      reading.pollLimit,
      reading.pollCursorParam,
      reading.pollLimitParam,
      reading.streamCursorParam,
      reading.maxPageBytes,
    ]);
    let upstream = this.#cache.get(key);
    if (upstream === undefined) upstream = this.#build(secretId, reading);
    this.#cache.delete(key);
    this.#cache.set(key, upstream);
    upstream.metrics = metrics;
    return upstream;
  }

  /** Every upstream kept. */
  all(): readonly Upstream[] {
    return [...this.#cache.values()];
  }

  /**
   * Drops the upstreams no program used for longest until `maxKept` remain, closing their
   * connections. Called between runs: none of them serves a cycle then.
   */
  async trim(maxKept: number): Promise<void> {
    const dropped: Upstream[] = [];
    for (const [key, upstream] of this.#cache) {
      if (this.#cache.size <= maxKept) break;
      this.#cache.delete(key);
      dropped.push(upstream);
    }
    await Promise.all(dropped.map((upstream) => upstream.connections.destroy()));
  }

  #build(secretId: string, reading: FeedReading): Upstream {
    const { secretsManager, credentialsTtlSeconds, entryRules } = this.#options;
    const credentials = new SecretsManagerCredentialsProvider({
      client: secretsManager,
      secretId,
      ttlMs: credentialsTtlSeconds * 1000,
    });
    const connections = new BankConnections();
    const tokens = new ClientCredentialsTokenProvider({
      credentials,
      connections,
      onRefresh: () => upstream.metrics.add('AuthRefreshes', 'Count', 1),
    });
    const upstream: Upstream = {
      metrics: NO_METRICS,
      credentials,
      feed: new BankingEventFeed({
        credentials,
        tokens,
        entryRules,
        cursorParam: reading.pollCursorParam,
        limitParam: reading.pollLimitParam,
        limit: reading.pollLimit,
        maxPageBytes: reading.maxPageBytes,
      }),
      stream: new BankingEventStream({
        credentials,
        tokens,
        entryRules,
        cursorParam: reading.streamCursorParam,
        maxMessageChars: reading.maxPageBytes,
      }),
      connections,
    };
    return upstream;
  }
}
