// One sync of the repository `sless dev` follows: read it, plan against the last synced snapshot, log
// broken folders, reconcile every healthy function (a no-op for one already running its version),
// remove the ones gone, and remember what was applied.
import { TreeLimitError } from '../../source/tree-limits.ts';
import type PQueue from 'p-queue';
import { formatProblem } from '../../manifest/format-problem.ts';
import type { FunctionManifest } from '../../manifest/types.ts';
import { planChanges } from '../../plan/plan-changes.ts';
import type { RevisionFunction } from '../../commit-status/decide-commit-status.ts';
import { statesAfterDeploy, statesBeforeDeploy } from '../../commit-status/local-function-states.ts';
import type { FunctionEntry } from '../../source/types.ts';
import type { FunctionRecord, ManagedBy } from '../types.ts';
import type { DeployOutcome } from './function-runner.ts';
import type { FunctionTable } from './function-table.ts';
import type { JobsAndSchedules } from './jobs-and-schedules.ts';
import type { LocalDeployer } from './local-deployer.ts';
import type { LocalState, StoredFunction, StoredRepository } from './local-state.ts';
import type { Logger } from './logger.ts';
import type { RepositoryRead, RepositoryReader } from '../../source/repository-read.ts';
import type { LocalRuntimes } from './ports.ts';

export interface RepositorySyncOptions {
  /** Namespace of the repository's functions. */
  readonly namespace: string;
  /** `--secrets-dir`: env_from_secrets is served from it (else a warning says it is ignored). */
  readonly secretsDir?: string;
  /** `git:<repo>`: the owner of the repository's functions. */
  readonly managedBy: ManagedBy;
  readonly repository: RepositoryReader;
  readonly runtimes: LocalRuntimes;
  readonly logger: Logger;
  readonly state: LocalState;
  readonly table: FunctionTable;
  readonly deployer: LocalDeployer;
  readonly jobs: JobsAndSchedules;
  /** Builds and process starts of one sync run a few at a time, not one per function at once. */
  readonly deploys: PQueue;
  readonly url: (namespace: string, name: string) => string;
  readonly removeFunction: (namespace: string, name: string) => Promise<void>;
  /** Commit statuses (`sless dev --commit-status`): told where each function of the revision stands. */
  readonly reportRevision?: (revision: string, functions: RevisionFunction[]) => void;
  /**
   * Where this sync keeps what it applied (default: the followed repository's slot in state.json); a
   * pull request's preview has its own (local-previews.ts).
   */
  readonly stored?: { get(): StoredRepository; set(value: StoredRepository): void };
  /** Whether schedules and jobs of function.yaml are applied (default true; previews: spec.previews.schedules). */
  readonly schedules?: boolean;
}

/** What every sync of one sless dev shares (the followed repository's and each preview's). */
export type SyncParts = Pick<
  RepositorySyncOptions,
  'namespace' | 'managedBy' | 'repository' | 'runtimes' | 'logger' | 'state' | 'table' | 'deployer' | 'jobs' | 'deploys' | 'url' | 'removeFunction'
>;

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

export class RepositorySync {
  #readOnce = false;

  readonly #stored: { get(): StoredRepository; set(value: StoredRepository): void };

  constructor(private readonly o: RepositorySyncOptions) {
    const state = o.state;
    this.#stored = o.stored ?? { get: () => state.data.repository, set: (value) => (state.data.repository = value) };
  }

  /** Whether this process has read the repository yet (until then, a name /fn does not know may be in it). */
  get readOnce(): boolean {
    return this.#readOnce;
  }

  async run(reasons: string[]): Promise<void> {
    const o = this.o;
    const started = Date.now();
    let read: RepositoryRead;
    try {
      read = await o.repository.read();
    } catch (err) {
      // A revision past the tree limits says so in the repository's reason, as on the controller.
      const { lastErrorReason: _old, ...repository } = this.#stored.get();
      this.#stored.set({ ...repository, lastError: (err as Error).message, ...(err instanceof TreeLimitError ? { lastErrorReason: err.reason } : {}) });
      throw err;
    } finally {
      this.#readOnce = true;
    }
    const { snapshot } = read;
    const stored = this.#stored.get();
    const plan = planChanges(stored.snapshot, snapshot, {
      baseImageOf: (runtime) => o.runtimes.versionOf(runtime),
      prevBaseImages: stored.baseImages,
    });
    const ns = o.namespace;
    // A poll of an unchanged revision repeats nothing in the log (a broken folder stays broken quietly).
    const news = snapshot.revision !== stored.revision || reasons.some((r) => r !== 'poll');

    for (const e of news ? plan.errors : []) {
      const why = e.problems.map((p) => formatProblem(p)).join('; ') || 'could not be read';
      const running = o.table.get(ns, e.name)?.record.managedBy === o.managedBy;
      o.logger.error(`${e.path || '.'}: ${why}${running ? ' (the last good version keeps running)' : ''}`);
      if (running) o.table.patch(ns, e.name, { message: `function.yaml broken, serving the last good version: ${why}` });
    }
    for (const [name, why] of Object.entries(plan.reasons)) o.logger.info(`${name} changed: ${why.join(', ')}`);
    if (news && plan.emptySource) {
      o.logger.error(`rev ${shortRev(snapshot.revision)} has no function folders: nothing was removed (the functions keep running); push the folders back or fix --path`);
    }

    // Every healthy function is reconciled, not only the changed ones: deploy() is a no-op for a
    // function already running its version, and this also restarts what a crash of sless dev lost.
    const healthy = [...plan.added, ...plan.rebuild, ...plan.redeploy, ...plan.unchanged];
    const changing = [...plan.added, ...plan.rebuild, ...plan.redeploy];
    // Known at once: a new function waiting for its turn to build answers 503 saying so, not 404.
    for (const e of plan.added) this.#announce(e);
    if (changing.length > 0) o.reportRevision?.(snapshot.revision, statesBeforeDeploy({ errors: plan.errors, changing, unchanged: plan.unchanged }));
    const outcomes = await o.deploys.addAll(healthy.map((e) => () => this.#syncFunction(read, e)));
    o.reportRevision?.(snapshot.revision, statesAfterDeploy(plan.errors, healthy, outcomes, (name) => o.table.get(ns, name)?.pinned?.revision));
    for (const e of plan.removed) await o.removeFunction(ns, e.name);

    this.#stored.set({
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
    });
    await o.state.save();

    const failed = outcomes.filter((x) => x.kind === 'failed').length;
    const failedAnew = outcomes.filter((x) => x.kind === 'failed' && !x.repeated).length;
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
      o.logger.info(
        `synced rev ${shortRev(snapshot.revision)} (${summary.total} functions: ${summary.added} added, ${summary.rebuilt} rebuilt, ` +
          `${summary.redeployed} redeployed, ${summary.removed} removed, ${summary.unchanged} unchanged, ${summary.errors} errors) ` +
          `in ${Date.now() - started} ms [${[...new Set(reasons)].join(', ')}]`,
      );
    }
  }

  /** A function new to this namespace, in the table as Pending until its deploy starts. */
  #announce(e: FunctionEntry): void {
    const m = e.manifest as FunctionManifest;
    if (this.o.table.get(this.o.namespace, m.name)) return;
    this.o.jobs.applyHttp(this.o.namespace, m);
    const record = { ...this.#recordOf(e, undefined), message: 'waiting for its turn to build' };
    this.o.table.put({ record, manifest: m, path: e.path });
    if (m.envFromSecrets.length > 0 && !this.o.secretsDir) this.#warnNoSecrets(m);
  }

  #warnNoSecrets(m: FunctionManifest): void {
    this.o.logger.warn(`${m.name}: env_from_secrets (${m.envFromSecrets.join(', ')}) is ignored: sless dev reads secrets from --secrets-dir DIR (DIR/<secret>/<key>)`);
  }

  async #syncFunction(read: RepositoryRead, e: FunctionEntry): Promise<DeployOutcome> {
    const o = this.o;
    const ns = o.namespace;
    const m = e.manifest as FunctionManifest;
    const existing = o.table.get(ns, m.name);
    if (existing && existing.record.managedBy !== o.managedBy) {
      const message = `${e.path}: a function named ${m.name} was made through /v1; rename one of them`;
      o.logger.error(message);
      return { kind: 'failed', message, stillServing: true };
    }
    o.jobs.applyHttp(ns, m);
    const record = this.#recordOf(e, existing);
    if (m.envFromSecrets.length > 0 && !existing && !o.secretsDir) this.#warnNoSecrets(m);
    // Revisions and a pin stay with the function; `commit` names where a revision that goes live comes from.
    o.table.put({ ...existing, record, buildKey: existing?.buildKey, manifest: m, path: e.path, commit: read.snapshot.revision });
    const outcome = await o.deployer.deploy(o.table.get(ns, m.name) as StoredFunction, () => read.files(e));
    // Without schedules (a preview), the http trigger applied above is the function's only one.
    if (o.schedules !== false) o.jobs.applyManifest(ns, m);
    return outcome;
  }

  /** The function's record for this snapshot entry, keeping what the running version has (phase, image). */
  #recordOf(e: FunctionEntry, existing: StoredFunction | undefined): FunctionRecord {
    const o = this.o;
    const ns = o.namespace;
    const m = e.manifest as FunctionManifest;
    return {
      name: m.name,
      namespace: ns,
      runtime: m.runtime,
      entrypoint: m.entrypoint,
      memoryMb: m.memoryMb,
      timeoutSec: m.timeoutSec,
      env: m.env,
      envFromSecrets: m.envFromSecrets,
      httpEnabled: o.jobs.httpEnabledOf(ns, m.name),
      ...(m.scale === undefined ? {} : { scale: m.scale }),
      phase: existing?.record.phase ?? 'Pending',
      imageRef: existing?.record.imageRef,
      message: existing?.record.phase === 'Failed' ? existing.record.message : undefined,
      codeHash: e.codeHash,
      lastBuiltAt: existing?.record.lastBuiltAt,
      url: o.url(ns, m.name),
      managedBy: o.managedBy,
    };
  }
}
