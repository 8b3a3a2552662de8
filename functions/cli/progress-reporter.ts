import type { MetricName, MetricsSink } from '../core/ports.ts';

export interface ProgressSnapshot {
  readonly published: number;
  readonly eventsPerSecond: number;
  readonly checkpoint: number | null;
  readonly lagSeconds: number | null;
  /** Polls that failed and were tried again, plus PutEvents entries sent again. */
  readonly retries: number;
}

/**
 * The local run's metrics: keeps the few numbers a person watching wants and renders them as one
 * short line (events/s since the last line, checkpoint, lag, retries).
 */
export class ProgressReporter implements MetricsSink {
  #published = 0;
  #publishedAtLastReport = 0;
  #lastReportAt: number;
  #checkpoint: number | null = null;
  #lag: number | null = null;
  #retries = 0;

  constructor(private readonly now: () => number = Date.now) {
    this.#lastReportAt = now();
  }

  add(name: MetricName, _unit: string, value: number): void {
    if (name === 'EventsPublished') this.#published += value;
    else if (name === 'CheckpointSequence') this.#checkpoint = value;
    else if (name === 'LagSeconds') this.#lag = value;
    else if (name === 'PollErrors' || name === 'PublishRetries') this.#retries += value;
  }

  /** Numbers since the previous snapshot (rate) and overall (totals). */
  snapshot(): ProgressSnapshot {
    const now = this.now();
    const seconds = Math.max(0.001, (now - this.#lastReportAt) / 1000);
    const rate = (this.#published - this.#publishedAtLastReport) / seconds;
    this.#lastReportAt = now;
    this.#publishedAtLastReport = this.#published;
    return {
      published: this.#published,
      eventsPerSecond: rate,
      checkpoint: this.#checkpoint,
      lagSeconds: this.#lag,
      retries: this.#retries,
    };
  }

  static format(snapshot: ProgressSnapshot): string {
    const lag = snapshot.lagSeconds === null ? 'n/a' : `${snapshot.lagSeconds.toFixed(1)} s`;
    return `[poller] ${snapshot.eventsPerSecond.toFixed(1)} events/s · published ${snapshot.published} · checkpoint ${snapshot.checkpoint ?? 'none'} · lag ${lag} · retries ${snapshot.retries}`;
  }
}
