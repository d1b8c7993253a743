// `sless controller` settings for production and for many tenants (issue 11 items 2, 5, 10): what the
// repository syncs may reach and fetch, fair-share limits, and the knobs of builds and reconciles.
// Specs only; config.ts reads them with the rest.
import { z } from 'zod';
import {
  DEFAULT_BUILDS_PER_NAMESPACE,
  DEFAULT_FUNCTIONS_PER_NAMESPACE,
  DEFAULT_JOBS_PER_NAMESPACE,
  DEFAULT_QUEUE_CONSUMERS_PER_NAMESPACE,
  DEFAULT_QUEUE_IN_FLIGHT_PER_NAMESPACE,
  DEFAULT_SCHEDULES_PER_NAMESPACE,
  DEFAULT_SYNC_CONCURRENCY,
  DEFAULT_APPLY_CONCURRENCY,
  DEFAULT_FUNCTION_RECONCILE_CONCURRENCY,
  DEFAULT_RECONCILE_CONCURRENCY,
  DEFAULT_MAX_FUNCTIONS_PER_REPOSITORY,
  DEFAULT_MIN_INTERVAL_MS,
  DEFAULT_SYNC_SHARE,
} from '../platform/kubernetes/settings.ts';
import { DEFAULT_MAX_FETCH_BYTES } from '../source/git-http.ts';
import { duration, type SettingSpec } from './resolve-settings.ts';

/** A comma-separated list; blanks dropped. */
const list = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .optional();
const positive = z.coerce.number().int().min(1);
/** Kubernetes quantities as a container's resources take them (`500m`, `2`, `1Gi`). */
const quantity = z.string().regex(/^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/, 'a Kubernetes quantity like 500m, 2, 512Mi or 2Gi').optional();

/**
 * V8's heap growing factor (src/cli/heap-growth.ts), 1.2x; 0 leaves V8 its own (~1.5x in the pod). It buys
 * RSS for CPU in bulk work. controller.bench at 1,000 functions, bundled, back to back on 2026-12-03 (07:08-
 * 07:18 UTC): RSS at steady state 188-190 MB with 20, 198-210 with 0 (the < 200 MB goal); controller CPU to
 * steady state 50.5 / 52.3 s with 20, 40.0-46.5 with 0, steady state 86 / 89 s vs 74-83 s. The day before,
 * pairs differed less (+1.5-5 CPU s, steady state within the noise). Kept the default for the RSS, which a
 * pod pays all the time, where the CPU shows only while 1,000 functions are created at once. It was opt-in
 * while a SIGTERM abort was blamed on it; that was Node's HTTP/2 client, no longer used (api-dispatcher.ts).
 */
export const DEFAULT_HEAP_GROWING_PERCENT = 20;

/** Requests per minute per key (src/http/rate-limits.ts): /v1 per token subject, /hooks per repository. */
export const DEFAULT_RATE_LIMITS = { v1PerMinute: 600, hooksPerMinute: 120 } as const;

export const controllerTuningSpecs = {
  rateLimitV1: {
    env: 'SLESS_RATE_LIMIT_V1',
    schema: positive,
    default: DEFAULT_RATE_LIMITS.v1PerMinute,
    describe: '/v1 requests per minute per token subject (429 with Retry-After beyond)',
  },
  rateLimitHooks: {
    env: 'SLESS_RATE_LIMIT_HOOKS',
    schema: positive,
    default: DEFAULT_RATE_LIMITS.hooksPerMinute,
    describe: '/hooks deliveries per minute per repository (429 with Retry-After beyond)',
  },
  gitAllowedHosts: {
    env: 'SLESS_GIT_ALLOWED_HOSTS',
    schema: list,
    describe: 'internal git hosts repositories may use: names (gitea.gitea.svc, optionally :port), addresses or CIDR ranges, comma-separated',
  },
  gitDeniedCidrs: {
    env: 'SLESS_GIT_DENIED_CIDRS',
    schema: list,
    describe: "more ranges repository URLs may not reach, e.g. the cluster's Service and Pod CIDRs when they are not private ranges",
  },
  gitCrossHostRedirects: {
    env: 'SLESS_GIT_CROSS_HOST_REDIRECTS',
    schema: z.enum(['1', 'true', '0', 'false']).transform((v) => v === '1' || v === 'true'),
    default: false,
    describe: 'follow git redirects to other hosts (each still checked)',
  },
  gitMaxFetchBytes: { env: 'SLESS_GIT_MAX_FETCH_BYTES', schema: positive, default: DEFAULT_MAX_FETCH_BYTES, describe: 'most bytes one git response of a sync may bring' },
  maxFunctionsPerRepository: { env: 'SLESS_MAX_FUNCTIONS_PER_REPOSITORY', schema: positive, default: DEFAULT_MAX_FUNCTIONS_PER_REPOSITORY, describe: 'most function folders one repository may hold' },
  maxFunctionsPerNamespace: { env: 'SLESS_MAX_FUNCTIONS_PER_NAMESPACE', schema: positive, default: DEFAULT_FUNCTIONS_PER_NAMESPACE, describe: 'most Functions one namespace may hold (git and /v1 together)' },
  maxSchedulesPerNamespace: {
    env: 'SLESS_MAX_SCHEDULES_PER_NAMESPACE',
    schema: positive,
    default: DEFAULT_SCHEDULES_PER_NAMESPACE,
    describe: 'most cron schedules (CronJobs) one namespace may hold, git and /v1 together',
  },
  maxJobsPerNamespace: {
    env: 'SLESS_MAX_JOBS_PER_NAMESPACE',
    schema: positive,
    default: DEFAULT_JOBS_PER_NAMESPACE,
    describe: 'most jobs (FunctionJobs) one namespace may hold, git and /v1 together',
  },
  maxQueueConsumersPerNamespace: {
    env: 'SLESS_MAX_QUEUE_CONSUMERS_PER_NAMESPACE',
    schema: positive,
    default: DEFAULT_QUEUE_CONSUMERS_PER_NAMESPACE,
    describe: 'most queue consumers (enabled queue Triggers) the leader runs for one namespace; the rest are Stalled',
  },
  maxQueueInFlightPerNamespace: {
    env: 'SLESS_MAX_QUEUE_IN_FLIGHT_PER_NAMESPACE',
    schema: positive,
    default: DEFAULT_QUEUE_IN_FLIGHT_PER_NAMESPACE,
    describe: "most queue messages of one namespace being delivered at once, all its consumers together (also caps each trigger's prefetch)",
  },
  maxSyncsPerNamespace: {
    env: 'SLESS_MAX_SYNCS_PER_NAMESPACE',
    schema: positive.optional(),
    describe: 'most repository syncs of one namespace at once (default: half of SLESS_SYNC_CONCURRENCY, at least 1), so another namespace always finds a slot',
  },
  maxBuildsPerNamespace: {
    env: 'SLESS_MAX_BUILDS_PER_NAMESPACE',
    schema: positive,
    default: DEFAULT_BUILDS_PER_NAMESPACE,
    describe: 'most build Jobs of one namespace running at once; more wait (Building, BuildQueued) for one of its own to end',
  },
  syncShare: {
    env: 'SLESS_SYNC_SHARE',
    schema: z.coerce.number().gt(0),
    default: DEFAULT_SYNC_SHARE,
    describe: "share of the time one repository's syncs may keep the controller busy (0.1: after a 3 s burst, a sync that ran d waits 10 d), and one namespace's while a lighter namespace syncs; 1 turns it off",
  },
  minInterval: { env: 'SLESS_MIN_INTERVAL', schema: duration, default: DEFAULT_MIN_INTERVAL_MS, describe: 'shortest spec.interval honoured (shorter ones are raised to it)' },
  imagePullSecrets: { env: 'SLESS_IMAGE_PULL_SECRETS', schema: list, describe: 'Secrets (in each function namespace) function pods pull their image with, comma-separated' },
  registrySecret: { env: 'SLESS_REGISTRY_SECRET', schema: z.string().min(1).optional(), describe: 'Secret in the build namespace with the docker config.json kaniko pushes with (default sless-registry)' },
  resyncPeriod: { env: 'SLESS_RESYNC_PERIOD', schema: duration, default: 600_000, describe: 'every object is reconciled again at least this often' },
  syncConcurrency: { env: 'SLESS_SYNC_CONCURRENCY', schema: positive, default: DEFAULT_SYNC_CONCURRENCY, describe: 'repository syncs at once' },
  buildConcurrency: { env: 'SLESS_BUILD_CONCURRENCY', schema: positive, default: DEFAULT_FUNCTION_RECONCILE_CONCURRENCY, describe: 'Function reconciles (builds, rollouts) at once' },
  reconcileConcurrency: { env: 'SLESS_RECONCILE_CONCURRENCY', schema: positive, default: DEFAULT_RECONCILE_CONCURRENCY, describe: 'Trigger and FunctionJob reconciles at once' },
  uploadConcurrency: { env: 'SLESS_UPLOAD_CONCURRENCY', schema: positive, default: DEFAULT_APPLY_CONCURRENCY, describe: 'functions of a sync uploaded and applied at once (repositories take turns)' },
  buildCpu: { env: 'SLESS_BUILD_CPU', schema: quantity, describe: 'CPU request and limit of a build container (e.g. 1)' },
  buildMemory: { env: 'SLESS_BUILD_MEMORY', schema: quantity, describe: 'memory request and limit of a build container (e.g. 2Gi)' },
  heapGrowingPercent: {
    env: 'SLESS_HEAP_GROWING_PERCENT',
    schema: z.coerce.number().int().min(0).max(300),
    default: DEFAULT_HEAP_GROWING_PERCENT,
    describe: "how far V8's old generation grows past what the last full GC kept before the next one (20: 1.2x; 0: V8's own, up to 1.5x in the pod): lower keeps RSS nearer the live heap for more full GCs",
  },
  buildTimeout: { env: 'SLESS_BUILD_TIMEOUT', schema: duration, default: 1_800_000, describe: 'a build running longer fails (activeDeadlineSeconds)' },
} satisfies Record<string, SettingSpec<unknown>>;
