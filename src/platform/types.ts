// The one boundary between the HTTP surface (/fn, /v1, /hooks) and where functions really live.
// Two implementations: kubernetes/ (the controller) and local/ (`sless dev`).
import type { QueueSettings, Runtime, ScaleInput } from '../manifest/types.ts';
import type { PreviewFunctionState } from '../preview/preview-plan.ts';
import type { CodeFile, FileMode } from '../source/types.ts';
import type { PullRequestEvent } from '../webhook/pull-request.ts';

/** How many replicas (pods, or `sless dev` processes) a function should have and has serving. */
export interface Replicas {
  readonly desired: number;
  readonly ready: number;
}

export type FunctionPhase = 'Pending' | 'Building' | 'Ready' | 'Failed';
export type JobPhase = 'Pending' | 'Skipped' | 'Running' | 'Succeeded' | 'Failed';
/** `api` for functions made through /v1, `git:<repository>` for those a FunctionRepository owns. */
export type ManagedBy = 'api' | `git:${string}`;

export interface FunctionRecord {
  readonly name: string;
  readonly namespace: string;
  readonly runtime: Runtime;
  readonly entrypoint: string;
  readonly memoryMb: number;
  readonly timeoutSec: number;
  readonly env: Readonly<Record<string, string>>;
  readonly envFromSecrets: readonly string[];
  /** Whether /fn serves it: no http trigger, or any enabled one (rules.ts servesHttp). */
  readonly httpEnabled: boolean;
  /** `scale:` as written (scale-spec.ts resolveScale fills in the defaults); undefined: all defaults. */
  readonly scale?: ScaleInput;
  /** What the platform last reported; undefined when it has not (yet). */
  readonly replicas?: Replicas;
  /** Ready only while the wanted version serves; Pending/Building while a change is under way. */
  readonly phase: FunctionPhase;
  readonly imageRef?: string;
  readonly message?: string;
  readonly codeHash?: string;
  readonly lastBuiltAt?: string;
  readonly url?: string;
  readonly managedBy: ManagedBy;
  /** Set while a rollback pins the function to an earlier revision (revisions.ts); undefined: git's head / the last upload serves. */
  readonly pinned?: PinRecord;
}

/** A revision as /v1 shows it (src/platform/revisions.ts Revision, without the platform's config). */
export interface RevisionRecord {
  readonly revision: number;
  readonly codeHash: string;
  /** What runs it: an image reference on Kubernetes, `local:<build key>` in `sless dev`. */
  readonly image: string;
  /** The git commit it came from (git-managed functions). */
  readonly commit?: string;
  readonly liveFrom: string;
  /** Undefined for the live revision. */
  readonly liveUntil?: string;
}

export interface PinRecord {
  readonly revision: number;
  readonly since: string;
}

export interface FunctionInput {
  readonly name: string;
  readonly runtime: Runtime;
  readonly entrypoint?: string;
  readonly memoryMb?: number;
  readonly timeoutSec?: number;
  readonly env?: Readonly<Record<string, string>>;
  readonly envFromSecrets?: readonly string[];
  /** Sets the function's http triggers (rules.ts httpTriggerChanges); undefined leaves them as they are. */
  readonly httpEnabled?: boolean;
  /** The whole `scale:` (written fields); undefined: all defaults. */
  readonly scale?: ScaleInput;
}

export type TriggerType = 'http' | 'cron' | 'queue';

/** A queue trigger's consumer as last read (refreshed every few seconds, not per message). */
export interface QueueStats {
  /** Ready messages waiting in the queue. */
  readonly lag?: number;
  /** Messages handed to the function and not yet settled. */
  readonly inFlight?: number;
  /** Messages in the dead-letter queue. */
  readonly deadLettered?: number;
}

export interface TriggerRecord {
  readonly name: string;
  readonly namespace: string;
  readonly type: TriggerType;
  readonly functionRef: string;
  readonly schedule?: string;
  readonly timezone?: string;
  readonly eventJson?: string;
  readonly enabled: boolean;
  readonly active: boolean;
  readonly url?: string;
  readonly lastScheduleTime?: string;
  /** Type queue: what it consumes, with every default filled in. */
  readonly queue?: QueueSettings;
  readonly queueStats?: QueueStats;
  readonly managedBy: ManagedBy;
}

/** A queue trigger's settings as a client sends them (defaults: manifest/defaults.ts QUEUE_DEFAULTS). */
export type QueueSettingsInput = Pick<QueueSettings, 'url' | 'queue'> & Partial<Omit<QueueSettings, 'url' | 'queue'>>;

export interface TriggerInput {
  readonly name: string;
  readonly type: TriggerType;
  readonly functionRef: string;
  readonly schedule?: string;
  readonly timezone?: string;
  readonly eventJson?: string;
  /** Type queue only. */
  readonly queue?: QueueSettingsInput;
  readonly enabled?: boolean;
}

export interface JobRecord {
  readonly name: string;
  readonly namespace: string;
  readonly functionRef: string;
  readonly eventJson?: string;
  readonly runId: number;
  readonly phase: JobPhase;
  readonly jobName?: string;
  readonly startTime?: string;
  readonly completionTime?: string;
  readonly message?: string;
  readonly managedBy: ManagedBy;
}

export interface JobInput {
  readonly name: string;
  readonly functionRef: string;
  readonly eventJson?: string;
  readonly runId?: number;
}

export interface RepositoryFunctionStatus {
  readonly name: string;
  readonly path: string;
  readonly codeHash?: string;
  readonly error?: string;
}

export interface RepositoryRecord {
  readonly name: string;
  readonly namespace: string;
  readonly url: string;
  readonly branch: string;
  readonly path: string;
  readonly interval: string;
  readonly suspend: boolean;
  readonly prune: boolean;
  readonly secretName?: string;
  readonly revision?: string;
  readonly lastSyncTime?: string;
  readonly webhookPath: string;
  readonly functions: readonly RepositoryFunctionStatus[];
  readonly ready?: { readonly status: 'True' | 'False' | 'Unknown'; readonly reason: string; readonly message: string };
}

export interface RepositoryInput {
  readonly name: string;
  readonly url: string;
  readonly branch?: string;
  readonly path?: string;
  readonly interval?: string;
  readonly suspend?: boolean;
  readonly prune?: boolean;
  /** Stored in a Secret, never returned. */
  readonly credentials?: { readonly username?: string; readonly password?: string; readonly token?: string };
  readonly webhookSecret?: string;
}

/** Filed with the source layer, which reads such files too (code hashes) and must not import the platform. */
export type { CodeFile } from '../source/types.ts';

/**
 * Uploaded code unpacked on disk (src/http/read-zip.ts): the files sit under `root`, links created
 * last and checked to stay inside it. `uploadCode` takes `dir` over: the platform removes it once
 * it no longer needs it, whatever the outcome.
 */
export interface UnpackedCode {
  /** The folder to remove when done (holds `root`). */
  readonly dir: string;
  /** The code's folder: paths are relative to it. */
  readonly root: string;
  readonly files: readonly { readonly path: string; readonly mode: FileMode; readonly oid: string; readonly size: number }[];
  readonly codeHash: string;
}

/**
 * One replica of a function, picked for one call (Kubernetes with SLESS_ROUTE_TO_PODS: a pod's own
 * address, docs/pod-routing.md). `release` is called once when the call ends: `refused` when nothing
 * listened there (the picker may take the replica out of rotation), else `done`.
 */
export interface PickedReplica {
  readonly baseUrl: string;
  release(outcome: 'done' | 'refused'): void;
}

/** Picks the replica for each call; `pick` returns undefined when none is known: then use `baseUrl`. */
export interface ReplicaPicker {
  pick(): PickedReplica | undefined;
}

export type Endpoint =
  /** `baseUrl` reaches any replica (a Service, a dev process); `replicas`, when given, picks one per call. */
  | { readonly kind: 'ready'; readonly baseUrl: string; readonly timeoutSec: number; readonly replicas?: ReplicaPicker }
  /** Scaled to zero (scale.min 0 and idle): /fn holds the call and asks `Platform.scaling.wake`. */
  | { readonly kind: 'idle'; readonly timeoutSec: number }
  | { readonly kind: 'not-found' }
  /**
   * http is off: /fn answers 503. A function that still runs for its queue triggers (docs/queues.md)
   * carries where their deliveries go in `forQueues`.
   */
  | { readonly kind: 'disabled'; readonly forQueues?: Endpoint }
  | { readonly kind: 'not-ready'; readonly reason: string };

/** What a webhook needs to know about a repository to verify and route a delivery. */
export interface WebhookTarget {
  readonly branch: string;
  /** Undefined when the repository has no webhookSecret: then every delivery is refused. */
  readonly secret?: string;
}

export const PLATFORM_ERROR_CODES = [
  'not_found',
  'already_exists',
  'managed_by_git',
  'invalid',
  'unavailable',
  'quota_exceeded',
] as const;
export type PlatformErrorCode = (typeof PLATFORM_ERROR_CODES)[number];

/** Thrown by platforms; the HTTP layer maps `code` to a status (404, 409, 409, 400, 503). */
export class PlatformError extends Error {
  constructor(
    readonly code: PlatformErrorCode,
    message: string,
    options?: { cause?: unknown; repository?: string },
  ) {
    super(message, options);
    this.name = 'PlatformError';
    this.repository = options?.repository;
  }
  readonly repository: string | undefined;
}

/**
 * What /fn's activator (src/http/activator.ts) needs of a platform that scales functions with their
 * traffic (issue 29, docs/scaling.md). A platform without it keeps every function running as before.
 */
export interface FunctionScaling {
  /**
   * A /fn call for the function began (also while it waits for a cold start): it counts as in flight,
   * for the autoscaler, until the returned function is called (once, when the call ends either way).
   */
  requestBegan(namespace: string, name: string): () => void;
  /**
   * Asks for one replica of a function at zero and resolves once one serves (resolveEndpoint then
   * says ready), or rejects with why it cannot start. The activator calls it once per function however
   * many calls wait. Idempotent: a wake while one is under way or a replica serves changes nothing.
   */
  wake(namespace: string, name: string): Promise<void>;
}

export interface Platform {
  /** Where /fn should send a call; never throws for an unknown function (returns not-found). */
  resolveEndpoint(namespace: string, name: string): Promise<Endpoint>;
  /** Present when the platform scales functions (to zero and out); see FunctionScaling. */
  readonly scaling?: FunctionScaling;
  ensureNamespace(namespace: string): Promise<void>;

  listFunctions(namespace: string): Promise<FunctionRecord[]>;
  getFunction(namespace: string, name: string): Promise<FunctionRecord>;
  createFunction(namespace: string, input: FunctionInput): Promise<FunctionRecord>;
  updateFunction(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord>;
  deleteFunction(namespace: string, name: string): Promise<void>;
  /** Replaces the function's code; starts a build when its code_hash changed. */
  uploadCode(namespace: string, name: string, code: UnpackedCode): Promise<FunctionRecord>;
  /** Where uploads are unpacked before uploadCode (on the data dir's file system for sless dev). */
  readonly uploadsDir: string;
  /** The function's current code, as files (the HTTP layer zips them). */
  getSource(namespace: string, name: string): Promise<CodeFile[]>;

  /** The kept revisions (the last 10 that went live), by number. */
  listRevisions(namespace: string, name: string): Promise<RevisionRecord[]>;
  /**
   * Serves `revision` (undefined: the one before the live one) at once, with no build, and pins the
   * function to it: later code and settings build but wait until undoRollback. 400 (`invalid`) when
   * there is no such revision.
   */
  rollback(namespace: string, name: string, revision?: number): Promise<FunctionRecord>;
  /** Removes the pin: the function's own spec (git's head, the last upload) serves again. */
  undoRollback(namespace: string, name: string): Promise<FunctionRecord>;

  listTriggers(namespace: string): Promise<TriggerRecord[]>;
  getTrigger(namespace: string, name: string): Promise<TriggerRecord>;
  createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord>;
  setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord>;
  deleteTrigger(namespace: string, name: string): Promise<void>;

  /** Every job of the namespace (the console shows each function's jobs with their results). */
  listJobs(namespace: string): Promise<JobRecord[]>;
  createJob(namespace: string, input: JobInput): Promise<JobRecord>;
  getJob(namespace: string, name: string): Promise<JobRecord>;
  deleteJob(namespace: string, name: string): Promise<void>;

  listRepositories(namespace: string): Promise<RepositoryRecord[]>;
  getRepository(namespace: string, name: string): Promise<RepositoryRecord>;
  createRepository(namespace: string, input: RepositoryInput): Promise<RepositoryRecord>;
  deleteRepository(namespace: string, name: string): Promise<void>;
  /**
   * Asks for a sync now; coalesces with one already pending; never waits for it to finish. `head`: the
   * commit a push webhook named, a hint that lets the sync fetch it without asking the server for the
   * branch first (the sync still checks it); a platform may ignore it.
   */
  requestSync(namespace: string, name: string, reason: string, hint?: SyncHint): Promise<void>;
  /**
   * For /hooks: the branch and secret of a repository, or undefined when it does not exist. A platform
   * may answer from a cache; `refresh` (the signature did not match) asks it to look again, which it may
   * rate-limit.
   */
  webhookTarget(namespace: string, name: string, options?: { readonly refresh?: boolean }): Promise<WebhookTarget | undefined>;

  /**
   * The function's output (issue 33, docs/logs.md): lines of every replica, the backlog first; with
   * `follow`, new lines as they are written (new replicas included) until `signal` aborts. Throws
   * PlatformError not_found for an unknown function before anything is read.
   */
  readLogs(namespace: string, name: string, query: LogQuery): Promise<AsyncIterable<LogLine>>;

  /** For /readyz. */
  ready(): Promise<{ ok: boolean; detail?: string }>;

  /** Pull-request previews (docs/previews.md); a platform without them ignores pull-request deliveries. */
  readonly previews?: PlatformPreviews;
}

/** Pull-request previews of a platform's repositories (docs/previews.md). */
export interface PlatformPreviews {
  /**
   * A verified pull-request delivery for repository `name` of `namespace`: decides and starts the
   * preview's build or removal in the background. Never throws for what the delivery says.
   */
  pullRequest(namespace: string, name: string, event: PullRequestEvent, reason: string): Promise<PreviewAnswer>;
  /** The open previews of the repositories of `namespace`, by PR number. */
  list(namespace: string): Promise<PreviewRecord[]>;
}

export interface PreviewAnswer {
  /** accepted: a build or removal started; ignored: nothing to do (logged); refused: a status says why. */
  readonly outcome: 'accepted' | 'ignored' | 'refused';
  readonly message: string;
}

export interface PreviewFunctionRecord {
  readonly name: string;
  readonly state: PreviewFunctionState;
  /** For built functions: their phase in the preview namespace. */
  readonly phase?: FunctionPhase;
  /** The preview URL for built functions, the production URL for the others (none for removed ones). */
  readonly url?: string;
}

export interface PreviewRecord {
  readonly number: number;
  readonly namespace: string;
  readonly repository: string;
  readonly branch: string;
  /** The head commit the preview was last planned for. */
  readonly head: string;
  /** `/fn/<namespace>-pr-<N>/` */
  readonly url: string;
  /** ttl after the last push. */
  readonly expiresAt: string;
  readonly functions: readonly PreviewFunctionRecord[];
}

/**
 * Where a line came from: `stdout`/`stderr` where the platform keeps them apart (`sless dev`), `output`
 * where it cannot (Kubernetes' pod log API merges a container's two streams).
 */
export type LogStream = 'stdout' | 'stderr' | 'output';

/** One line a function printed. */
export interface LogLine {
  /** When it was written (RFC 3339, UTC). */
  readonly time: string;
  /** The pod (Kubernetes) or process (`sless dev`, `pid-<n>`) that printed it. */
  readonly replica: string;
  readonly stream: LogStream;
  readonly line: string;
}

export interface LogQuery {
  /** Keep following new lines until `signal` aborts. */
  readonly follow: boolean;
  /** Only lines written at or after this time (ms since the epoch). */
  readonly sinceMs?: number;
  /** Only the last this many lines (per replica while following). */
  readonly tail?: number;
  /** Aborted when the client leaves: every read and watch stops. */
  readonly signal: AbortSignal;
}

/** What a sync request knows about the change it asks for (see Platform.requestSync). */
export interface SyncHint {
  /** The new head commit (40 hex digits) a verified push webhook named. */
  readonly head?: string;
}

/** A queue trigger a platform runs for one of its functions (function.yaml `queues:`, src/queue/). */
export type { QueueTriggerTarget } from '../queue/invoke.ts';
