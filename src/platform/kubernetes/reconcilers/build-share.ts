// A namespace's fair share of builds (issue 11 item 5): at most `cap` of its build Jobs run at once, so a
// tenant pushing every second, or with builds that run for half an hour, fills its own share of the
// cluster's build capacity and not another tenant's. Counted from the Job cache (no request): every build
// Job of the namespace that has not finished counts, superseded keys included (they still hold a node).
import type { V1Job } from '@kubernetes/client-node';
import { LABELS } from '../objects/meta.ts';
import { jobState } from './job-status.ts';

/** How often a build waiting for its namespace's share looks again (a finished build also wakes its own Function). */
export const BUILD_QUEUED_RECHECK_MS = 5_000;

export function runningBuildsOf(jobs: readonly V1Job[], namespace: string): number {
  let n = 0;
  for (const job of jobs) {
    const labels = job.metadata?.labels ?? {};
    if (labels[LABELS.component] === 'build' && labels[LABELS.functionNamespace] === namespace && jobState(job) === 'running') n++;
  }
  return n;
}

/** May another build of `namespace` start now? If not, why (for the Function's status). */
export function buildShare(running: number, cap: number, namespace: string): { readonly start: true } | { readonly start: false; readonly message: string } {
  if (running < cap) return { start: true };
  return {
    start: false,
    message: `waiting for a build slot: namespace ${namespace} runs ${running} builds, the most one namespace may run at once (SLESS_MAX_BUILDS_PER_NAMESPACE=${cap}); this one starts when one of them ends`,
  };
}
