// Round robin over tenants, then over groups: items of one group wait in their own lane, the lanes of one
// tenant take turns, and the tenants take turns. A group is `namespace/repository` (or `namespace`): its
// tenant is the part before the first `/`. So one tenant with a thousand items in forty repositories
// delays another tenant's first item by one item, not by forty (one per repository) nor a thousand; and
// one large repository delays another repository of its own namespace by one item. The work queues and
// the upload pool of the controller use it.
export function tenantOf(group: string): string {
  const slash = group.indexOf('/');
  return slash < 0 ? group : group.slice(0, slash);
}

export class FairLanes<T> {
  /** Insertion order is the turn order, at both levels: what gave an item moves to the end. */
  private readonly tenants = new Map<string, Map<string, T[]>>();
  private count = 0;

  push(group: string, item: T): void {
    const tenant = tenantOf(group);
    let lanes = this.tenants.get(tenant);
    if (!lanes) this.tenants.set(tenant, (lanes = new Map()));
    const lane = lanes.get(group);
    if (lane) lane.push(item);
    else lanes.set(group, [item]);
    this.count++;
  }

  /**
   * The next item in turn; undefined when every lane is empty, or when no tenant with waiting items may
   * run (`mayRun`). `busy` (items of a tenant running now) puts first the tenant running the fewest,
   * ties in turn order: a tenant that filled the pool waits until the others have as many running.
   */
  shift(busy?: (tenant: string) => number, mayRun?: (tenant: string) => boolean): T | undefined {
    let chosen: string | undefined;
    let least = Infinity;
    for (const tenant of this.tenants.keys()) {
      if (mayRun && !mayRun(tenant)) continue;
      const n = busy ? busy(tenant) : 0;
      if (n < least) {
        chosen = tenant;
        least = n;
        if (!busy) break;
      }
    }
    if (chosen === undefined) return undefined;
    const lanes = this.tenants.get(chosen) as Map<string, T[]>;
    const [group, lane] = lanes.entries().next().value as [string, T[]];
    const item = lane.shift() as T;
    lanes.delete(group);
    if (lane.length > 0) lanes.set(group, lane);
    this.tenants.delete(chosen);
    if (lanes.size > 0) this.tenants.set(chosen, lanes);
    this.count--;
    return item;
  }

  /** Takes `item` out of its group's lane (it keeps its place otherwise); false when it is not there. */
  remove(group: string, item: T): boolean {
    const lanes = this.tenants.get(tenantOf(group));
    const lane = lanes?.get(group);
    const at = lane ? lane.indexOf(item) : -1;
    if (!lanes || !lane || at < 0) return false;
    lane.splice(at, 1);
    if (lane.length === 0) lanes.delete(group);
    if (lanes.size === 0) this.tenants.delete(tenantOf(group));
    this.count--;
    return true;
  }

  get size(): number {
    return this.count;
  }

  /** Groups with waiting items. */
  get groups(): number {
    let n = 0;
    for (const lanes of this.tenants.values()) n += lanes.size;
    return n;
  }

  clear(): void {
    this.tenants.clear();
    this.count = 0;
  }
}

/**
 * At most `concurrency` tasks at once, taken from the groups' lanes in turn (tenants running fewest first);
 * with `maxPerTenant`, one tenant runs at most that many at once, so another tenant's task starts at once
 * however many of the first wait (tasks run long: picking the tenant running fewest only helps once a
 * slot frees).
 */
export class FairPool {
  private readonly waiting = new FairLanes<() => void>();
  private readonly busy = new Map<string, number>();
  private running = 0;
  private idle: Array<() => void> = [];
  private readonly maxPerTenant: number;

  constructor(
    readonly concurrency: number,
    options: { readonly maxPerTenant?: number } = {},
  ) {
    if (!(concurrency >= 1)) throw new Error(`FairPool concurrency must be at least 1, got ${concurrency}`);
    this.maxPerTenant = options.maxPerTenant ?? concurrency;
    if (!(this.maxPerTenant >= 1)) throw new Error(`FairPool maxPerTenant must be at least 1, got ${this.maxPerTenant}`);
  }

  add<T>(group: string, task: () => Promise<T>): Promise<T> {
    const tenant = tenantOf(group);
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.running++;
        this.busy.set(tenant, (this.busy.get(tenant) ?? 0) + 1);
        task()
          .then(resolve, reject)
          .finally(() => {
            this.running--;
            const left = (this.busy.get(tenant) ?? 1) - 1;
            if (left > 0) this.busy.set(tenant, left);
            else this.busy.delete(tenant);
            this.pump();
          });
      };
      this.waiting.push(group, start);
      this.pump();
    });
  }

  /** Tasks waiting or running. */
  get size(): number {
    return this.waiting.size + this.running;
  }

  /** Resolves when nothing waits or runs. */
  onIdle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency) {
      const busy = (t: string) => this.busy.get(t) ?? 0;
      const start = this.waiting.shift(busy, this.maxPerTenant < this.concurrency ? (t) => busy(t) < this.maxPerTenant : undefined);
      if (!start) break;
      start();
    }
    if (this.size === 0) {
      const idle = this.idle;
      this.idle = [];
      for (const r of idle) r();
    }
  }
}
