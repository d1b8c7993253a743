// How much of the controller's time one group (a repository) may keep busy, as a token bucket of run
// time (issue 11 item 5). Each group holds up to `burstMs` of run time and earns `share` ms per ms of
// wall time; what a run took is charged when it ends. A group in debt waits until its balance is back
// to zero before its next run starts, at most `maxWaitMs`: a repository that syncs now and then never
// waits, one that syncs all the time (a push every second) syncs about once per (its sync time / share),
// its pushes folded into that one sync (work-queue.ts coalesces what arrives meanwhile). Pure: the
// caller passes the clock.
export interface TimeBudgetOptions {
  /** Run time earned per ms of wall time (0 < share); 1 or more never makes anyone wait. */
  readonly share: number;
  /** Most run time a group may bank: what a quiet group spends at once without waiting. */
  readonly burstMs: number;
  /** Longest wait a group's debt may cause (its balance is floored there). */
  readonly maxWaitMs: number;
}

interface Bucket {
  balance: number;
  at: number;
}

export class TimeBudget {
  private readonly buckets = new Map<string, Bucket>();

  constructor(readonly opts: TimeBudgetOptions) {
    if (!(opts.share > 0)) throw new Error(`TimeBudget share must be more than 0, got ${opts.share}`);
    if (!(opts.burstMs >= 0) || !(opts.maxWaitMs >= 0)) throw new Error('TimeBudget burstMs and maxWaitMs must not be negative');
  }

  /** True when nobody ever waits (share of 1 or more: a run can never earn less than it takes). */
  get unlimited(): boolean {
    return this.opts.share >= 1;
  }

  /** ms until `group` may start its next run (0: now). */
  waitMs(group: string, now: number): number {
    if (this.unlimited) return 0;
    const balance = this.balance(group, now);
    return balance >= 0 ? 0 : Math.ceil(-balance / this.opts.share);
  }

  /** A run of `group` took `ms`, ending at `now`. */
  charge(group: string, ms: number, now: number): void {
    if (this.unlimited) return;
    const floor = -this.opts.share * this.opts.maxWaitMs;
    this.buckets.set(group, { balance: Math.max(floor, this.balance(group, now) - Math.max(0, ms)), at: now });
  }

  /** Groups that have spent some of their burst (a full bucket is forgotten). */
  get size(): number {
    return this.buckets.size;
  }

  private balance(group: string, now: number): number {
    const b = this.buckets.get(group);
    if (!b) return this.opts.burstMs;
    const balance = Math.min(this.opts.burstMs, b.balance + Math.max(0, now - b.at) * this.opts.share);
    if (balance >= this.opts.burstMs) this.buckets.delete(group);
    return balance;
  }
}

/**
 * What a run costs its group: its wall time, less what other tenants' runs beside it added (each moment
 * of it counts 1 / (1 + runs of other tenants then)). On shared cores a sync beside two of another
 * tenant's runs takes about three times as long; the victim of a noisy tenant is not charged for that
 * slowness, the noisy tenant's own runs side by side are (they do not discount each other).
 */
export class RunMeter {
  private readonly runs = new Map<string, { readonly tenant: string; charged: number }>();
  private last = 0;

  start(id: string, tenant: string, now: number): void {
    this.settle(now);
    this.runs.set(id, { tenant, charged: 0 });
  }

  /** The run's cost in ms, and it is forgotten. */
  end(id: string, now: number): number {
    this.settle(now);
    const run = this.runs.get(id);
    this.runs.delete(id);
    return run?.charged ?? 0;
  }

  private settle(now: number): void {
    const dt = Math.max(0, now - this.last);
    this.last = now;
    if (dt === 0 || this.runs.size === 0) return;
    const perTenant = new Map<string, number>();
    for (const r of this.runs.values()) perTenant.set(r.tenant, (perTenant.get(r.tenant) ?? 0) + 1);
    for (const r of this.runs.values()) r.charged += dt / (1 + this.runs.size - (perTenant.get(r.tenant) ?? 0));
  }
}
