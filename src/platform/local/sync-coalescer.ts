// Turns any number of sync requests into as few runs as correctness allows: requests while idle
// start one run; any requests while a run is going produce exactly one more run after it (so a push
// during a sync is never missed, and a burst of ten webhooks costs two syncs at most).
export class SyncCoalescer {
  readonly #run: (reasons: string[]) => Promise<void>;
  readonly #onError: (err: unknown) => void;
  #running: Promise<void> | undefined;
  #pending: string[] | undefined;
  #closed = false;

  constructor(run: (reasons: string[]) => Promise<void>, onError: (err: unknown) => void) {
    this.#run = run;
    this.#onError = onError;
  }

  /** Never waits for the sync; returns at once. */
  request(reason: string): void {
    if (this.#closed) return;
    (this.#pending ??= []).push(reason);
    if (!this.#running) this.#running = this.#loop();
  }

  /** A run is going or pending. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /** Resolves when no run is going and none is pending. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#pending = undefined;
    await this.idle();
  }

  async #loop(): Promise<void> {
    // Yield once so requests from the same tick join this run.
    await Promise.resolve();
    while (this.#pending && !this.#closed) {
      const reasons = this.#pending;
      this.#pending = undefined;
      try {
        await this.#run(reasons);
      } catch (err) {
        this.#onError(err);
      }
    }
    this.#running = undefined;
  }
}
