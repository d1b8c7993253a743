// Requests in flight for one function, and their time-weighted average since the last sample: the
// measure the autoscaler (autoscaler.ts) averages. An instant count sampled once a tick would miss
// short requests between two ticks; the integral over the tick sees every one of them (Little's law).
export class InFlightMeter {
  #inFlight = 0;
  #since: number;
  #last: number;
  /** Concurrency x milliseconds since the last sample. */
  #area = 0;
  #lastRequestAtMs: number | undefined;

  constructor(private readonly now: () => number = Date.now) {
    this.#since = now();
    this.#last = this.#since;
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  /** When the last request began; undefined before the first. */
  get lastRequestAtMs(): number | undefined {
    return this.#lastRequestAtMs;
  }

  #advance(): void {
    const t = this.now();
    this.#area += this.#inFlight * (t - this.#last);
    this.#last = t;
  }

  /** A request began; call the returned function once when it ends (a second call does nothing). */
  begin(): () => void {
    this.#advance();
    this.#inFlight++;
    this.#lastRequestAtMs = this.#last;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#advance();
      this.#inFlight--;
    };
  }

  /** The average concurrency since the previous sample (the current count when no time passed). */
  sample(): { atMs: number; concurrency: number } {
    this.#advance();
    const span = this.#last - this.#since;
    const concurrency = span > 0 ? this.#area / span : this.#inFlight;
    this.#area = 0;
    this.#since = this.#last;
    return { atMs: this.#last, concurrency };
  }
}
