// A namespace's fair share of builds (issue 11 item 5): at most `cap` of its build Jobs run at once, so a
// tenant pushing every second, or with builds that run for half an hour, fills its own share of the
// cluster's build capacity and not another tenant's. Counted from the Job cache (no request): every build
// Job of the namespace that has not finished counts, superseded keys included (they still hold a node),
// and so does every build this controller has just started that the cache does not show yet: the cache
// lags behind our own creates, and Function reconciles running side by side (SLESS_BUILD_CONCURRENCY)
// would otherwise all take the last slot (12 Jobs at once for a share of 3: kube-build-share.test.ts).
import type { V1Job } from '@kubernetes/client-node';
import { select } from '../api-client/cache-index.ts';
import type { Cache } from './reconcile-context.ts';

/**
 * How often a build waiting for its namespace's share looks again on its own. A build that ends wakes the
 * namespace's longest waiter at once (BuildWaiters), so this only bounds a wake that went missing; at
 * 5 s, 700 queued Functions of a 1,000-function push looked 140 times a second, for nothing.
 */
export const BUILD_QUEUED_RECHECK_MS = 30_000;

/** How long a build started here counts without its Job in the cache (a Job deleted at once never shows). */
export const RESERVATION_TTL_MS = 60_000;

/**
 * How long a Job created here is taken as "not in the cache yet" rather than gone: watch events arrive in
 * milliseconds, in seconds on a loaded API server. Past it a reconcile creates again (a 409 if it exists).
 */
export const CREATE_SEEN_WITHIN_MS = 15_000;

/** What the Job cache shows of one namespace's builds: how many run, and whether a Job of a name is there. */
export interface BuildsInCache {
  readonly running: number;
  has(jobName: string): boolean;
}

/** From the running-builds index (cache-index.ts): the few running builds, not every build Job the namespace had. */
export function buildsInCache(jobs: Cache<V1Job>, buildNamespace: string, namespace: string): BuildsInCache {
  return {
    running: select(jobs, buildNamespace, 'runningBuildsOf', namespace).length,
    has: (jobName) => jobs.get(jobName, buildNamespace) !== undefined,
  };
}

/**
 * The builds this controller has taken a slot for, by namespace and Job name, until the Job cache shows
 * their Jobs (from then on the cache counts them) or RESERVATION_TTL_MS passes. Decisions and their
 * reservations happen in one synchronous step (take), so two reconciles never see the same free slot.
 */
export class BuildReservations {
  private readonly byNamespace = new Map<string, Map<string, number>>();

  /** Running builds of `namespace`: the cache's, plus reservations it does not show yet (stale ones dropped). */
  running(cached: BuildsInCache, namespace: string, nowMs: number): number {
    const mine = this.byNamespace.get(namespace);
    let pending = 0;
    for (const [name, at] of mine ?? []) {
      if (cached.has(name) || nowMs - at >= RESERVATION_TTL_MS) mine!.delete(name);
      else pending++;
    }
    if (mine?.size === 0) this.byNamespace.delete(namespace);
    return cached.running + pending;
  }

  /** Decides with buildShare and, when the build may start, reserves its slot at once. */
  take(cached: BuildsInCache, namespace: string, jobName: string, cap: number, nowMs: number): ReturnType<typeof buildShare> {
    const share = buildShare(this.running(cached, namespace, nowMs), cap, namespace);
    if (share.start) {
      const mine = this.byNamespace.get(namespace) ?? new Map<string, number>();
      mine.set(jobName, nowMs);
      this.byNamespace.set(namespace, mine);
    }
    return share;
  }

  /**
   * Whether this controller started the build Job `jobName` a moment ago and the cache does not show it yet:
   * the Function's next reconcile waits for the cache rather than creating it again (one 409 per lagging look).
   */
  startedUnseen(namespace: string, jobName: string, nowMs: number): boolean {
    const at = this.byNamespace.get(namespace)?.get(jobName);
    return at !== undefined && nowMs - at < CREATE_SEEN_WITHIN_MS;
  }

  /** The build did not start after all (no context yet, an error, a Job still being deleted), or the cache shows its Job now. */
  release(namespace: string, jobName: string): void {
    const mine = this.byNamespace.get(namespace);
    mine?.delete(jobName);
    if (mine?.size === 0) this.byNamespace.delete(namespace);
  }
}

/**
 * Functions waiting for a build slot, per namespace, longest first. A build that ends (or its Job going
 * away) frees a slot: the controller wakes the longest waiter not yet woken, so a queued build starts when
 * the slot frees, not at its next look, and in the order the Functions began waiting.
 */
export class BuildWaiters {
  /** Function key → woken (enqueued, has not looked again yet); Map order is waiting order. */
  private readonly byNamespace = new Map<string, Map<string, boolean>>();

  /** `key` looked and found no slot: it waits (a waiter that looks again keeps its place). */
  wait(namespace: string, key: string): void {
    const line = this.byNamespace.get(namespace) ?? new Map<string, boolean>();
    line.set(key, false);
    this.byNamespace.set(namespace, line);
  }

  /** `key` no longer waits: its build started, or it needs none, or its Function is gone. */
  done(namespace: string, key: string): void {
    const line = this.byNamespace.get(namespace);
    line?.delete(key);
    if (line?.size === 0) this.byNamespace.delete(namespace);
  }

  /** A slot of `namespace` freed: the longest waiter not already woken, now marked woken; undefined if none. */
  wake(namespace: string): string | undefined {
    for (const [key, woken] of this.byNamespace.get(namespace) ?? []) {
      if (woken) continue;
      this.byNamespace.get(namespace)!.set(key, true);
      return key;
    }
    return undefined;
  }

  get size(): number {
    let n = 0;
    for (const line of this.byNamespace.values()) n += line.size;
    return n;
  }
}

/** May another build of `namespace` start now? If not, why (for the Function's status). */
export function buildShare(running: number, cap: number, namespace: string): { readonly start: true } | { readonly start: false; readonly message: string } {
  if (running < cap) return { start: true };
  return {
    start: false,
    message: `waiting for a build slot: namespace ${namespace} runs ${running} builds, the most one namespace may run at once (SLESS_MAX_BUILDS_PER_NAMESPACE=${cap}); this one starts when one of them ends`,
  };
}
