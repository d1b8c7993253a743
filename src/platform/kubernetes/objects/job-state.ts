// What a Job's conditions say, as kubectl reads them: one rule for the reconcilers and the cache's index of
// running builds (api-client/cache-index.ts).
export type JobState = 'running' | 'succeeded' | 'failed';

/** What jobState reads of a Job (a V1Job from a list, or the plain JSON of a watch event). */
export interface JobConditions {
  readonly status?: { readonly conditions?: ReadonlyArray<{ readonly type?: string; readonly status?: string }> };
}

export function jobState(job: JobConditions): JobState {
  const conditions = job.status?.conditions ?? [];
  const isTrue = (type: string) => conditions.some((c) => c.type === type && c.status === 'True');
  if (isTrue('Complete')) return 'succeeded';
  if (isTrue('Failed')) return 'failed';
  return 'running';
}
