// Remembers where /fn should send calls, so the proxy does not ask the API server per request: answers
// live for a short TTL (shorter for "not there yet" answers, which users wait on), concurrent lookups of
// one function share a single load, and when a refresh fails the last answer keeps serving for a while
// (an API server hiccup must not take every function offline).
import type { Endpoint } from '../types.ts';

export interface EndpointCacheOptions {
  readonly load: (namespace: string, name: string) => Promise<Endpoint>;
  /** How long a ready answer is reused. Default 2000 ms. */
  readonly readyTtlMs?: number;
  /** How long not-found / disabled / not-ready answers are reused. Default 1000 ms. */
  readonly otherTtlMs?: number;
  /** How long a last answer may serve while refreshes fail. Default 60 s. */
  readonly staleMs?: number;
  /** Entries kept at most (least recently loaded go first). Default 10,000. */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

interface Entry {
  value: Endpoint;
  loadedAt: number;
}

export class EndpointCache {
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Endpoint>>();
  private readonly readyTtl: number;
  private readonly otherTtl: number;
  private readonly staleMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  /** Loads that went to the API server (for tests and the benchmark). */
  loads = 0;

  constructor(private readonly opts: EndpointCacheOptions) {
    this.readyTtl = opts.readyTtlMs ?? 2000;
    this.otherTtl = opts.otherTtlMs ?? 1000;
    this.staleMs = opts.staleMs ?? 60_000;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  async get(namespace: string, name: string): Promise<Endpoint> {
    const key = `${namespace}/${name}`;
    const entry = this.entries.get(key);
    const now = this.now();
    if (entry && now - entry.loadedAt < (entry.value.kind === 'ready' ? this.readyTtl : this.otherTtl)) return entry.value;
    const pending = this.loading.get(key);
    if (pending) return pending;
    const load = this.refresh(key, namespace, name, entry, now);
    this.loading.set(key, load);
    try {
      return await load;
    } finally {
      this.loading.delete(key);
    }
  }

  /** Forgets a function's answer (after this replica changed it). */
  invalidate(namespace: string, name: string): void {
    this.entries.delete(`${namespace}/${name}`);
  }

  private async refresh(key: string, namespace: string, name: string, previous: Entry | undefined, now: number): Promise<Endpoint> {
    this.loads++;
    try {
      const value = await this.opts.load(namespace, name);
      this.entries.delete(key);
      if (this.entries.size >= this.maxEntries) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
      this.entries.set(key, { value, loadedAt: this.now() });
      return value;
    } catch (err) {
      if (previous && now - previous.loadedAt < this.staleMs) return previous.value;
      throw err;
    }
  }
}
