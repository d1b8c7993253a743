// `Platform` for one machine (`sless dev`): functions from one repository (managedBy git:<repo>) and
// from /v1 (managedBy api) run as child processes; schedules run on an in-process cron; jobs run once
// per run_id. State lives under the data dir so a restart neither rebuilds nor re-runs anything.
import PQueue from 'p-queue';
import { formatProblem } from '../../manifest/format-problem.ts';
import type { FunctionManifest } from '../../manifest/types.ts';
import { planChanges } from '../../plan/plan-changes.ts';
import { hashFiles } from '../../source/code-hash.ts';
import type { BuildLog } from '../../store/types.ts';
import type { FunctionEntry } from '../../source/types.ts';
import {
  PlatformError,
  type CodeFile,
  type Endpoint,
  type FunctionInput,
  type FunctionRecord,
  type JobInput,
  type JobRecord,
  type ManagedBy,
  type Platform,
  type RepositoryInput,
  type RepositoryRecord,
  type TriggerInput,
  type TriggerRecord,
  type WebhookTarget,
} from '../types.ts';
import { functionSettingsOf } from '../records.ts';
import { ChildGroup, type CommandSpec } from './child-group.ts';
import { FunctionRunner, type DeployOutcome, type DeploySpec } from './function-runner.ts';
import { JobsAndSchedules, notFound } from './jobs-and-schedules.ts';
import { LocalState, stateKey, type StoredFunction } from './local-state.ts';
import type { Logger } from './logger.ts';
import type { LocalRuntimes, RepositoryRead, RepositoryReader } from './ports.ts';
import { FunctionPreparer } from './prepare-function.ts';
import { SyncCoalescer } from './sync-coalescer.ts';

export interface LocalPlatformOptions {
  readonly dataDir: string;
  /** Namespace of the repository's functions (`/fn/<namespace>/<name>`). */
  readonly namespace: string;
  readonly repoName: string;
  readonly repository: RepositoryReader;
  readonly runtimes: LocalRuntimes;
  readonly webhookSecret?: string;
  readonly pollIntervalMs: number;
  readonly logger: Logger;
  /** Where users reach the HTTP listener, e.g. `http://localhost:8080` (known only after listen). */
  readonly publicUrl: () => string;
  readonly baseEnv?: Readonly<Record<string, string>>;
  /** Where builds (prepared folders) are recorded for /v1 .../builds. */
  readonly buildLog?: BuildLog;
  readonly drainMs?: number;
  readonly healthTimeoutMs?: number;
  /** How many functions a sync builds or starts at the same time (default 4). */
  readonly deployConcurrency?: number;
}

/** Counts for the "synced rev X (...)" line. */
interface SyncSummary {
  readonly revision: string;
  readonly total: number;
  readonly added: number;
  readonly rebuilt: number;
  readonly redeployed: number;
  readonly removed: number;
  readonly unchanged: number;
  readonly errors: number;
}

const shortRev = (rev: string) => (/^[0-9a-f]{40}$/.test(rev) ? rev.slice(0, 7) : rev.slice(0, 19));


export class LocalPlatform implements Platform {
  readonly #opts: LocalPlatformOptions;
  readonly #managedBy: ManagedBy;
  readonly #state: LocalState;
  readonly #children = new ChildGroup();
  readonly #preparer: FunctionPreparer;
  readonly #runner: FunctionRunner;
  readonly #jobs: JobsAndSchedules;
  readonly #coalescer: SyncCoalescer;
  readonly #background = new Set<Promise<unknown>>();
  /** Builds and process starts of one sync run a few at a time, not one per function at once. */
  readonly #deploys: PQueue;
  #pollTimer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: LocalPlatformOptions) {
    this.#opts = opts;
    this.#managedBy = `git:${opts.repoName}`;
    this.#state = new LocalState(opts.dataDir);
    this.#preparer = new FunctionPreparer({ dataDir: opts.dataDir, children: this.#children, logger: opts.logger });
    this.#runner = new FunctionRunner({
      runtimes: opts.runtimes,
      preparer: this.#preparer,
      children: this.#children,
      logger: opts.logger,
      baseEnv: opts.baseEnv,
      drainMs: opts.drainMs,
      healthTimeoutMs: opts.healthTimeoutMs,
    });
    this.#jobs = new JobsAndSchedules({
      state: this.#state,
      children: this.#children,
      logger: opts.logger,
      managedBy: this.#managedBy,
      repoName: opts.repoName,
      repoDisplayUrl: opts.repository.displayUrl,
      commandOf: (namespace, fn) => this.#jobCommandOf(namespace, fn),
      functionExists: (namespace, fn) => this.#get(namespace, fn) !== undefined,
      url: (namespace, fn) => this.#url(namespace, fn),
      track: (p) => this.#track(p),
    });
    this.#deploys = new PQueue({ concurrency: opts.deployConcurrency ?? 4 });
    this.#coalescer = new SyncCoalescer(
      (reasons) => this.#sync(reasons),
      (err) => opts.logger.error(`sync of ${opts.repository.displayUrl} failed: ${(err as Error).message}`),
    );
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  /** Loads the state, starts what was running before (no rebuild), then syncs and starts polling. */
  async start(): Promise<void> {
    await this.#state.load();
    const ns = new Set([...this.#state.data.namespaces, this.#opts.namespace]);
    this.#state.data.namespaces = [...ns];
    const stored = Object.values(this.#state.data.functions).filter((f) => f.buildKey);
    const pruned = await this.#preparer.prune(new Set(stored.map((f) => f.buildKey as string)));
    if (pruned.length > 0) this.#opts.logger.info(`removed ${pruned.length} prepared folders no function uses any more`);
    await this.#deploys.addAll(stored.map((f) => () => this.#deployStored(f)));
    this.#jobs.resume();
    this.#coalescer.request('start');
    this.#pollTimer = setInterval(() => this.#coalescer.request('poll'), this.#opts.pollIntervalMs);
    this.#pollTimer.unref();
  }

  /** Resolves when no sync is running or pending (tests, benchmarks). */
  async idle(): Promise<void> {
    await this.#coalescer.idle();
  }

  /** Synchronous last resort (process 'exit' handler): kills every child group at once. */
  killAllNow(): void {
    this.#children.killAllNow();
  }

  /** Stops polling, schedules and every child process; waits for them to be gone. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#pollTimer);
    this.#jobs.stop();
    // Processes first: that also ends a dependency install a running sync waits for, and refuses
    // new children, so the sync then finishes at once instead of building on.
    await this.#runner.close();
    await this.#coalescer.close();
    await Promise.allSettled([...this.#background]);
    await this.#opts.repository.close?.();
    await this.#state.save().catch(() => undefined);
  }

  #track<T>(p: Promise<T>): void {
    const tracked = p.catch((err: unknown) => this.#opts.logger.error((err as Error).message));
    this.#background.add(tracked);
    void tracked.finally(() => this.#background.delete(tracked));
  }

  // ---- records ---------------------------------------------------------------------------------

  #url(namespace: string, name: string): string {
    return `${this.#opts.publicUrl()}/fn/${namespace}/${name}`;
  }

  #get(namespace: string, name: string): StoredFunction | undefined {
    return this.#state.data.functions[stateKey(namespace, name)];
  }

  #put(f: StoredFunction): void {
    this.#state.data.functions[stateKey(f.record.namespace, f.record.name)] = f;
  }

  #patchRecord(namespace: string, name: string, patch: Partial<FunctionRecord>, extra: Partial<StoredFunction> = {}): void {
    const f = this.#get(namespace, name);
    if (!f) return;
    this.#put({ ...f, ...extra, record: { ...f.record, ...patch } });
  }

  #specOf(record: FunctionRecord): DeploySpec | undefined {
    if (!record.codeHash) return undefined;
    return {
      namespace: record.namespace,
      name: record.name,
      runtime: record.runtime,
      entrypoint: record.entrypoint,
      timeoutSec: record.timeoutSec,
      memoryMb: record.memoryMb,
      env: record.env,
      httpEnabled: record.httpEnabled,
      codeHash: record.codeHash,
    };
  }

  #jobCommandOf(namespace: string, fn: string): { command: CommandSpec; timeoutSec: number } | { missing: string } {
    const f = this.#get(namespace, fn);
    const spec = f && this.#specOf(f.record);
    if (!f?.buildKey || !spec) return { missing: `function ${namespace}/${fn} has no built code yet` };
    return { command: this.#runner.commandFor(spec, this.#runner.appDirOf(f.buildKey), 0), timeoutSec: f.record.timeoutSec };
  }

  /** Applies a deploy outcome to the record and logs it the way a user reads it. */
  #applyOutcome(namespace: string, name: string, outcome: DeployOutcome): void {
    const label = `${namespace}/${name}`;
    const now = new Date().toISOString();
    switch (outcome.kind) {
      case 'unchanged':
        return;
      case 'started':
        this.#patchRecord(
          namespace,
          name,
          {
            phase: 'Ready',
            message: undefined,
            imageRef: `local:${outcome.buildKey}`,
            ...(outcome.built ? { lastBuiltAt: now } : {}),
            url: this.#url(namespace, name),
          },
          { buildKey: outcome.buildKey },
        );
        this.#opts.logger.info(`${name} ready at ${this.#url(namespace, name)}`);
        return;
      case 'disabled':
        this.#patchRecord(namespace, name, { phase: 'Ready', message: 'http disabled', imageRef: `local:${outcome.buildKey}` }, { buildKey: outcome.buildKey });
        this.#opts.logger.info(`${label} built; http disabled (/fn answers 503)`);
        return;
      case 'failed':
        if (outcome.repeated) return;
        this.#patchRecord(namespace, name, {
          phase: outcome.stillServing ? 'Ready' : 'Failed',
          message: outcome.stillServing ? `new version failed, still serving the previous one: ${outcome.message}` : outcome.message,
        });
        this.#opts.logger.error(`${label} ${outcome.stillServing ? 'new version failed (previous version keeps serving)' : 'failed'}: ${outcome.message}`);
    }
  }

  async #deployStored(f: StoredFunction, files?: () => AsyncIterable<CodeFile> | Iterable<CodeFile>): Promise<DeployOutcome> {
    const spec = this.#specOf(f.record);
    if (!spec) return { kind: 'unchanged' };
    const { namespace, name } = f.record;
    const source =
      files ??
      (() => {
        // Only reached when the prepared folder is gone (data dir cleaned): nothing to rebuild from.
        throw new Error(`the prepared folder of ${namespace}/${name} is missing; push or upload its code again`);
      });
    let buildStarted: number | undefined;
    const outcome = await this.#runner.deploy(spec, source, () => {
      buildStarted = Date.now();
      this.#opts.logger.info(`building ${name}`);
      this.#patchRecord(namespace, name, { phase: this.#runner.baseUrl(namespace, name) ? 'Ready' : 'Building' });
    });
    if (buildStarted !== undefined && outcome.kind !== 'unchanged') {
      const failed = outcome.kind === 'failed' && outcome.message.startsWith('build failed');
      this.#opts.buildLog?.record({
        namespace,
        function: name,
        codeHash: spec.codeHash,
        outcome: failed ? 'failed' : 'succeeded',
        imageRef: outcome.buildKey ? `local:${outcome.buildKey}` : undefined,
        message: failed ? outcome.message : undefined,
        startedAt: new Date(buildStarted).toISOString(),
        finishedAt: new Date().toISOString(),
        durationMs: Date.now() - buildStarted,
      });
    }
    this.#applyOutcome(namespace, name, outcome);
    await this.#state.save();
    return outcome;
  }

  // ---- sync ------------------------------------------------------------------------------------

  async #sync(reasons: string[]): Promise<void> {
    if (this.#closed) return;
    const started = Date.now();
    const repo = this.#opts.repository;
    let read: RepositoryRead;
    try {
      read = await repo.read();
    } catch (err) {
      this.#state.data.repository = { ...this.#state.data.repository, lastError: (err as Error).message };
      throw err;
    }
    const { snapshot } = read;
    const stored = this.#state.data.repository;
    const plan = planChanges(stored.snapshot, snapshot, {
      baseImageOf: (runtime) => this.#opts.runtimes.versionOf(runtime),
      prevBaseImages: stored.baseImages,
    });
    const ns = this.#opts.namespace;
    // A poll of an unchanged revision repeats nothing in the log (a broken folder stays broken quietly).
    const news = snapshot.revision !== stored.revision || reasons.some((r) => r !== 'poll');

    for (const e of news ? plan.errors : []) {
      const why = e.problems.map((p) => formatProblem(p)).join('; ') || 'could not be read';
      const running = this.#get(ns, e.name)?.record.managedBy === this.#managedBy;
      this.#opts.logger.error(`${e.path || '.'}: ${why}${running ? ' (the last good version keeps running)' : ''}`);
      if (running) this.#patchRecord(ns, e.name, { message: `function.yaml broken, serving the last good version: ${why}` });
    }
    for (const [name, why] of Object.entries(plan.reasons)) this.#opts.logger.info(`${name} changed: ${why.join(', ')}`);

    // Every healthy function is reconciled, not only the changed ones: deploy() is a no-op for a
    // function already running its version, and this also restarts what a crash of sless dev lost.
    const healthy = [...plan.added, ...plan.rebuild, ...plan.redeploy, ...plan.unchanged];
    const outcomes = await this.#deploys.addAll(healthy.map((e) => () => this.#syncFunction(read, e)));
    for (const e of plan.removed) await this.#removeFunction(ns, e.name);

    this.#state.data.repository = {
      revision: snapshot.revision,
      lastSyncTime: new Date().toISOString(),
      snapshot: plan.applied,
      baseImages: plan.baseImages,
      functions: snapshot.functions.map((e) => ({
        name: e.name,
        path: e.path,
        codeHash: e.codeHash,
        error: e.problems.length > 0 ? e.problems.map((p) => formatProblem(p)).join('; ') : undefined,
      })),
    };
    await this.#state.save();

    const failed = outcomes.filter((o) => o.kind === 'failed').length;
    const failedAnew = outcomes.filter((o) => o.kind === 'failed' && !o.repeated).length;
    const summary: SyncSummary = {
      revision: snapshot.revision,
      total: snapshot.functions.length,
      added: plan.added.length,
      rebuilt: plan.rebuild.length,
      redeployed: plan.redeploy.length,
      removed: plan.removed.length,
      unchanged: plan.unchanged.length,
      errors: plan.errors.length + failed,
    };
    if (news || summary.added + summary.rebuilt + summary.redeployed + summary.removed + failedAnew > 0) {
      this.#opts.logger.info(
        `synced rev ${shortRev(snapshot.revision)} (${summary.total} functions: ${summary.added} added, ${summary.rebuilt} rebuilt, ` +
          `${summary.redeployed} redeployed, ${summary.removed} removed, ${summary.unchanged} unchanged, ${summary.errors} errors) ` +
          `in ${Date.now() - started} ms [${[...new Set(reasons)].join(', ')}]`,
      );
    }
  }

  async #syncFunction(read: RepositoryRead, e: FunctionEntry): Promise<DeployOutcome> {
    const ns = this.#opts.namespace;
    const m = e.manifest as FunctionManifest;
    const existing = this.#get(ns, m.name);
    if (existing && existing.record.managedBy !== this.#managedBy) {
      const message = `${e.path}: a function named ${m.name} was made through /v1; rename one of them`;
      this.#opts.logger.error(message);
      return { kind: 'failed', message, stillServing: true };
    }
    const record: FunctionRecord = {
      name: m.name,
      namespace: ns,
      runtime: m.runtime,
      entrypoint: m.entrypoint,
      memoryMb: m.memoryMb,
      timeoutSec: m.timeoutSec,
      env: m.env,
      envFromSecrets: m.envFromSecrets,
      httpEnabled: m.http.enabled,
      phase: existing?.record.phase ?? 'Pending',
      imageRef: existing?.record.imageRef,
      message: existing?.record.phase === 'Failed' ? existing.record.message : undefined,
      codeHash: e.codeHash,
      lastBuiltAt: existing?.record.lastBuiltAt,
      url: this.#url(ns, m.name),
      managedBy: this.#managedBy,
    };
    if (m.envFromSecrets.length > 0 && !existing) {
      this.#opts.logger.warn(`${m.name}: env_from_secrets (${m.envFromSecrets.join(', ')}) is ignored by sless dev: there are no Secrets here`);
    }
    this.#put({ record, buildKey: existing?.buildKey, manifest: m, path: e.path });
    const outcome = await this.#deployStored(this.#get(ns, m.name) as StoredFunction, () => read.files(e));
    this.#jobs.applyManifest(ns, m);
    return outcome;
  }

  async #removeFunction(namespace: string, name: string): Promise<void> {
    await this.#runner.remove(namespace, name);
    delete this.#state.data.functions[stateKey(namespace, name)];
    this.#jobs.forget(namespace, name);
    this.#opts.logger.info(`${name} removed`);
    await this.#state.save();
  }

  // ---- Platform: functions ---------------------------------------------------------------------

  async resolveEndpoint(namespace: string, name: string): Promise<Endpoint> {
    const f = this.#get(namespace, name);
    if (!f) return { kind: 'not-found' };
    if (!f.record.httpEnabled) return { kind: 'disabled' };
    const baseUrl = this.#runner.baseUrl(namespace, name);
    if (baseUrl) return { kind: 'ready', baseUrl, timeoutSec: f.record.timeoutSec };
    const reason = f.record.phase === 'Ready' ? this.#runner.processState(namespace, name) : `${f.record.phase}${f.record.message ? `: ${f.record.message}` : ''}`;
    return { kind: 'not-ready', reason };
  }

  async ensureNamespace(namespace: string): Promise<void> {
    if (!this.#state.data.namespaces.includes(namespace)) {
      this.#state.data.namespaces.push(namespace);
      await this.#state.save();
    }
  }

  async listFunctions(namespace: string): Promise<FunctionRecord[]> {
    return Object.values(this.#state.data.functions)
      .filter((f) => f.record.namespace === namespace)
      .map((f) => f.record)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async getFunction(namespace: string, name: string): Promise<FunctionRecord> {
    const f = this.#get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    return f.record;
  }

  #assertApiManaged(f: StoredFunction | undefined, what: string): asserts f is StoredFunction {
    if (!f) return;
    if (f.record.managedBy !== 'api') {
      throw new PlatformError(
        'managed_by_git',
        `${f.record.namespace}/${f.record.name} comes from the git repository ${this.#opts.repository.displayUrl} (${f.path ?? ''}); ${what} by changing function.yaml there`,
        { repository: this.#opts.repoName },
      );
    }
  }

  #recordFromInput(namespace: string, input: FunctionInput, old?: FunctionRecord): FunctionRecord {
    return {
      ...functionSettingsOf(input),
      namespace,
      phase: old?.phase ?? 'Pending',
      imageRef: old?.imageRef,
      message: old ? old.message : 'no code yet: upload a zip to /v1/namespaces/<ns>/functions/<name>/upload',
      codeHash: old?.codeHash,
      lastBuiltAt: old?.lastBuiltAt,
      url: this.#url(namespace, input.name),
      managedBy: 'api',
    };
  }

  async createFunction(namespace: string, input: FunctionInput): Promise<FunctionRecord> {
    if (this.#get(namespace, input.name)) throw new PlatformError('already_exists', `function ${namespace}/${input.name} already exists; PUT to change it`);
    await this.ensureNamespace(namespace);
    this.#put({ record: this.#recordFromInput(namespace, input) });
    await this.#state.save();
    return this.getFunction(namespace, input.name);
  }

  async updateFunction(namespace: string, name: string, input: FunctionInput): Promise<FunctionRecord> {
    const f = this.#get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    this.#assertApiManaged(f, 'change it');
    if (input.name !== name) throw new PlatformError('invalid', `the body names ${input.name} but the path names ${name}; a function cannot be renamed`);
    const record = this.#recordFromInput(namespace, input, f.record);
    const runtimeChanged = record.runtime !== f.record.runtime;
    this.#put({ ...f, record });
    await this.#state.save();
    if (record.codeHash) {
      const stored = this.#get(namespace, name) as StoredFunction;
      const files = runtimeChanged && f.buildKey ? await this.#preparer.readSource(f.buildKey) : undefined;
      this.#track(this.#deployStored(stored, files ? () => files : undefined));
    }
    return record;
  }

  async deleteFunction(namespace: string, name: string): Promise<void> {
    const f = this.#get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    this.#assertApiManaged(f, 'remove it');
    await this.#removeFunction(namespace, name);
  }

  async uploadCode(namespace: string, name: string, files: readonly CodeFile[]): Promise<FunctionRecord> {
    const f = this.#get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    this.#assertApiManaged(f, 'change its code');
    const codeHash = hashFiles(files);
    this.#put({ ...f, record: { ...f.record, codeHash, message: undefined } });
    await this.#state.save();
    this.#track(this.#deployStored(this.#get(namespace, name) as StoredFunction, () => files));
    return (this.#get(namespace, name) as StoredFunction).record;
  }

  async getSource(namespace: string, name: string): Promise<CodeFile[]> {
    const f = this.#get(namespace, name);
    if (!f) throw notFound('function', namespace, name);
    if (!f.buildKey || !(await this.#preparer.isPrepared(f.buildKey))) {
      throw new PlatformError('not_found', `function ${namespace}/${name} has no code yet`);
    }
    return this.#preparer.readSource(f.buildKey);
  }

  // ---- Platform: triggers and jobs (jobs-and-schedules.ts) ------------------------------------

  async listTriggers(namespace: string): Promise<TriggerRecord[]> {
    return this.#jobs.listTriggers(namespace);
  }
  async getTrigger(namespace: string, name: string): Promise<TriggerRecord> {
    return this.#jobs.getTrigger(namespace, name);
  }
  createTrigger(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    return this.#jobs.createTrigger(namespace, input);
  }
  setTriggerEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    return this.#jobs.setTriggerEnabled(namespace, name, enabled);
  }
  deleteTrigger(namespace: string, name: string): Promise<void> {
    return this.#jobs.deleteTrigger(namespace, name);
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

  // ---- Platform: repositories ------------------------------------------------------------------

  #repositoryRecord(): RepositoryRecord {
    const repo = this.#opts.repository;
    const stored = this.#state.data.repository;
    return {
      name: this.#opts.repoName,
      namespace: this.#opts.namespace,
      url: repo.displayUrl,
      branch: repo.branch,
      path: repo.path,
      interval: `${Math.round(this.#opts.pollIntervalMs / 1000)}s`,
      suspend: false,
      prune: true,
      revision: stored.revision,
      lastSyncTime: stored.lastSyncTime,
      webhookPath: `/hooks/${this.#opts.namespace}/${this.#opts.repoName}`,
      functions: stored.functions ?? [],
      ready: stored.lastError
        ? { status: 'False', reason: 'SyncFailed', message: stored.lastError }
        : stored.revision
          ? { status: 'True', reason: 'Synced', message: `synced ${stored.revision}` }
          : { status: 'Unknown', reason: 'Progressing', message: 'first sync not done yet' },
    };
  }

  #isOurs(namespace: string, name: string): boolean {
    return namespace === this.#opts.namespace && name === this.#opts.repoName;
  }

  async listRepositories(namespace: string): Promise<RepositoryRecord[]> {
    return namespace === this.#opts.namespace ? [this.#repositoryRecord()] : [];
  }

  async getRepository(namespace: string, name: string): Promise<RepositoryRecord> {
    if (!this.#isOurs(namespace, name)) throw notFound('repository', namespace, name);
    return this.#repositoryRecord();
  }

  async createRepository(_namespace: string, input: RepositoryInput): Promise<RepositoryRecord> {
    throw new PlatformError('invalid', `sless dev follows exactly one repository (--repo); to follow ${input.name}, restart sless dev with --repo pointing at it`);
  }

  async deleteRepository(namespace: string, name: string): Promise<void> {
    if (!this.#isOurs(namespace, name)) throw notFound('repository', namespace, name);
    throw new PlatformError('invalid', 'sless dev cannot stop following its own --repo; stop sless dev instead');
  }

  async requestSync(namespace: string, name: string, reason: string): Promise<void> {
    if (!this.#isOurs(namespace, name)) throw notFound('repository', namespace, name);
    this.#coalescer.request(reason);
  }

  async webhookTarget(namespace: string, name: string): Promise<WebhookTarget | undefined> {
    if (!this.#isOurs(namespace, name)) return undefined;
    return { branch: this.#opts.repository.branch, secret: this.#opts.webhookSecret };
  }

  async ready(): Promise<{ ok: boolean; detail?: string }> {
    if (this.#closed) return { ok: false, detail: 'shutting down' };
    const err = this.#state.data.repository.lastError;
    return err ? { ok: true, detail: `last sync failed: ${err}` } : { ok: true };
  }
}
