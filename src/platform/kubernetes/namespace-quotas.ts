// Per-namespace caps on what a tenant's functions make besides Deployments: cron schedules (CronJobs)
// and jobs (Jobs). A repository's sync past a cap stalls (NamespaceQuotaExceeded, nothing applied, as
// for SLESS_MAX_FUNCTIONS_PER_NAMESPACE); /v1 answers 403 quota_exceeded. Pure: callers count.

export interface NamespaceQuotaCount {
  readonly namespace: string;
  readonly what: 'schedules' | 'jobs';
  /** What the sync or request would add (a sync: all of its repository's). */
  readonly adding: number;
  /** What the namespace holds besides (other repositories' and /v1's). */
  readonly held: number;
  readonly cap: number;
  /** The setting that raises the cap, named in the message. */
  readonly setting: string;
}

/** Why adding `adding` more would take the namespace past its cap, or undefined. */
export function namespaceQuotaProblem(c: NamespaceQuotaCount): string | undefined {
  if (c.adding === 0 || c.held + c.adding <= c.cap) return undefined;
  return `namespace ${c.namespace} would hold ${c.held + c.adding} ${c.what}, more than the ${c.cap} one namespace may hold (${c.setting}); ${c.held} already there`;
}

/** What a repository's sync counts: its functions' schedules and jobs against what others hold. */
export interface SyncQuotaInput {
  readonly namespace: string;
  /** Schedules and jobs of the sync's valid manifests. */
  readonly manifests: readonly { readonly schedules: readonly unknown[]; readonly jobs: readonly unknown[] }[];
  /** Cron Triggers and FunctionJobs of the namespace that other repositories or /v1 made. */
  readonly otherSchedules: number;
  readonly otherJobs: number;
  readonly schedulesCap: number;
  readonly jobsCap: number;
}

/** Why a sync would take its namespace past the schedule or job cap, or undefined. */
export function syncQuotaProblem(q: SyncQuotaInput): string | undefined {
  const sum = (pick: (m: SyncQuotaInput['manifests'][number]) => readonly unknown[]) => q.manifests.reduce((n, m) => n + pick(m).length, 0);
  return (
    namespaceQuotaProblem({ namespace: q.namespace, what: 'schedules', adding: sum((m) => m.schedules), held: q.otherSchedules, cap: q.schedulesCap, setting: 'SLESS_MAX_SCHEDULES_PER_NAMESPACE' }) ??
    namespaceQuotaProblem({ namespace: q.namespace, what: 'jobs', adding: sum((m) => m.jobs), held: q.otherJobs, cap: q.jobsCap, setting: 'SLESS_MAX_JOBS_PER_NAMESPACE' })
  );
}
