/**
 * The first failure of a cycle, and the signal that stops the rest: no further poll, no batch not
 * yet sent. What is already being published finishes and is checkpointed before the cycle fails.
 */
export class CycleHalt {
  readonly #controller = new AbortController();
  readonly #onHalt: Array<() => void> = [];
  #failure: { readonly error: unknown } | undefined;

  /** Runs `stop` at the first failure (the publish pipeline stops sending). */
  whenHalted(stop: () => void): void {
    this.#onHalt.push(stop);
  }

  /** Aborts at the first failure. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get failed(): boolean {
    return this.#failure !== undefined;
  }

  /** Records `error` unless an earlier failure was recorded, and stops everything else. */
  fail(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#failure = { error };
    for (const stop of this.#onHalt) stop();
    this.#controller.abort();
  }

  /** Throws the first failure, if any. */
  throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}
