// The leader's view of every replica's calls in flight (issue 29): its own counts read in process, the
// other replicas' reports fetched from their metrics listeners (peer-discovery.ts finds them), combined
// per function. A replica that stops answering keeps its last contribution for GRACE_MS (a slow scrape
// or a short hiccup must not look like the load vanished: no flapping), then is dropped.
import type { CountsReport, FunctionCount } from './replica-counts.ts';

/** What the autoscaler reads per `namespace/name`, all replicas together. */
export interface GatheredCount {
  /** Average calls in flight since the previous gather. */
  readonly concurrency: number;
  readonly inFlight: number;
  /** Epoch ms of the last call on any replica; absent when none has had one. */
  readonly lastRequestAt?: number;
}

export interface CountsGathererOptions {
  /** This replica's report (no HTTP to itself). */
  readonly self: () => CountsReport;
  /** The other replicas' counts URLs (peer-discovery.ts); none for a single replica. */
  readonly peers: () => Promise<readonly string[]>;
  /** Fetches one peer's report; throws when it does not answer. */
  readonly fetchReport: (url: string) => Promise<CountsReport>;
  readonly now?: () => number;
  readonly graceMs?: number;
  readonly onPeerDropped?: (url: string, reason: string) => void;
}

/** How long a replica that stopped answering still counts with its last numbers. */
export const GRACE_MS = 10_000;

interface Peer {
  report?: CountsReport;
  contribution: Map<string, GatheredCount>;
  lastOkMs: number;
  lastError?: string;
}

/** One replica's share between two of its reports: the exact average over that interval (pure). */
export function contribution(prev: CountsReport | undefined, next: CountsReport): Map<string, GatheredCount> {
  const out = new Map<string, GatheredCount>();
  for (const [key, c] of Object.entries(next.functions)) {
    const before: FunctionCount | undefined = prev?.functions[key];
    const span = prev ? next.atMs - prev.atMs : 0;
    // First sight, or a restarted replica (its integral went back): the count now stands in.
    const delta = before ? c.concurrencyMs - before.concurrencyMs : -1;
    const concurrency = span > 0 && delta >= 0 ? delta / span : c.inFlight;
    out.set(key, { concurrency, inFlight: c.inFlight, ...(c.lastRequestAt !== undefined ? { lastRequestAt: c.lastRequestAt } : {}) });
  }
  return out;
}

/** The sum over replicas (pure): concurrency and in flight add up, the last call is the latest. */
export function combine(parts: Iterable<Map<string, GatheredCount>>): Map<string, GatheredCount> {
  const out = new Map<string, GatheredCount>();
  for (const part of parts) {
    for (const [key, c] of part) {
      const had = out.get(key);
      if (!had) {
        out.set(key, c);
        continue;
      }
      const last = Math.max(had.lastRequestAt ?? 0, c.lastRequestAt ?? 0);
      out.set(key, { concurrency: had.concurrency + c.concurrency, inFlight: had.inFlight + c.inFlight, ...(last > 0 ? { lastRequestAt: last } : {}) });
    }
  }
  return out;
}

export class CountsGatherer {
  readonly #opts: CountsGathererOptions;
  readonly #now: () => number;
  readonly #peers = new Map<string, Peer>();
  #self: CountsReport | undefined;

  constructor(opts: CountsGathererOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  /** Replicas counted now, this one included (for logs and tests). */
  get replicas(): number {
    return this.#peers.size + 1;
  }

  async gather(): Promise<Map<string, GatheredCount>> {
    const self = this.#opts.self();
    const parts = [contribution(this.#self, self)];
    this.#self = self;
    let urls: readonly string[] = [];
    try {
      urls = await this.#opts.peers();
    } catch {
      // Discovery failed (API server hiccup): keep asking the peers already known.
      urls = [...this.#peers.keys()];
    }
    const now = this.#now();
    await Promise.all(
      [...new Set([...urls, ...this.#peers.keys()])].map(async (url) => {
        const peer = this.#peers.get(url) ?? { contribution: new Map<string, GatheredCount>(), lastOkMs: now };
        this.#peers.set(url, peer);
        try {
          const report = await this.#opts.fetchReport(url);
          peer.contribution = contribution(peer.report, report);
          peer.report = report;
          peer.lastOkMs = now;
          delete peer.lastError;
        } catch (err) {
          peer.lastError = err instanceof Error ? err.message : String(err);
          if (now - peer.lastOkMs > (this.#opts.graceMs ?? GRACE_MS)) {
            this.#peers.delete(url);
            this.#opts.onPeerDropped?.(url, peer.lastError);
          }
        }
      }),
    );
    for (const peer of this.#peers.values()) parts.push(peer.contribution);
    return combine(parts);
  }
}
