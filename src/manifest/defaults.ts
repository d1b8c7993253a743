// The one source of the defaults a function gets where its definition is silent: function.yaml, a /v1
// input, a Function object (crds/function.yaml states the same values; a test holds them equal), and
// the repository, trigger and job defaults both platforms apply.
export const FUNCTION_DEFAULTS = {
  entrypoint: 'handler.handle',
  memoryMb: 128,
  timeoutSec: 30,
  httpEnabled: true,
} as const;

export const REPOSITORY_DEFAULTS = {
  branch: 'main',
  /** The repository root. */
  path: '',
  interval: '1m',
  suspend: false,
  prune: true,
} as const;

export const TRIGGER_DEFAULTS = { enabled: true } as const;

/**
 * The most schedules and jobs one function.yaml may declare: each schedule is a CronJob and each job
 * run a Job in the cluster, outside the build and sync shares. Fixed in the function.yaml contract
 * (like memory_mb's range) so that `sless validate`, `sless dev` and every cluster agree; the
 * operator's settings cap a namespace (SLESS_MAX_SCHEDULES_PER_NAMESPACE, SLESS_MAX_JOBS_PER_NAMESPACE).
 */
export const MANIFEST_LIMITS = { schedulesPerFunction: 20, jobsPerFunction: 20 } as const;

/** A job made through /v1 without run_id runs once. */
export const JOB_DEFAULTS = { runId: 1 } as const;

/** function.yaml `queues:` entries (issue 34); the dead-letter queue defaults to `<queue>.dlq`. */
export const QUEUE_DEFAULTS = {
  declare: false,
  prefetch: 10,
  maxPrefetch: 1000,
  retries: 5,
  maxRetries: 100,
  deadLetterSuffix: '.dlq',
} as const;
