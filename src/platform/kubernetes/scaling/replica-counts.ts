// The calls in flight per function on this controller replica (issue 29), as /fn reports them through
// Platform.scaling.requestBegan. Every replica serves /fn, so the leader's autoscaler needs all of them:
// each replica serves report() on its metrics listener (counts-endpoint.ts) and the leader gathers them
// (counts-gatherer.ts). The report is cumulative (concurrency x milliseconds since the replica started),
// so the leader's average over any interval is exact whenever it asks, however many leaders ask, and a
// missed scrape loses nothing: the next one covers both intervals (Little's law, as in-flight-meter.ts).

/** One function's counts on one replica. */
export interface FunctionCount {
  /** Calls in flight now (held cold-start calls included). */
  readonly inFlight: number;
  /** The integral of in-flight calls over time since this replica first saw the function (ms). */
  readonly concurrencyMs: number;
  /** Wall-clock time (epoch ms) the last call began; absent before the first. */
  readonly lastRequestAt?: number;
}

/** What one replica serves: its counts per `namespace/name` at `atMs` (this replica's clock, epoch ms). */
export interface CountsReport {
  readonly atMs: number;
  readonly functions: Readonly<Record<string, FunctionCount>>;
}

interface Meter {
  inFlight: number;
  area: number;
  last: number;
  lastRequestAt?: number;
}

/** A function with nothing in flight and no call for this long is forgotten (the idle ceiling is 24 h). */
const FORGET_AFTER_MS = 25 * 60 * 60 * 1000;

export class ReplicaCounts {
  readonly #meters = new Map<string, Meter>();

  constructor(private readonly now: () => number = Date.now) {}

  /** A call began; call the returned function once when it ends (a second call does nothing). */
  begin(namespace: string, name: string): () => void {
    const key = `${namespace}/${name}`;
    const t = this.now();
    let m = this.#meters.get(key);
    if (!m) {
      m = { inFlight: 0, area: 0, last: t };
      this.#meters.set(key, m);
    }
    advance(m, t);
    m.inFlight++;
    m.lastRequestAt = t;
    const meter = m;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      advance(meter, this.now());
      meter.inFlight--;
    };
  }

  report(): CountsReport {
    const atMs = this.now();
    const functions: Record<string, FunctionCount> = {};
    for (const [key, m] of this.#meters) {
      advance(m, atMs);
      if (m.inFlight === 0 && atMs - (m.lastRequestAt ?? 0) > FORGET_AFTER_MS) {
        this.#meters.delete(key);
        continue;
      }
      functions[key] = { inFlight: m.inFlight, concurrencyMs: m.area, ...(m.lastRequestAt !== undefined ? { lastRequestAt: m.lastRequestAt } : {}) };
    }
    return { atMs, functions };
  }
}

function advance(m: Meter, t: number): void {
  if (t > m.last) {
    m.area += m.inFlight * (t - m.last);
    m.last = t;
  }
}
