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
 * Defaults of the most schedules and jobs one function.yaml may declare: each schedule is a CronJob and
 * each job run a Job in the cluster, outside the build and sync shares. The operator changes them with
 * SLESS_MAX_SCHEDULES_PER_FUNCTION and SLESS_MAX_JOBS_PER_FUNCTION (read alike by the controller,
 * `sless dev` and `sless validate`, so they agree); SLESS_MAX_SCHEDULES_PER_NAMESPACE and
 * SLESS_MAX_JOBS_PER_NAMESPACE cap a namespace's totals.
 */
export const MANIFEST_LIMITS = { schedulesPerFunction: 20, jobsPerFunction: 20 } as const;

/**
 * The operator's caps on one function.yaml, checked with its other rules (cross-check.ts); a cap left
 * out is its default (SCALE_LIMITS.defaultCap, MANIFEST_LIMITS).
 */
export interface ManifestCaps {
  /** The cap on scale.max (SLESS_MAX_REPLICAS). */
  readonly maxReplicas?: number;
  /** The most schedules (SLESS_MAX_SCHEDULES_PER_FUNCTION). */
  readonly schedulesPerFunction?: number;
  /** The most jobs (SLESS_MAX_JOBS_PER_FUNCTION). */
  readonly jobsPerFunction?: number;
}

/** Just the caps of `options` (which may hold other settings), for passing them on. */
export function manifestCapsOf(options: ManifestCaps): ManifestCaps {
  return { maxReplicas: options.maxReplicas, schedulesPerFunction: options.schedulesPerFunction, jobsPerFunction: options.jobsPerFunction };
}

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
