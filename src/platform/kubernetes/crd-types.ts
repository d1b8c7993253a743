// GENERATED from crds/*.yaml by test/cluster/gen-crd-types.ts; do not edit by hand.
// Regenerate with: node --import tsx test/cluster/gen-crd-types.ts
// Timestamps are RFC 3339 strings, as the API server sends them in JSON.

export const GROUP = 'sless.kube5s.ru';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** Label on every object a FunctionRepository generates: the repository's name. */
export const LABEL_REPOSITORY = 'sless.kube5s.ru/repository';
/** Annotation whose new value asks for an immediate reconcile (like Flux's reconcile.fluxcd.io/requestedAt). */
export const ANNOTATION_REQUESTED_AT = 'sless.kube5s.ru/requestedAt';

/** The standard metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** The parts of ObjectMeta the sless kinds use, in their JSON form. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Array<{
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }>;
}

export const FUNCTION_RUNTIME_VALUES = ['python3.11', 'python3.12', 'nodejs20', 'nodejs22', 'go1.23'] as const;
export type FunctionRuntime = (typeof FUNCTION_RUNTIME_VALUES)[number];

/** How many replicas the function may have (function.yaml scale:, docs/scaling.md). Fields left out follow the defaults: min 1, max 10 (never above the controller's SLESS_MAX_REPLICAS), concurrency per runtime (nodejs and go 50, python 10), idle 5m. */
export interface FunctionScale {
  /** Replicas kept while idle; 0 scales to zero after idle without requests. (range 0..1000; format int32) */
  min?: number;
  /** Most replicas under load. (range 1..1000; format int32) */
  max?: number;
  /** Target requests in flight per replica. (range 1..10000; format int32) */
  concurrency?: number;
  /** With min 0, back to zero after this long without a request (at least 10s), e.g. 5m. (pattern ^([0-9]+h)?([0-9]+m)?([0-9]+s)?$; max 16 chars) */
  idle?: string;
}

/** Set when a FunctionRepository manages this Function; absent for functions made through /v1. */
export interface FunctionSource {
  /** The FunctionRepository's name (same namespace). (pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$; max 63 chars) */
  repository: string;
  /** The function's folder, relative to the repository root. (max 1024 chars) */
  path: string;
  /** The commit the current spec comes from. */
  revision?: string;
}

export interface FunctionSpec {
  runtime: FunctionRuntime;
  /** python "<module>.<func>", node "<file>.<export>"; ignored for go. (default "handler.handle"; max 253 chars) */
  entrypoint?: string;
  /** (default 128; range 64..8192; format int32) */
  memoryMB?: number;
  /** (default 30; range 1..900; format int32) */
  timeoutSec?: number;
  /** Plain environment variables as a map NAME: value, or as the old CRD had them, a list of {name, value} (both read the same way); secrets belong in envFromSecrets. Untyped so that either shape passes (the API server runs no CEL rules on untyped fields): the controller checks names and values and marks a Function with a bad env Stalled (InvalidEnv), also an old list entry with valueFrom: Secrets are read only through envFromSecrets. */
  env?: Record<string, string> | Array<{ name: string; value?: string }>;
  /** Secrets in the same namespace whose keys become environment variables. */
  envFromSecrets?: string[];
  /** sha256 over the function's code (docs/contract.md §1); absent until code is uploaded. (pattern ^sha256:[0-9a-f]{64}$) */
  codeHash?: string;
  /** Where the build context (tar.gz) is stored. (max 63 chars) */
  s3Bucket?: string;
  /** (max 1024 chars) */
  s3Key?: string;
  /** How many replicas the function may have (function.yaml scale:, docs/scaling.md). Fields left out follow the defaults: min 1, max 10 (never above the controller's SLESS_MAX_REPLICAS), concurrency per runtime (nodejs and go 50, python 10), idle 5m. */
  scale?: FunctionScale;
  /** Set when a FunctionRepository manages this Function; absent for functions made through /v1. */
  source?: FunctionSource;
}

export const FUNCTION_PHASE_VALUES = ['Pending', 'Building', 'Ready', 'Failed'] as const;
export type FunctionPhase = (typeof FUNCTION_PHASE_VALUES)[number];

/** Replicas the autoscaler wants (desired) and those that serve (ready); 0 and 0 while idle at zero. */
export interface FunctionReplicas {
  /** (range 0..inf; format int32) */
  desired?: number;
  /** (range 0..inf; format int32) */
  ready?: number;
}

/** The settings the revision ran with (its Deployment is made from them on a rollback). */
export interface FunctionConfig {
  runtime?: string;
  entrypoint?: string;
  /** (format int32) */
  memoryMB?: number;
  /** (format int32) */
  timeoutSec?: number;
  env?: Record<string, string>;
  envFromSecrets?: string[];
}

export interface FunctionRevisionsItem {
  /** (range 1..inf; format int32) */
  revision: number;
  codeHash: string;
  /** The image that runs it (kept in the registry while the revision is kept). */
  image: string;
  /** The git commit it came from (git-managed functions). */
  commit?: string;
  /** (format date-time) */
  liveFrom: string;
  /** When it stopped serving; absent for the live revision. (format date-time) */
  liveUntil?: string;
  /** Identifies the config; with codeHash, what makes two revisions the same. */
  configHash: string;
  /** The settings the revision ran with (its Deployment is made from them on a rollback). */
  config: FunctionConfig;
}

export interface FunctionStatus {
  /** (range 0..inf; format int64) */
  observedGeneration?: number;
  conditions?: Condition[];
  phase?: FunctionPhase;
  /** The built image, by digest when known. */
  imageRef?: string;
  message?: string;
  /** (format date-time) */
  lastBuiltAt?: string;
  /** Where the function answers, e.g. /fn/<namespace>/<name>. */
  url?: string;
  /** Replicas the autoscaler wants (desired) and those that serve (ready); 0 and 0 while idle at zero. */
  replicas?: FunctionReplicas;
  /** The value of the sless.kube5s.ru/requestedAt annotation the last reconcile answered. */
  lastHandledRequestedAt?: string;
  /** The build key whose build failed deterministically; not built again until the key changes or a sless.kube5s.ru/requestedAt annotation asks. */
  failedBuildKey?: string;
  /** Builds of the current key that failed for infrastructure reasons (retried with capped backoff). (range 0..inf; format int32) */
  buildRetries?: number;
  /** The last 10 revisions that went live (docs/rollback.md): each distinct code and config, with what runs it again without a build. A rollback (the sless.kube5s.ru/pinned annotation) names one of them. */
  revisions?: FunctionRevisionsItem[];
}

/** A serverless function. */
export interface FunctionResource {
  apiVersion: typeof API_VERSION;
  kind: 'Function';
  metadata: ObjectMeta;
  spec: FunctionSpec;
  status?: FunctionStatus;
}

export interface FunctionJobSpec {
  /** The Function's name (same namespace). (pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$; max 53 chars) */
  functionRef: string;
  /** The JSON event handed to the function. */
  eventJSON?: string;
  /** The job runs again whenever this grows; 0 means do not run. (default 0; range 0..inf; format int64) */
  runID?: number;
}

export const FUNCTION_JOB_PHASE_VALUES = ['Pending', 'Skipped', 'Running', 'Succeeded', 'Failed'] as const;
export type FunctionJobPhase = (typeof FUNCTION_JOB_PHASE_VALUES)[number];

export interface FunctionJobStatus {
  /** (range 0..inf; format int64) */
  observedGeneration?: number;
  conditions?: Condition[];
  phase?: FunctionJobPhase;
  /** The spec.runID this status describes. (range 0..inf; format int64) */
  runID?: number;
  jobName?: string;
  /** (format date-time) */
  startTime?: string;
  /** (format date-time) */
  completionTime?: string;
  /** The function's output (its JSON result) or why the run failed. */
  message?: string;
}

/** A one-shot run of a Function. */
export interface FunctionJobResource {
  apiVersion: typeof API_VERSION;
  kind: 'FunctionJob';
  metadata: ObjectMeta;
  spec: FunctionJobSpec;
  status?: FunctionJobStatus;
}

/** A Secret in the same namespace with username+password or token (git credentials) and webhookSecret. */
export interface FunctionRepositorySecretRef {
  /** (pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$; max 253 chars) */
  name: string;
}

export const FUNCTION_REPOSITORY_PROVIDER_VALUES = ['gitea', 'github', 'gitlab'] as const;
export type FunctionRepositoryProvider = (typeof FUNCTION_REPOSITORY_PROVIDER_VALUES)[number];

/** Sets commit statuses on each synced revision (context sless, and sless/<function> for each function that failed): pending while its functions build or roll out, success when all serve it, failure with the first error. The token is the Secret's commitStatusToken, else its token or password. */
export interface FunctionRepositoryCommitStatus {
  /** Set false to stop posting statuses without removing the block. (default true) */
  enabled?: boolean;
  /** The API the statuses go to; default from the URL's host: github.com is github, gitlab.com or gitlab.* is gitlab, anything else gitea. */
  provider?: FunctionRepositoryProvider;
}

export const PREVIEW_SECRETS_VALUES = ['none', 'inherit'] as const;
export type PreviewSecrets = (typeof PREVIEW_SECRETS_VALUES)[number];

/** Pull-request previews (docs/previews.md): a pull request against the watched branch from a branch of this repository gets namespace <namespace>-pr-<N> with the functions it changes built there; the others answer from production. */
export interface FunctionRepositoryPreviews {
  /** (default false) */
  enabled?: boolean;
  /** A preview is removed this long after its last push, e.g. 30m, 72h, 2d. (default "72h"; pattern ^[0-9]{1,6}(s|m|h|d)$) */
  ttl?: string;
  /** Open previews at most; the next pull request is refused with a commit status. (default 5; range 0..1000; format int32) */
  maxOpen?: number;
  /** Whether schedules and jobs run in previews (a preview must not fire production side effects). (default false) */
  schedules?: boolean;
  /** inherit copies the Secrets of env_from_secrets into the preview namespace; none gives previews no Secrets (a function that needs one fails with a message). (default "none") */
  secrets?: PreviewSecrets;
}

export interface FunctionRepositorySpec {
  /** The repository's HTTP(S) clone URL, without credentials (they go in secretRef). (pattern ^https?://[^\s@]+$; max 2048 chars) */
  url: string;
  /** The branch to follow. (default "main"; pattern ^[^\s~^:?*\[\\]+$; max 255 chars) */
  branch?: string;
  /** The folder searched for function.yaml files, relative to the repository root; absent means the root. (max 1024 chars) */
  path?: string;
  /** How often to poll the repository when no webhook arrives, a Go duration such as 30s, 1m or 1h30m. (default "1m"; pattern ^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$) */
  interval?: string;
  /** A Secret in the same namespace with username+password or token (git credentials) and webhookSecret. */
  secretRef?: FunctionRepositorySecretRef;
  /** Stops syncing while true; what already runs keeps running. (default false) */
  suspend?: boolean;
  /** Removes the functions whose folders disappeared from git. (default true) */
  prune?: boolean;
  /** Sets commit statuses on each synced revision (context sless, and sless/<function> for each function that failed): pending while its functions build or roll out, success when all serve it, failure with the first error. The token is the Secret's commitStatusToken, else its token or password. */
  commitStatus?: FunctionRepositoryCommitStatus;
  /** Pull-request previews (docs/previews.md): a pull request against the watched branch from a branch of this repository gets namespace <namespace>-pr-<N> with the functions it changes built there; the others answer from production. */
  previews?: FunctionRepositoryPreviews;
}

export interface FunctionRepositoryFunctionsItem {
  name: string;
  path: string;
  codeHash?: string;
  error?: string;
}

export const PREVIEW_FUNCTION_STATE_VALUES = ['built', 'production', 'removed', 'failed'] as const;
export type PreviewFunctionState = (typeof PREVIEW_FUNCTION_STATE_VALUES)[number];

export interface PreviewFunctionItem {
  name: string;
  state: PreviewFunctionState;
  path: string;
  error?: string;
}

export interface FunctionRepositoryPreviewsItem {
  /** (range 1..inf; format int64) */
  number: number;
  /** <namespace>-pr-<N> */
  namespace: string;
  /** The pull request's head branch. */
  branch: string;
  /** The head commit last planned (or to plan, while planned is false). */
  head: string;
  /** The last push; ttl counts from here. (format date-time) */
  updatedAt: string;
  /** False until the pull request has been read and planned once. */
  planned: boolean;
  /** Why the last plan failed (head unreadable, a quota copy refused), when it did. */
  message?: string;
  /** Every function of the head and the merge base, from the preview plan. */
  functions?: PreviewFunctionItem[];
}

export interface FunctionRepositoryStatus {
  /** (range 0..inf; format int64) */
  observedGeneration?: number;
  conditions?: Condition[];
  /** The commit SHA of the last successful sync. */
  revision?: string;
  /** (format date-time) */
  lastSyncTime?: string;
  /** The value of the sless.kube5s.ru/requestedAt annotation the last sync answered. */
  lastHandledRequestedAt?: string;
  /** Where push webhooks go, e.g. /hooks/<namespace>/<name>. */
  webhookPath?: string;
  /** One entry per function folder found at the last sync. */
  functions?: FunctionRepositoryFunctionsItem[];
  /** One entry per open pull-request preview, sorted by number; written by the leader's controller only. */
  previews?: FunctionRepositoryPreviewsItem[];
}

/** A git repository of functions, kept in sync with the cluster. */
export interface FunctionRepositoryResource {
  apiVersion: typeof API_VERSION;
  kind: 'FunctionRepository';
  metadata: ObjectMeta;
  spec: FunctionRepositorySpec;
  status?: FunctionRepositoryStatus;
}

export const TRIGGER_TYPE_VALUES = ['http', 'cron', 'queue'] as const;
export type TriggerType = (typeof TRIGGER_TYPE_VALUES)[number];

/** The RabbitMQ queue whose messages call the function, one call per message (type queue only). */
export interface TriggerQueue {
  /** amqp://host:5672/vhost or amqps://..., without credentials (vhost "/" is %2f). (pattern ^amqps?://[^?#]+$; max 2048 chars) */
  url: string;
  /** A Secret in the Trigger's namespace with the keys username and password. (pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$; max 253 chars) */
  secret?: string;
  /** The queue consumed; it must exist unless declare is true. (max 235 chars) */
  queue: string;
  /** True declares the queue and its dead-letter queue (durable, classic). (default false) */
  declare?: boolean;
  /** Messages in flight per consumer. (default 10; range 1..1000) */
  prefetch?: number;
  /** Calls after the first before a failing message is dead-lettered. (default 5; range 0..100) */
  retries?: number;
  /** Where failed messages go; absent means <queue>.dlq. (max 235 chars) */
  deadLetter?: string;
}

export interface TriggerSpec {
  type: TriggerType;
  /** The Function's name (same namespace). (pattern ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$; max 53 chars) */
  functionRef: string;
  /** A cron expression, e.g. "0 3 * * *" (type cron only). (max 256 chars) */
  schedule?: string;
  /** An IANA time zone such as Europe/Moscow; absent means UTC. (pattern ^[A-Za-z0-9_+\-]+(/[A-Za-z0-9_+\-]+)*$; max 64 chars) */
  timezone?: string;
  /** The JSON event handed to the function on each scheduled run. */
  eventJSON?: string;
  /** The RabbitMQ queue whose messages call the function, one call per message (type queue only). */
  queue?: TriggerQueue;
  /** (default true) */
  enabled?: boolean;
}

/** The queue as last read by the consumer (type queue; refreshed every few seconds, not per message). */
export interface TriggerQueueStats {
  /** Ready messages waiting in the queue. (range 0..inf) */
  lag?: number;
  /** Messages handed to the function and not yet settled. (range 0..inf) */
  inFlight?: number;
  /** Messages in the dead-letter queue. (range 0..inf) */
  deadLettered?: number;
}

export interface TriggerStatus {
  /** (range 0..inf; format int64) */
  observedGeneration?: number;
  conditions?: Condition[];
  /** True when the route answers or the schedule is installed. */
  active?: boolean;
  url?: string;
  /** (format date-time) */
  lastScheduleTime?: string;
  /** The queue as last read by the consumer (type queue; refreshed every few seconds, not per message). */
  queueStats?: TriggerQueueStats;
}

/** An HTTP route, a cron schedule or a RabbitMQ queue that calls a Function. */
export interface TriggerResource {
  apiVersion: typeof API_VERSION;
  kind: 'Trigger';
  metadata: ObjectMeta;
  spec: TriggerSpec;
  status?: TriggerStatus;
}

/** Kind, plural and names of each sless kind (for CustomObjectsApi calls and kubectl). */
export const KINDS = {
  Function: {
    kind: 'Function',
    plural: 'functions',
    singular: 'function',
    shortNames: ['fn', 'fns'],
    categories: ['sless'],
  },
  FunctionJob: {
    kind: 'FunctionJob',
    plural: 'functionjobs',
    singular: 'functionjob',
    shortNames: ['fnjob', 'fnjobs'],
    categories: ['sless'],
  },
  FunctionRepository: {
    kind: 'FunctionRepository',
    plural: 'functionrepositories',
    singular: 'functionrepository',
    shortNames: ['fnrepo', 'fnrepos'],
    categories: ['sless'],
  },
  Trigger: {
    kind: 'Trigger',
    plural: 'triggers',
    singular: 'trigger',
    shortNames: ['fntrigger', 'fntriggers'],
    categories: ['sless'],
  },
} as const;
export type SlessKind = keyof typeof KINDS;
