// A keyed work queue in the style of client-go's workqueue: a key is never handled twice at once; adding a
// key while it runs gives exactly one more run after it (so a push during a sync is never lost); failures
// retry with exponential backoff; a handler may ask to run again after a delay (spec.interval). Waiting keys
// take turns by namespace, then by group (groupOf: `namespace/repository` or `namespace`: fair-lanes.ts),
// and the namespace running the fewest keys of this queue goes first, so one tenant's flood or one large
// repository cannot delay the others; `maxRunningPerNamespace` caps what one namespace runs at once, so it
// never holds every slot of the pool. Urgent keys (`urgentOf`: a sync request that names a new head) wait in
// lanes of their own, taken before the others' (namespaces take turns there too, and the cap holds): a
// webhook's push does not wait behind a hundred routine resyncs. The lanes only order what waits: with every
// slot taken by routine runs (109-192 ms each at 100 repositories) a push still waited for one to end, so
// an `urgentPool` keeps slots that only urgent keys take, beyond the pool and the namespace cap, used when
// the pool has no room for them: a push starts at once, and a tenant's routine work can never fill them. With a `budget` (time-budget.ts), a group
// whose runs kept the controller busy more than its share waits before its next run (a run costs its
// wall time less what other tenants' runs beside it added: RunMeter), and what is added meanwhile folds
// into that one run. With a `namespaceBudget`, a namespace's groups together keep to one share too, while a
// lighter namespace (one not in debt) has had keys within `contendedMs`: many busy repositories of one
// tenant do not add up to many shares beside another tenant, and a tenant alone (or among tenants all as
// busy: a restart) is not held back by it. The pool runs anonymous turns, each picks the next key.
import type PQueue from 'p-queue';
import { FairLanes, tenantOf } from './fair-lanes.ts';
import { RunMeter, type TimeBudget } from './time-budget.ts';
import { backoffDelay, realTimers, type Timers } from './timers.ts';

export interface HandlerResult {
  /** Run this key again after this many ms (e.g. the repository's interval). */
  readonly requeueAfterMs?: number;
}

export interface WorkQueueOptions {
  readonly name: string;
  readonly handler: (key: string) => Promise<HandlerResult | void>;
  /** Bounds concurrency; may be shared by several queues. */
  readonly pool: PQueue;
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  readonly timers?: Timers;
  readonly onError?: (key: string, err: unknown, retryInMs: number) => void;
  readonly onDepth?: (name: string, depth: number) => void;
  /** The fairness group of a key, `namespace/repository` or `namespace` (default: the key's namespace). */
  readonly groupOf?: (key: string) => string;
  /** Most keys of one namespace running at once (default: no cap beyond the pool's). */
  readonly maxRunningPerNamespace?: number;
  /** Asked when a key is added: true puts it before every routine key waiting (default: none is). */
  readonly urgentOf?: (key: string) => boolean;
  /** Slots only urgent keys take, beyond `pool` and `maxRunningPerNamespace`, when `pool` has no room for them (default: none). */
  readonly urgentPool?: PQueue;
  /** Run time each group may use (charged per run); a group in debt waits (default: none waits). */
  readonly budget?: TimeBudget;
  /** Run time each namespace may use while a lighter namespace (not in debt) had keys within `contendedMs`. */
  readonly namespaceBudget?: { readonly budget: TimeBudget; readonly contendedMs: number };
  /** A key was held back for its group's (or namespace's) budget this long; once per deferral. */
  readonly onBudgetWait?: (key: string, waitMs: number) => void;
}

type KeyState = 'queued' | 'running' | 'dirty';

export class WorkQueue {
  private readonly state = new Map<string, KeyState>();
  private readonly delayed = new Map<string, { at: number; cancel: () => void }>();
  private readonly failures = new Map<string, number>();
  /** Queued keys by group; each key in either has one turn waiting in the pool. Urgent ones go first. */
  private readonly ready = new FairLanes<string>();
  private readonly urgent = new FairLanes<string>();
  /** Running keys by namespace (the tenant of the key's group when it was queued). */
  private readonly running = new Map<string, number>();
  /** Where each queued key waits: its group, and whether in the urgent lanes. */
  private readonly queuedAs = new Map<string, { readonly group: string; urgent: boolean }>();
  /** Turns that found only namespaces at their cap: given back to the pool as a run ends. */
  private parked = 0;
  /** What each run costs its group's budget (its wall time less what other tenants' runs beside it added). */
  private readonly meter = new RunMeter();
  /** When each namespace last had a key added or ending (for namespaceBudget's contention). */
  private readonly seen = new Map<string, number>();
  /** Groups that have had a run in this process: a group's first run (its cold or start-up sync) is not charged to its own budget. */
  private readonly ranBefore = new Set<string>();
  private readonly timers: Timers;
  private stopped = false;

  constructor(private readonly opts: WorkQueueOptions) {
    this.timers = opts.timers ?? realTimers;
  }

  /** Schedules a run of key, now or after delayMs; coalesces with a run already pending. */
  add(key: string, delayMs = 0): void {
    if (this.stopped) return;
    if (delayMs > 0) return this.addLater(key, delayMs);
    const current = this.state.get(key);
    if (current === 'queued') return this.promote(key);
    if (current === 'dirty') return;
    if (current === 'running') {
      this.state.set(key, 'dirty');
      return;
    }
    const group = this.opts.groupOf?.(key) ?? namespaceOf(key);
    const now = this.timers.now();
    const wait = Math.max(this.opts.budget?.waitMs(group, now) ?? 0, this.namespaceWait(tenantOf(group), now));
    if (wait > 0) {
      // Reported when the key starts waiting; pushes while it waits fold into that same deferred run.
      if (!this.delayed.has(key)) this.opts.onBudgetWait?.(key, wait);
      return this.addLater(key, wait);
    }
    this.cancelDelayed(key);
    this.state.set(key, 'queued');
    this.report();
    const urgent = this.opts.urgentOf?.(key) ?? false;
    this.queuedAs.set(key, { group, urgent });
    (urgent ? this.urgent : this.ready).push(group, key);
    // A run in the kept slot takes one urgent key: no pool turn is owed for this one.
    if (urgent && this.wouldWait(tenantOf(group)) && this.takeUrgentSlot()) return;
    void this.opts.pool.add(() => this.turn());
  }

  /** A key of namespace `ns` queued now would wait: the pool is full, or the namespace at its cap. */
  private wouldWait(ns: string): boolean {
    const { pool, maxRunningPerNamespace: cap } = this.opts;
    return pool.pending + pool.size >= pool.concurrency || (cap !== undefined && (this.running.get(ns) ?? 0) >= cap);
  }

  /** Starts a turn in a kept slot for urgent keys if one is free; false when none is. */
  private takeUrgentSlot(): boolean {
    const slots = this.opts.urgentPool;
    if (!slots || slots.pending + slots.size >= slots.concurrency || this.urgent.size === 0) return false;
    void slots.add(() => this.turn(true));
    return true;
  }

  /** How long namespace `ns` waits for its namespace budget: only while a lighter namespace has been active. */
  private namespaceWait(ns: string, now: number): number {
    const nb = this.opts.namespaceBudget;
    if (!nb) return 0;
    this.seen.set(ns, now);
    const wait = nb.budget.waitMs(ns, now);
    if (wait === 0) return 0;
    for (const [other, at] of this.seen) {
      if (now - at > nb.contendedMs) this.seen.delete(other);
      else if (other !== ns && nb.budget.waitMs(other, now) === 0) return wait;
    }
    return 0;
  }

  /** A routine key still waiting became urgent (a webhook arrived for it): it moves to the urgent lanes. */
  private promote(key: string): void {
    const queued = this.queuedAs.get(key);
    if (!queued || queued.urgent || !this.opts.urgentOf?.(key)) return;
    if (!this.ready.remove(queued.group, key)) return;
    queued.urgent = true;
    this.urgent.push(queued.group, key);
    // It keeps its pool turn (one more than the keys left: that turn finds nothing or another key).
    if (this.wouldWait(tenantOf(queued.group))) this.takeUrgentSlot();
  }

  /** Keys waiting or running. */
  depth(): number {
    return this.state.size;
  }

  isBusy(key: string): boolean {
    return this.state.has(key);
  }

  /** Stops taking work and cancels delayed runs; running handlers finish on their own. */
  stop(): void {
    this.stopped = true;
    for (const d of this.delayed.values()) d.cancel();
    this.delayed.clear();
  }

  private addLater(key: string, delayMs: number): void {
    const at = this.timers.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.timers.after(delayMs, () => {
      this.delayed.delete(key);
      this.add(key);
    });
    this.delayed.set(key, { at, cancel });
  }

  private cancelDelayed(key: string): void {
    this.delayed.get(key)?.cancel();
    this.delayed.delete(key);
  }

  /**
   * One turn of the pool: the next queued key in turn, from the namespace running the fewest. In a kept
   * slot (`urgentSlot`): the next urgent key only, whatever its namespace runs (the cap keeps the pool's
   * slots for the other namespaces; this slot is not one of them, and namespaces take turns for it).
   */
  private async turn(urgentSlot = false): Promise<void> {
    const cap = this.opts.maxRunningPerNamespace;
    const busy = (ns: string) => this.running.get(ns) ?? 0;
    const mayRun = cap === undefined || urgentSlot ? undefined : (ns: string) => busy(ns) < cap;
    const key = urgentSlot ? this.urgent.shift(busy) : (this.urgent.shift(busy, mayRun) ?? this.ready.shift(busy, mayRun));
    if (key === undefined) {
      if (!urgentSlot && this.ready.size + this.urgent.size > 0) this.parked++;
      return;
    }
    const queued = this.queuedAs.get(key);
    const ns = queued ? tenantOf(queued.group) : namespaceOf(key);
    this.queuedAs.delete(key);
    this.running.set(ns, busy(ns) + 1);
    try {
      await this.run(key, ns);
    } finally {
      const left = busy(ns) - 1;
      if (left > 0) this.running.set(ns, left);
      else this.running.delete(ns);
      if (this.parked > 0) {
        this.parked--;
        void this.opts.pool.add(() => this.turn());
      }
      // Urgent keys still waiting: the slot goes to the next (its own turn still counts it as pending).
      if (urgentSlot && this.urgent.size > 0) void this.opts.urgentPool?.add(() => this.turn(true));
    }
  }

  private async run(key: string, tenant: string): Promise<void> {
    if (this.stopped) {
      this.state.delete(key);
      return;
    }
    this.state.set(key, 'running');
    let retryIn: number | undefined;
    const metered = this.opts.budget !== undefined || this.opts.namespaceBudget !== undefined;
    if (metered) this.meter.start(key, tenant, this.timers.now());
    try {
      const result = await this.opts.handler(key);
      this.failures.delete(key);
      retryIn = result?.requeueAfterMs;
    } catch (err) {
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      const { baseMs, maxMs } = this.opts.backoff ?? { baseMs: 500, maxMs: 5 * 60_000 };
      retryIn = backoffDelay(attempt, baseMs, maxMs);
      this.opts.onError?.(key, err, retryIn);
    }
    if (metered) {
      const ended = this.timers.now();
      const cost = this.meter.end(key, ended);
      // A restart syncs every repository once (cold, or re-reading 1,000 folders): charging that would hold
      // back the first push after it for up to the budget's longest wait. One free run per group and process
      // cannot be repeated by a tenant; the namespace budget still counts it.
      const group = this.opts.groupOf?.(key) ?? namespaceOf(key);
      if (this.ranBefore.has(group)) this.opts.budget?.charge(group, cost, ended);
      else this.ranBefore.add(group);
      this.opts.namespaceBudget?.budget.charge(tenant, cost, ended);
      if (this.opts.namespaceBudget) this.seen.set(tenant, ended);
    }
    const dirty = this.state.get(key) === 'dirty';
    this.state.delete(key);
    this.report();
    if (dirty) this.add(key);
    if (retryIn !== undefined && retryIn > 0) this.add(key, retryIn);
  }

  private report(): void {
    this.opts.onDepth?.(this.opts.name, this.state.size);
  }
}

function namespaceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}
