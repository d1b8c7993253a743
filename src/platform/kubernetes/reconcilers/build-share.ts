// A namespace's fair share of builds (issue 11 item 5): at most `cap` of its build Jobs run at once, so a
// tenant pushing every second, or with builds that run for half an hour, fills its own share of the
// cluster's build capacity and not another tenant's. Counted from the Job cache (no request): every build
// Job of the namespace that has not finished counts, superseded keys included (they still hold a node),
// and so does every build this controller has just started that the cache does not show yet: the cache
// lags behind our own creates, and Function reconciles running side by side (SLESS_BUILD_CONCURRENCY)
// would otherwise all take the last slot (12 Jobs at once for a share of 3: kube-build-share.test.ts).
import type { V1Job } from '@kubernetes/client-node';
import { LABELS } from '../objects/meta.ts';
import { jobState } from './job-status.ts';

/** How often a build waiting for its namespace's share looks again (a finished build also wakes its own Function). */
export const BUILD_QUEUED_RECHECK_MS = 5_000;

/** How long a build started here counts without its Job in the cache (a Job deleted at once never shows). */
export const RESERVATION_TTL_MS = 60_000;

export function runningBuildsOf(jobs: readonly V1Job[], namespace: string): number {
  return buildJobsOf(jobs, namespace).running;
}

function buildJobsOf(jobs: readonly V1Job[], namespace: string): { running: number; names: Set<string> } {
  let running = 0;
  const names = new Set<string>();
  for (const job of jobs) {
    const labels = job.metadata?.labels ?? {};
    if (labels[LABELS.component] !== 'build' || labels[LABELS.functionNamespace] !== namespace) continue;
    names.add(job.metadata?.name ?? '');
    if (jobState(job) === 'running') running++;
  }
  return { running, names };
}

/**
 * The builds this controller has taken a slot for, by namespace and Job name, until the Job cache shows
 * their Jobs (from then on the cache counts them) or RESERVATION_TTL_MS passes. Decisions and their
 * reservations happen in one synchronous step (take), so two reconciles never see the same free slot.
 */
export class BuildReservations {
  private readonly byNamespace = new Map<string, Map<string, number>>();

  /** Running builds of `namespace`: the cache's, plus reservations it does not show yet (stale ones dropped). */
  running(jobs: readonly V1Job[], namespace: string, nowMs: number): number {
    const cached = buildJobsOf(jobs, namespace);
    const mine = this.byNamespace.get(namespace);
    let pending = 0;
    for (const [name, at] of mine ?? []) {
      if (cached.names.has(name) || nowMs - at >= RESERVATION_TTL_MS) mine!.delete(name);
      else pending++;
    }
    if (mine?.size === 0) this.byNamespace.delete(namespace);
    return cached.running + pending;
  }

  /** Decides with buildShare and, when the build may start, reserves its slot at once. */
  take(jobs: readonly V1Job[], namespace: string, jobName: string, cap: number, nowMs: number): ReturnType<typeof buildShare> {
    const share = buildShare(this.running(jobs, namespace, nowMs), cap, namespace);
    if (share.start) {
      const mine = this.byNamespace.get(namespace) ?? new Map<string, number>();
      mine.set(jobName, nowMs);
      this.byNamespace.set(namespace, mine);
    }
    return share;
  }

  /** The build did not start after all (no context yet, an error, a Job still being deleted). */
  release(namespace: string, jobName: string): void {
    const mine = this.byNamespace.get(namespace);
    mine?.delete(jobName);
    if (mine?.size === 0) this.byNamespace.delete(namespace);
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
