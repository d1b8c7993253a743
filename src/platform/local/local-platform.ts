// `Platform` for one machine (`sless dev`): functions from one repository (managedBy git:<repo>) and
// from /v1 (managedBy api) run as child processes; schedules run on an in-process cron; jobs run once
// per run_id. State lives under the data dir so a restart neither rebuilds nor re-runs anything.
//
// This file owns the lifecycle and composes the parts, one per concern: function-table.ts (records in
// state.json), local-deployer.ts (deploy a version, apply its outcome), repository-sync.ts (one sync),
// local-functions.ts (/v1 functions, /fn endpoints), jobs-and-schedules.ts + local-triggers.ts (triggers
// and jobs), local-repository.ts (the followed repository), local-preview-wiring.ts (pull-request previews).
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { RevisionFunction } from '../../commit-status/decide-commit-status.ts';
import PQueue from 'p-queue';
import type {
  CodeFile,
  UnpackedCode,
  Endpoint,
  FunctionScaling,
  FunctionInput,
  LogLine,
  LogQuery,
  FunctionRecord,
  JobInput,
  JobRecord,
  ManagedBy,
  Platform,
  QueueTriggerTarget,
  RepositoryInput,
  RepositoryRecord,
  RevisionRecord,
  TriggerInput,
  TriggerRecord,
  WebhookTarget,
} from '../types.ts';
import { ChildGroup } from './child-group.ts';
import { FunctionLogs } from './function-logs.ts';
import { FunctionRunner } from './function-runner.ts';
import { FunctionTable } from './function-table.ts';
import { JobsAndSchedules } from './jobs-and-schedules.ts';
import { LocalDeployer } from './local-deployer.ts';
import { LocalScaler } from './local-scaler.ts';
import { LocalFunctions } from './local-functions.ts';
import { LocalRepository } from './local-repository.ts';
import { LocalState } from './local-state.ts';
import { FunctionPreparer } from './prepare-function.ts';
import { RepositorySync, type SyncParts } from './repository-sync.ts';
import { SyncCoalescer } from './sync-coalescer.ts';
import { FolderCollector } from './folder-collector.ts';
import type { LocalPlatformOptions } from './local-platform-options.ts';
import { LocalRollback } from './local-rollback.ts';
import type { QueueReader } from './local-queue-triggers.ts';
import type { LocalPreviews } from './local-previews.ts';
import { openLocalPreviews, resolveThroughPreviews, scalingThroughPreviews, secretEnvThroughPreviews } from './local-preview-wiring.ts';
import { LocalTriggers } from './local-triggers.ts';

export type { LocalPlatformOptions } from './local-platform-options.ts';

export class LocalPlatform implements Platform {
  readonly #opts: LocalPlatformOptions;
  readonly #state: LocalState;
  readonly #table: FunctionTable;
  readonly #children = new ChildGroup();
  /** What the function processes print, a bounded buffer per function (function-logs.ts). */
  readonly #logs = new FunctionLogs();
  readonly #preparer: FunctionPreparer;
  readonly #runner: FunctionRunner;
  readonly #deployer: LocalDeployer;
  readonly #scaler: LocalScaler;
  readonly #jobs: JobsAndSchedules;
  readonly #triggers: LocalTriggers;
  readonly #functions: LocalFunctions;
  readonly #repository: LocalRepository;
  readonly #coalescer: SyncCoalescer;
  readonly #sync: RepositorySync;
  readonly #background = new Set<Promise<unknown>>();
  /** Builds and process starts of one sync run a few at a time, not one per function at once. */
  readonly #deploys: PQueue;
  readonly #previews: LocalPreviews | undefined;
  readonly #rollback: LocalRollback;
  #pollTimer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #folders: FolderCollector;

  constructor(opts: LocalPlatformOptions) {
    this.#opts = opts;
    const managedBy: ManagedBy = `git:${opts.repoName}`;
    const url = (namespace: string, name: string): string => `${opts.publicUrl()}/fn/${namespace}/${name}`;
    const track = (p: Promise<unknown>): void => this.#track(p);
    const removeFunction = (namespace: string, name: string): Promise<void> => this.#removeFunction(namespace, name);
    this.#state = new LocalState(opts.dataDir);
    this.#table = new FunctionTable(this.#state);
    this.#preparer = new FunctionPreparer({ dataDir: opts.dataDir, children: this.#children, logger: opts.logger });
    this.#runner = new FunctionRunner({
      runtimes: opts.runtimes,
      preparer: this.#preparer,
      children: this.#children,
      logger: opts.logger,
      baseEnv: opts.baseEnv,
      drainMs: opts.drainMs,
      healthTimeoutMs: opts.healthTimeoutMs,
      onFolderReleased: () => this.#folders.collect(),
      logs: this.#logs,
    });
    this.#deployer = new LocalDeployer({
      runner: this.#runner,
      table: this.#table,
      state: this.#state,
      logger: opts.logger,
      buildLog: opts.buildLog,
      url,
      preparedAt: (buildKey) => this.#preparer.preparedAt(buildKey),
      interpreterOf: (runtime) => opts.runtimes.interpreterOf?.(runtime),
      ...(opts.maxReplicas === undefined ? {} : { maxReplicas: opts.maxReplicas }),
      ...(opts.secretsDir === undefined ? {} : { secretEnv: secretEnvThroughPreviews(opts.secretsDir, () => this.#previews) }),
    });
    this.#folders = new FolderCollector({ table: this.#table, preparer: this.#preparer, inUse: () => this.#runner.buildKeysInUse(), logger: opts.logger });
    this.#rollback = new LocalRollback({ table: this.#table, state: this.#state, deployer: this.#deployer });
    this.#scaler = new LocalScaler({
      functions: this.#runner,
      logger: opts.logger,
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
      ...(opts.scaleTickMs === undefined ? {} : { tickMs: opts.scaleTickMs }),
    });
    this.#jobs = new JobsAndSchedules({
      state: this.#state,
      children: this.#children,
      logger: opts.logger,
      managedBy,
      repoName: opts.repoName,
      repoDisplayUrl: opts.repository.displayUrl,
      commandOf: (namespace, fn) => this.#deployer.jobCommandOf(namespace, fn),
      functionExists: (namespace, fn) => this.#table.get(namespace, fn) !== undefined,
      url,
      track,
      httpChanged: (namespace, fn) => this.#functions.httpChanged(namespace, fn),
    });
    this.#functions = new LocalFunctions({
      state: this.#state,
      table: this.#table,
      runner: this.#runner,
      preparer: this.#preparer,
      deployer: this.#deployer,
      repoName: opts.repoName,
      repoDisplayUrl: opts.repository.displayUrl,
      url,
      track,
      removeFunction,
      http: this.#jobs,
    });
    this.#deploys = new PQueue({ concurrency: opts.deployConcurrency ?? 4 });
    // What every sync needs, the followed repository's and each preview's (local-previews.ts).
    const parts: SyncParts = {
      namespace: opts.namespace,
      ...(opts.secretsDir === undefined ? {} : { secretsDir: opts.secretsDir }),
      managedBy,
      repository: opts.repository,
      runtimes: opts.runtimes,
      logger: opts.logger,
      state: this.#state,
      table: this.#table,
      deployer: this.#deployer,
      jobs: this.#jobs,
      deploys: this.#deploys,
      url,
      removeFunction,
    };
    const sync = (this.#sync = new RepositorySync({
      ...parts,
      ...(opts.commitStatus ? { reportRevision: (rev: string, fns: RevisionFunction[]) => void opts.commitStatus?.report(rev, fns) } : {}),
    }));
    this.#previews = openLocalPreviews(opts.previews, parts, opts.repoName, opts.publicUrl);
    this.#triggers = new LocalTriggers({
      jobs: this.#jobs,
      queueTargets: () => this.queueTriggers(),
      managedBy,
      repoName: opts.repoName,
      repoDisplayUrl: opts.repository.displayUrl,
    });
    this.#coalescer = new SyncCoalescer(
      (reasons) => (this.#closed ? Promise.resolve() : sync.run(reasons)),
      (err) => opts.logger.error(`sync of ${opts.repository.displayUrl} failed: ${(err as Error).message}`),
    );
    this.#repository = new LocalRepository({
      namespace: opts.namespace,
      repoName: opts.repoName,
      repository: opts.repository,
      webhookSecret: opts.webhookSecret,
      pollIntervalMs: opts.pollIntervalMs,
      state: this.#state,
      requestSync: (reason) => this.#coalescer.request(reason),
    });
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  /** Loads the state, starts what was running before (no rebuild), then syncs and starts polling. */
  async start(): Promise<void> {
    for (const problem of await this.#state.load()) this.#opts.logger.error(problem);
    const ns = new Set([...this.#state.data.namespaces, this.#opts.namespace]);
    this.#state.data.namespaces = [...ns];
    const stored = this.#table.all().filter((f) => f.buildKey);
    // Uploads a stopped (or killed) sless dev was unpacking: nothing refers to them.
    await rm(this.uploadsDir, { recursive: true, force: true });
    await this.#folders.pruneStored();
    await this.#deploys.addAll(stored.map((f) => () => this.#deployer.deploy(f)));
    this.#jobs.resume();
    this.#scaler.start();
    this.#coalescer.request('start');
    this.#previews?.start();
    this.#pollTimer = setInterval(() => this.#coalescer.request('poll'), this.#opts.pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** The queue triggers the functions' manifests declare (src/queue/ runs them; dev.ts polls this); a preview's as its schedules. */
  queueTriggers(): QueueTriggerTarget[] {
    const runs = (f: { record: { namespace: string } }) => this.#previews?.runsTriggers(f.record.namespace) ?? true;
    return this.#table.all().flatMap((f) => (runs(f) ? (f.manifest?.queues ?? []) : []).map((spec) => ({ namespace: f.record.namespace, function: f.record.name, spec })));
  }

  /** Resolves when no sync is running or pending (tests, benchmarks). */
  async idle(): Promise<void> {
    await this.#coalescer.idle();
    await this.#previews?.idle();
  }

  /** Synchronous last resort (process 'exit' handler): kills every child group at once. */
  killAllNow(): void {
    this.#children.killAllNow();
  }

  /** Stops polling, schedules and every child process; waits for them to be gone. */
  async close(): Promise<void> {
    this.#closed = true;
    const collected = this.#folders.close();
    clearInterval(this.#pollTimer);
    this.#scaler.stop();
    this.#jobs.stop();
    await this.#previews?.close();
    // Processes first: that also ends a dependency install a running sync waits for, and refuses
    // new children, so the sync then finishes at once instead of building on.
    await this.#runner.close();
    await this.#coalescer.close();
    await Promise.allSettled([...this.#background, collected]);
    await this.#opts.repository.close?.();
    await this.#state.save().catch(() => undefined);
  }

  #track(p: Promise<unknown>): void {
    const tracked = p.catch((err: unknown) => this.#opts.logger.error((err as Error).message));
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  async #removeFunction(namespace: string, name: string): Promise<void> {
    await this.#runner.remove(namespace, name);
    this.#table.delete(namespace, name);
    this.#jobs.forget(namespace, name);
    this.#logs.forget(namespace, name);
    this.#opts.logger.info(`${name} removed`);
    await this.#state.save();
    this.#folders.collect();
  }

  // ---- Platform: functions (local-functions.ts) ------------------------------------------------

  async resolveEndpoint(requested: string, name: string): Promise<Endpoint> {
    return resolveThroughPreviews(this.#previews, requested, name, (namespace) => {
      const endpoint = this.#functions.resolveEndpoint(namespace, name);
      // Until the repository is read, a name not known yet may well be one of its functions.
      if (endpoint.kind === 'not-found' && namespace === this.#opts.namespace && !this.#sync.readOnce) {
        return { kind: 'not-ready', reason: `sless dev is still reading the repository ${this.#opts.repository.displayUrl} (its first sync)` };
      }
      return endpoint;
    });
  }
  ensureNamespace(namespace: string): Promise<void> {
    return this.#functions.ensureNamespace(namespace);
  }
  async listFunctions(namespace: string): Promise<FunctionRecord[]> {
    return this.#functions.list(namespace).map((f) => this.#withReplicas(f));
  }
  async getFunction(namespace: string, name: string): Promise<FunctionRecord> {
    return this.#withReplicas(this.#functions.get(namespace, name));
  }
  /** Processes per function come and go with traffic: read at the time, never stored. The pin is the stored function's. */
  #withReplicas(f: FunctionRecord): FunctionRecord {
    // Disabled: no process, and none will start until http is enabled again.
    const replicas = this.#scaler.replicasOf(f.namespace, f.name) ?? (f.httpEnabled ? undefined : { desired: 0, ready: 0 });
    const pinned = this.#table.get(f.namespace, f.name)?.pinned;
    return { ...f, ...(replicas ? { replicas } : {}), ...(pinned ? { pinned } : {}) };
  }

  // ---- Platform: revisions and rollback (local-rollback.ts) --------------------------------------

  async listRevisions(namespace: string, name: string): Promise<RevisionRecord[]> {
    return this.#rollback.listRevisions(namespace, name);
  }
  async rollback(namespace: string, name: string, revision?: number): Promise<FunctionRecord> {
    await this.#rollback.rollback(namespace, name, revision);
    return this.getFunction(namespace, name);
  }
  async undoRollback(namespace: string, name: string): Promise<FunctionRecord> {
    await this.#rollback.undo(namespace, name);
    return this.getFunction(namespace, name);
  }
  /**
   * Scale to zero and out with processes (local-scaler.ts); /fn's activator wakes through it. A call
   * at a preview URL that production answers counts for, and wakes, the production function.
   */
  get scaling(): FunctionScaling {
    return scalingThroughPreviews(this.#previews, this.#scaler);
  }
  /** Pull-request previews, when `--previews` turned them on. */
  get previews(): LocalPreviews | undefined {
    return this.#previews;
  }
  createFunction(namespace: string, input: FunctionInput): Promise<FunctionRecord> {
    return this.#functions.create(namespace, input);
  }
  updateFunction(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord> {
    return this.#functions.update(namespace, name, input);
  }
  deleteFunction(namespace: string, name: string): Promise<void> {
    return this.#functions.delete(namespace, name);
  }
  uploadCode(namespace: string, name: string, code: UnpackedCode): Promise<FunctionRecord> {
    return this.#functions.uploadCode(namespace, name, code);
  }
  /** On the data dir's file system, so an unpacked upload is renamed into its build, not copied. */
  get uploadsDir(): string {
    return path.join(this.#opts.dataDir, 'uploads');
  }
  getSource(namespace: string, name: string): Promise<CodeFile[]> {
    return this.#functions.getSource(namespace, name);
  }
  /** From the processes' output kept in memory: lines printed before this `sless dev` started are gone. */
  async readLogs(namespace: string, name: string, query: LogQuery): Promise<AsyncIterable<LogLine>> {
    this.#functions.get(namespace, name);
    return this.#logs.read(namespace, name, query);
  }

  // ---- Platform: triggers and jobs (local-triggers.ts, jobs-and-schedules.ts) -----------------

  async listTriggers(namespace: string): Promise<TriggerRecord[]> {
    return this.#triggers.list(namespace);
  }
  async getTrigger(namespace: string, name: string): Promise<TriggerRecord> {
    return this.#triggers.get(namespace, name);
  }
  createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    return this.#triggers.create(namespace, input);
  }
  setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    return this.#triggers.setEnabled(namespace, name, enabled);
  }
  deleteTrigger(namespace: string, name: string): Promise<void> {
    return this.#triggers.delete(namespace, name);
  }
  /** Where /v1 and the console read the consumers' readings (dev.ts: the running queue triggers). */
  readQueuesFrom(reader: QueueReader): void {
    this.#triggers.readQueuesFrom(reader);
  }
  async listJobs(namespace: string): Promise<JobRecord[]> {
    return this.#jobs.listJobs(namespace);
  }
  createJob(namespace: string, input: JobInput): Promise<JobRecord> {
    return this.#jobs.createJob(namespace, input);
  }
  async getJob(namespace: string, name: string): Promise<JobRecord> {
    return this.#jobs.getJob(namespace, name);
  }
  deleteJob(namespace: string, name: string): Promise<void> {
    return this.#jobs.deleteJob(namespace, name);
  }

  // ---- Platform: repositories (local-repository.ts) --------------------------------------------

  async listRepositories(namespace: string): Promise<RepositoryRecord[]> {
    return this.#repository.list(namespace);
  }
  async getRepository(namespace: string, name: string): Promise<RepositoryRecord> {
    return this.#repository.get(namespace, name);
  }
  async createRepository(_namespace: string, input: RepositoryInput): Promise<RepositoryRecord> {
    return this.#repository.create(input);
  }
  async deleteRepository(namespace: string, name: string): Promise<void> {
    this.#repository.delete(namespace, name);
  }
  async requestSync(namespace: string, name: string, reason: string): Promise<void> {
    this.#repository.requestSync(namespace, name, reason);
  }
  async webhookTarget(namespace: string, name: string): Promise<WebhookTarget | undefined> {
    return this.#repository.webhookTarget(namespace, name);
  }

  async ready(): Promise<{ ok: boolean; detail?: string }> {
    if (this.#closed) return { ok: false, detail: 'shutting down' };
    const err = this.#state.data.repository.lastError;
    return err ? { ok: true, detail: `last sync failed: ${err}` } : { ok: true };
  }
}
