// What the controller needs to know about its surroundings. Parsed once by src/config (the only reader
// of process.env) and handed in as one frozen object; nothing under src/platform/kubernetes reads env.
// The controller fills in every default once (resolveControllerSettings) before anything reads them.
import { DEFAULT_REGISTRY_SECRET, DEFAULT_SYSTEM_NAMESPACE } from '../tenant-rules.ts';
import type { TreeLimits } from '../../source/tree-limits.ts';
import { SCALE_LIMITS } from '../../manifest/scale-spec.ts';
import { MANIFEST_LIMITS } from '../../manifest/defaults.ts';
import { buildToolsImageOf } from '../../build/runtime-catalog.ts';

export interface S3Settings {
  /** Full URL, e.g. `http://seaweedfs.sless-system:8333`, also handed to kaniko as S3_ENDPOINT; unset = AWS. */
  readonly endpoint?: string;
  readonly bucket: string;
  readonly region: string;
  /** The controller's own; builds never get them (they read their context through a presigned URL). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

export interface ControllerSettings {
  /** Registry (and optional path) images are pushed to: `<registry>/<ns>-<name>:<build key>`. */
  readonly registry: string;
  /** Pinned builder image (the lead's config defaults it to the maintained kaniko fork). */
  readonly kanikoImage: string;
  /** Where build Jobs run, so the registry credentials never enter user namespaces. */
  readonly buildNamespace: string;
  /** Where the controller runs (POD_NAMESPACE; default sless-system): refused to tenants like the build namespace and kube-system, kube-public, kube-node-lease. */
  readonly systemNamespace?: string;
  /**
   * The controller's own ServiceAccount: bound to ClusterRole `sless-tenant` in each tenant namespace it
   * uses (tenant-access.ts). Unset outside a cluster (a kubeconfig's user has its own rights).
   */
  readonly tenantBinding?: { readonly serviceAccount: string; readonly namespace: string };
  /** Prefix of the runtime base images (`<prefix>/sless-runtime-<runtime>:<version>`). */
  readonly runtimeImagePrefix: string;
  /** Image of the fetch and push steps of a build (runtimes/build-tools); default `<runtimeImagePrefix>/sless-build-tools:<tag>`. */
  readonly buildToolsImage?: string;
  readonly s3: S3Settings;
  /** e.g. `cluster.local`; used for the in-cluster URL of a function's Service. */
  readonly clusterDomain: string;
  /** Secret in the build namespace holding a docker config.json (key `.dockerconfigjson`) with push rights; only the build's push and fetch steps mount it. Optional. */
  readonly registrySecretName?: string;
  /** Secrets (in each function namespace) referenced as imagePullSecrets by function pods. */
  readonly imagePullSecrets?: readonly string[];
  /** Public base URL of the HTTP listener, for status.url; `/fn/<ns>/<name>` is appended. */
  readonly publicBaseUrl?: string;
  /** Directory for the git cache of repository syncs. */
  readonly cacheDir: string;
  /** What repository syncs may reach and fetch (issue 11 items 2 and 5); see GitSettings. */
  readonly git?: GitSettings;
  readonly limits?: TenantLimits;
  /** Parallelism: repository syncs, Function reconciles (builds), other reconciles, context uploads per sync. */
  readonly concurrency?: { readonly syncs?: number; readonly builds?: number; readonly reconciles?: number; readonly uploads?: number };
  /** Informer resync period (ms); every object is reconciled again at least this often. */
  readonly resyncMs?: number;
  readonly build?: {
    readonly ttlSecondsAfterFinished?: number;
    readonly backoffLimit?: number;
    readonly activeDeadlineSeconds?: number;
    readonly cpu?: string;
    readonly memory?: string;
    /** kaniko's layer cache, one repository per function (`<image repository>/cache`); default true. */
    readonly cache?: boolean;
    /** Dockerfiles that run nothing are built by appending a layer (build-kind.ts) rather than by kaniko; default true. */
    readonly layers?: boolean;
    /** docker-config Secret (build namespace) kaniko pulls base images with; give it pull-only rights. */
    readonly pullSecretName?: string;
  };
}

/**
 * ControllerSettings with every default filled in, once, where the controller starts
 * (resolveControllerSettings): the reconcilers read it with no fallbacks of their own.
 */
export interface ResolvedControllerSettings extends ControllerSettings {
  readonly buildToolsImage: string;
  readonly build: Required<Omit<NonNullable<ControllerSettings['build']>, 'pullSecretName'>> & Pick<NonNullable<ControllerSettings['build']>, 'pullSecretName'>;
  readonly systemNamespace: string;
  readonly registrySecretName: string;
  readonly imagePullSecrets: readonly string[];
  readonly git: GitSettings & { readonly maxFunctions: number; readonly minIntervalMs: number };
  readonly limits: Required<TenantLimits>;
  readonly concurrency: { readonly syncs: number; readonly builds: number; readonly reconciles: number; readonly uploads: number };
  readonly resyncMs: number;
}

/** Every default of `settings` filled in (one place for them all). */
export function resolveControllerSettings(settings: ControllerSettings): ResolvedControllerSettings {
  const syncs = settings.concurrency?.syncs ?? DEFAULT_SYNC_CONCURRENCY;
  return Object.freeze({
    ...settings,
    buildToolsImage: settings.buildToolsImage ?? buildToolsImageOf(settings.runtimeImagePrefix),
    build: { ...DEFAULT_BUILD, ...definedOnly(settings.build ?? {}) },
    systemNamespace: settings.systemNamespace ?? DEFAULT_SYSTEM_NAMESPACE,
    registrySecretName: settings.registrySecretName ?? DEFAULT_REGISTRY_SECRET,
    imagePullSecrets: settings.imagePullSecrets ?? [],
    git: { ...settings.git, maxFunctions: settings.git?.maxFunctions ?? DEFAULT_MAX_FUNCTIONS_PER_REPOSITORY, minIntervalMs: settings.git?.minIntervalMs ?? DEFAULT_MIN_INTERVAL_MS },
    limits: {
      functionsPerNamespace: settings.limits?.functionsPerNamespace ?? DEFAULT_FUNCTIONS_PER_NAMESPACE,
      syncsPerNamespace: settings.limits?.syncsPerNamespace ?? defaultSyncsPerNamespace(syncs),
      buildsPerNamespace: settings.limits?.buildsPerNamespace ?? DEFAULT_BUILDS_PER_NAMESPACE,
      syncShare: settings.limits?.syncShare ?? DEFAULT_SYNC_SHARE,
      schedulesPerNamespace: settings.limits?.schedulesPerNamespace ?? DEFAULT_SCHEDULES_PER_NAMESPACE,
      jobsPerNamespace: settings.limits?.jobsPerNamespace ?? DEFAULT_JOBS_PER_NAMESPACE,
      queueConsumersPerNamespace: settings.limits?.queueConsumersPerNamespace ?? DEFAULT_QUEUE_CONSUMERS_PER_NAMESPACE,
      queueInFlightPerNamespace: settings.limits?.queueInFlightPerNamespace ?? DEFAULT_QUEUE_IN_FLIGHT_PER_NAMESPACE,
      maxReplicas: settings.limits?.maxReplicas ?? SCALE_LIMITS.defaultCap,
      schedulesPerFunction: settings.limits?.schedulesPerFunction ?? MANIFEST_LIMITS.schedulesPerFunction,
      jobsPerFunction: settings.limits?.jobsPerFunction ?? MANIFEST_LIMITS.jobsPerFunction,
    },
    concurrency: {
      syncs,
      builds: settings.concurrency?.builds ?? DEFAULT_FUNCTION_RECONCILE_CONCURRENCY,
      reconciles: settings.concurrency?.reconciles ?? DEFAULT_RECONCILE_CONCURRENCY,
      uploads: settings.concurrency?.uploads ?? DEFAULT_APPLY_CONCURRENCY,
    },
    resyncMs: settings.resyncMs ?? DEFAULT_RESYNC_MS,
  });
}

/** A build Job's defaults (SLESS_BUILD_CPU, SLESS_BUILD_MEMORY, SLESS_BUILD_TIMEOUT, SLESS_LAYER_BUILDS override them). */
export const DEFAULT_BUILD = {
  ttlSecondsAfterFinished: 3600,
  backoffLimit: 1,
  activeDeadlineSeconds: 1800,
  cpu: '500m',
  memory: '1Gi',
  cache: true,
  layers: true,
} as const;

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Limits of repository syncs. Targets: public addresses only (loopback, link-local, private and
 * shared ranges refused after DNS resolution and on every redirect), plus `allowedHosts`.
 */
export interface GitSettings {
  /** Host names (`gitea.gitea.svc`, optionally `:port`), addresses or CIDR ranges reachable although internal. */
  readonly allowedHosts?: readonly string[];
  /** More ranges to refuse: the cluster's Service and Pod CIDRs when they are not private ranges. */
  readonly deniedCidrs?: readonly string[];
  /** Follow redirects to other hosts (still checked); default false. */
  readonly crossHostRedirects?: boolean;
  /** Most bytes one response of a sync may bring (the pack); default DEFAULT_MAX_FETCH_BYTES (256 MiB). */
  readonly maxFetchBytes?: number;
  /** Bounds on a revision's shape (depth, path length, listing size); default DEFAULT_TREE_LIMITS. */
  readonly treeLimits?: TreeLimits;
  /** Most function folders one repository may hold; default 500. */
  readonly maxFunctions?: number;
  /** Shortest spec.interval honoured; default 10 s. */
  readonly minIntervalMs?: number;
}

/** Fair shares between the namespaces of one cluster (issue 11 item 5). */
export interface TenantLimits {
  /** Most Functions one namespace may hold, git-managed and /v1-made together; default 1000. */
  readonly functionsPerNamespace?: number;
  /** Most cron schedules (Triggers of type cron) one namespace may hold; default DEFAULT_SCHEDULES_PER_NAMESPACE. */
  readonly schedulesPerNamespace?: number;
  /** Most FunctionJobs one namespace may hold; default DEFAULT_JOBS_PER_NAMESPACE. */
  readonly jobsPerNamespace?: number;
  /** Most queue consumers (enabled queue Triggers) the leader runs for one namespace; default DEFAULT_QUEUE_CONSUMERS_PER_NAMESPACE. */
  readonly queueConsumersPerNamespace?: number;
  /** Most queue deliveries of one namespace in flight at once, all its consumers together; default DEFAULT_QUEUE_IN_FLIGHT_PER_NAMESPACE. */
  readonly queueInFlightPerNamespace?: number;
  /** Most repository syncs of one namespace at once; default half the sync pool (defaultSyncsPerNamespace). */
  readonly syncsPerNamespace?: number;
  /** Most build Jobs of one namespace running at once; default DEFAULT_BUILDS_PER_NAMESPACE. */
  readonly buildsPerNamespace?: number;
  /** Share of the time one repository's syncs may keep the controller busy; default DEFAULT_SYNC_SHARE (1: no limit). */
  readonly syncShare?: number;
  /** The cap on a function's scale.max (SLESS_MAX_REPLICAS); default SCALE_LIMITS.defaultCap. */
  readonly maxReplicas?: number;
  /** The most schedules one function.yaml may declare (SLESS_MAX_SCHEDULES_PER_FUNCTION); default MANIFEST_LIMITS. */
  readonly schedulesPerFunction?: number;
  /** The most jobs one function.yaml may declare (SLESS_MAX_JOBS_PER_FUNCTION); default MANIFEST_LIMITS. */
  readonly jobsPerFunction?: number;
}

/**
 * Repository syncs at once. Most syncs are no-change syncs that stop after ls-remote (waiting on the git
 * server, not on this process): test/bench/repos.bench.ts, 100 repositories x 1 function, 2 -> 8: steady
 * state 174 s -> 96 s, one push among 99 busy repositories 14.2 s -> 11.2 s (load average 9-11). Safe for
 * the build share since it counts this controller's own creates (build-share.ts BuildReservations).
 */
export const DEFAULT_SYNC_CONCURRENCY = 8;
/**
 * Syncs of a pending push (a webhook naming a new head) beyond DEFAULT_SYNC_CONCURRENCY and the namespace
 * cap, in slots routine resyncs never take (work-queue.ts urgentPool): among 99 busy repositories a push
 * waited for a routine sync to end (test/bench/repos.bench.ts). One: pushes take turns by namespace there.
 */
export const URGENT_SYNC_SLOTS = 1;
/**
 * While a push's sync runs, routine syncs wait at their phase boundaries (api-client/urgent-gate.ts): one
 * routine sync at most URGENT_GATE_MAX_WAIT_MS over all its boundaries (a push's sync is ~60 ms alone, a
 * large one seconds: past this the resync goes on beside it), and none once pushes' syncs have run back to
 * back for URGENT_GATE_MAX_HOLD_MS without a URGENT_GATE_QUIET_MS pause (a tenant pushing all the time).
 */
export const URGENT_GATE_MAX_WAIT_MS = 2_000;
export const URGENT_GATE_MAX_HOLD_MS = 5_000;
export const URGENT_GATE_QUIET_MS = 1_000;
/**
 * The per-function work of one sync at once (context upload, then the Function and its Triggers applied):
 * I/O-bound, each request waits on the API server or S3, so 8 left the controller idle half of a
 * 1,000-function sync (about 4 functions a second at load 10); repositories take turns (fair-lanes.ts).
 */
export const DEFAULT_APPLY_CONCURRENCY = 32;
/** Function reconciles (build Job, Deployment, Service, status) at once: I/O-bound as well. */
export const DEFAULT_FUNCTION_RECONCILE_CONCURRENCY = 16;
export const DEFAULT_RECONCILE_CONCURRENCY = 8;
/** Half the sync pool (at least one): whatever one namespace queues, another finds a free slot at once. */
export function defaultSyncsPerNamespace(syncs: number): number {
  return Math.max(1, Math.floor(syncs / 2));
}


/**
 * One repository's syncs keep the controller busy at most this share of the time on average
 * (api-client/time-budget.ts, per repository): a sync that ran d ms is paid back over d / share ms before
 * the repository's next sync starts, with SYNC_BURST_MS banked by a quiet repository (it never waits)
 * and SYNC_WAIT_MAX_MS the longest wait. A repository pushed every second then syncs about once per
 * 10 x its sync time, its pushes folded into that sync, and leaves the CPU it shares (2 cores: the
 * controller, the API server, git, S3) to the other tenants (kube-fair-shares.test.ts). A namespace's
 * repositories together keep to the same share while a lighter namespace (not in debt) has synced within
 * SYNC_WAIT_MAX_MS, so a tenant's many busy repositories are not many shares; alone, or among tenants as
 * busy (a restart), a namespace is held back only per repository.
 */
export const DEFAULT_SYNC_SHARE = 0.1;
export const SYNC_BURST_MS = 3_000;
export const SYNC_WAIT_MAX_MS = 30_000;

/** Informer resync period: every object is reconciled again at least this often. */
export const DEFAULT_RESYNC_MS = 10 * 60_000;
export const DEFAULT_MAX_FUNCTIONS_PER_REPOSITORY = 500;
export const DEFAULT_MIN_INTERVAL_MS = 10_000;
export const DEFAULT_FUNCTIONS_PER_NAMESPACE = 1000;
/** Cron schedules (CronJobs) and jobs one namespace may hold: two per function at the functions' cap. */
export const DEFAULT_SCHEDULES_PER_NAMESPACE = 2000;
export const DEFAULT_JOBS_PER_NAMESPACE = 2000;
/**
 * Queue consumers run in the leader (docs/queues.md): one namespace gets at most this many, and at most
 * DEFAULT_QUEUE_IN_FLIGHT_PER_NAMESPACE calls at once, so a tenant's backlog cannot take every connection
 * and event-loop turn of the replica that also serves /fn.
 */
export const DEFAULT_QUEUE_CONSUMERS_PER_NAMESPACE = 20;
export const DEFAULT_QUEUE_IN_FLIGHT_PER_NAMESPACE = 64;

/** A namespace's builds running at once: more wait (Building, `BuildQueued`) until one of its builds ends. */
export const DEFAULT_BUILDS_PER_NAMESPACE = 10;
