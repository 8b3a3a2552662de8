import type { BankingEvent } from '../banking-event.ts';
import type { Clock, MetricsSink } from '../ports.ts';

/**
 * The lag the alarm watches (`LagSeconds`): 0 once every event the feed had when it last said
 * "nothing new" is accepted (pages still being published when that answer came count too);
 * otherwise the age of the newest accepted event. A 0 is emitted once per change, not once per
 * empty long poll.
 */
export class LagGauge {
  readonly #clock: Clock;
  readonly #metrics: MetricsSink;
  /**
   * The highest sequence number seen when the feed last said nothing was new (`null` inside: it
   * had nothing at all): once everything up to it is accepted, the run is caught up.
   */
  #caughtUpThrough: { readonly sequence: number | null } | undefined;
  #lagSeconds: number | null = null;
  #newest: BankingEvent | undefined;

  constructor(deps: { readonly clock: Clock; readonly metrics: MetricsSink }) {
    this.#clock = deps.clock;
    this.#metrics = deps.metrics;
  }

  /** The last lag measured; `null` before any. */
  get lagSeconds(): number | null {
    return this.#lagSeconds;
  }

  /** `created_dt` of the newest valid event accepted, recorded with the checkpoint for `status`. */
  get newestCreatedDt(): string | undefined {
    return this.#newest?.created_dt;
  }

  /** Notes an accepted event. A quarantined event's time may be anything: lag counts valid events only. */
  accepted(event: BankingEvent): void {
    const newer = this.#newest === undefined || event.sequence_number > this.#newest.sequence_number;
    if (newer && event.invalid === undefined) this.#newest = event;
  }

  /** The feed said nothing is new, with everything up to `highestRead` read. */
  caughtUp(highestRead: number | null, safeCheckpoint: number | null): void {
    this.#caughtUpThrough = { sequence: highestRead };
    this.measure(safeCheckpoint);
  }

  /** Measures the lag with the checkpoint now safe to commit, and emits it. */
  measure(safeCheckpoint: number | null): void {
    const through = this.#caughtUpThrough;
    const caughtUp =
      through !== undefined &&
      (through.sequence === null || (safeCheckpoint !== null && safeCheckpoint >= through.sequence));
    if (caughtUp) {
      if (this.#lagSeconds !== 0) this.#metrics.add('LagSeconds', 'Seconds', 0);
      this.#lagSeconds = 0;
    } else if (this.#newest !== undefined) {
      this.#lagSeconds = Math.max(0, (this.#clock.now() - Date.parse(this.#newest.created_dt)) / 1000);
      this.#metrics.add('LagSeconds', 'Seconds', this.#lagSeconds);
    }
  }
}
