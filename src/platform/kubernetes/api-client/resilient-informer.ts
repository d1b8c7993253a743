// client-node's ListWatch relists after 410 Gone but stops for good on any other error (a dropped
// connection, an apiserver restart, RBAC hiccups). This wrapper restarts it with exponential backoff,
// forever, and replays the whole cache every resync period so missed events heal. Every object it caches
// is slimmed (slim.ts: no managedFields) as it arrives, from the list and from the watch alike.
import { makeInformer, type Informer, type KubeConfig, type KubernetesObject, type ListPromise, type ObjectCache } from '@kubernetes/client-node';
import { CacheIndex, INDEXES, type IndexName } from './cache-index.ts';
import { makeJsonInformer } from './json-watch.ts';
import { slimObject } from './slim.ts';
import { backoffDelay, realTimers, type Timers } from './timers.ts';

export type InformerEvent = 'add' | 'update' | 'delete' | 'resync';

export interface ResilientInformerOptions<T extends KubernetesObject> {
  readonly kubeConfig: KubeConfig;
  readonly name: string;
  /** API path, e.g. `/apis/batch/v1/jobs`. */
  readonly path: string;
  readonly list: ListPromise<T>;
  readonly labelSelector?: string;
  readonly resyncMs?: number;
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  readonly timers?: Timers;
  readonly onEvent: (event: InformerEvent, obj: T) => void;
  readonly onError?: (name: string, err: unknown, restartInMs: number) => void;
  /** Drops more than slimObject does, in place (a cache that needs only a few fields keeps only those). */
  readonly trim?: (obj: T) => void;
  /** Lookups this cache answers without a scan (byIndex; cache-index.ts). */
  readonly indexes?: readonly IndexName[];
  /** For tests: replaces makeJsonInformer (client-node's makeInformer on JsonWatch). */
  readonly makeInformer?: typeof makeInformer;
}

export class ResilientInformer<T extends KubernetesObject> {
  private readonly informer: Informer<T> & ObjectCache<T>;
  private readonly timers: Timers;
  private failures = 0;
  private stopped = true;
  private cancelRestart?: () => void;
  private cancelResync?: () => void;
  /** ListWatch.start() calls not yet settled: stop() must wait for them (see stop()). */
  private readonly starting = new Set<Promise<void>>();
  private markSynced!: () => void;
  /** Resolves after the first successful list. */
  private readonly synced = new Promise<void>((resolve) => (this.markSynced = resolve));
  /** Number of restarts after errors; for tests and metrics. */
  restarts = 0;
  private readonly indexes = new Map<IndexName, CacheIndex>();

  constructor(private readonly opts: ResilientInformerOptions<T>) {
    this.timers = opts.timers ?? realTimers;
    const make = opts.makeInformer ?? makeJsonInformer;
    const slim = (o: T): T => {
      slimObject(o);
      opts.trim?.(o);
      return o;
    };
    // ListWatch reports list failures through 'error' (start() still resolves), and emits 'connect'
    // before listing: a successful list is the only reliable sign of health.
    const list = async () => {
      const result = await opts.list();
      for (const o of result.items) slim(o);
      this.failures = 0;
      this.markSynced();
      return result;
    };
    this.informer = make<T>(opts.kubeConfig, opts.path, list, opts.labelSelector);
    for (const name of opts.indexes ?? []) this.indexes.set(name, new CacheIndex(INDEXES[name]));
    // ListWatch caches the very object it hands to these callbacks: slimming it here slims the cache. The
    // indexes move before the handler runs, so what it enqueues finds the object where it now belongs.
    const put = (o: T): T => {
      for (const index of this.indexes.values()) index.put(o);
      return o;
    };
    this.informer.on('add', (o) => opts.onEvent('add', put(slim(o))));
    this.informer.on('update', (o) => opts.onEvent('update', put(slim(o))));
    this.informer.on('delete', (o) => {
      for (const index of this.indexes.values()) index.remove(o);
      opts.onEvent('delete', slim(o));
    });
    this.informer.on('error', (err: unknown) => this.scheduleRestart(err));
  }

  get(name: string, namespace?: string): T | undefined {
    return this.informer.get(name, namespace);
  }

  list(namespace?: string): readonly T[] {
    return this.informer.list(namespace);
  }

  /** The cached objects whose `index` value is `value` (a scan when this informer keeps no such index). */
  byIndex(index: IndexName, value: string): T[] {
    const fn = INDEXES[index];
    const kept = this.indexes.get(index);
    if (!kept) return this.informer.list().filter((o) => fn(o) === value);
    const out: T[] = [];
    for (const key of kept.keys(value)) {
      const slash = key.indexOf('/');
      const o = this.informer.get(key.slice(slash + 1), key.slice(0, slash) || undefined);
      // The index follows events; the cache is the truth (an object it no longer holds, or holds changed, is left out).
      if (o && fn(o) === value) out.push(o);
    }
    return out;
  }

  /** Resolves after the first successful list (failed attempts are retried with backoff until then). */
  async start(): Promise<void> {
    this.stopped = false;
    this.startWatch();
    await this.synced;
    this.scheduleResync();
  }

  /**
   * Stops for good. ListWatch.stop() only aborts a watch request it already holds: one still connecting
   * (ListWatch assigns it only once the request resolves) would keep delivering events and hold the
   * process open. So wait for every start() in flight to settle, then stop once more.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelRestart?.();
    this.cancelResync?.();
    await this.informer.stop();
    if (this.starting.size === 0) return;
    await Promise.allSettled([...this.starting]);
    await this.informer.stop();
  }

  private startWatch(): void {
    const started = this.informer.start().catch((err: unknown) => this.scheduleRestart(err));
    this.starting.add(started);
    void started.finally(() => this.starting.delete(started));
  }

  private nextDelay(): number {
    this.failures++;
    const { baseMs, maxMs } = this.opts.backoff ?? { baseMs: 500, maxMs: 30_000 };
    return backoffDelay(this.failures, baseMs, maxMs);
  }

  private scheduleRestart(err: unknown): void {
    if (this.stopped) return;
    const delay = this.nextDelay();
    this.opts.onError?.(this.opts.name, err, delay);
    this.cancelRestart?.();
    this.cancelRestart = this.timers.after(delay, () => {
      if (this.stopped) return;
      this.restarts++;
      this.startWatch();
    });
  }

  private scheduleResync(): void {
    const every = this.opts.resyncMs;
    if (!every || this.stopped) return;
    this.cancelResync = this.timers.after(every, () => {
      if (this.stopped) return;
      for (const obj of this.informer.list()) this.opts.onEvent('resync', obj);
      this.scheduleResync();
    });
  }
}
