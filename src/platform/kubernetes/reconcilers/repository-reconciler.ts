// FunctionRepository: git → snapshot → the Function/Trigger/FunctionJob objects it owns. Each sync
// compares what the snapshot wants with the live objects (informer caches) and applies only what differs
// (sync-apply.ts), so an unchanged sync costs one ls-remote and one status write. The live objects, not a
// snapshot in status, are the "previous state": status.functions is lossy and may be stale after a failed write.
//
// Safety rules (issue 4): a sync that finds zero functions where the repository owns some prunes nothing
// and goes Stalled; a function whose folder is broken keeps its objects untouched (last good version keeps
// running) and reports the problem in status.functions[].error; prune only when spec.prune.
import { manifestCapsOf } from '../../../manifest/defaults.ts';
import { formatProblem } from '../../../manifest/format-problem.ts';
import { GitSourceError } from '../../../source/git-source-error.ts';
import { TreeLimitError } from '../../../source/tree-limits.ts';
import { ownedByRepository } from '../objects/drift.ts';
import { syncQuotaProblem } from '../namespace-quotas.ts';
import { ANNOTATIONS, FINALIZER, LABELS } from '../objects/meta.ts';
import { isHealthy, scopeOfSync } from '../../../plan/plan-changes.ts';
import { GIT_REASON_OF, type RepositoryReason } from '../../reasons.ts';
import type { RepositoryResource, RepositoryStatus } from '../objects/resources.ts';
import { UrgentGate } from '../api-client/urgent-gate.ts';
import type { HandlerResult } from '../api-client/work-queue.ts';
import {
  URGENT_GATE_MAX_HOLD_MS,
  URGENT_GATE_MAX_WAIT_MS,
  URGENT_GATE_QUIET_MS,
} from '../settings.ts';
import type { Outcome } from './conditions.ts';
import { record, splitKey, type ReconcileContext } from './reconcile-context.ts';
import { syncInterval } from './interval.ts';
import { RepositorySources } from './repository-sources.ts';
import { announcesNewHead, syncHint } from './sync-hint.ts';
import { pruneOwned, SyncApply, type FunctionStatusEntry, type LiveObjects } from './sync-apply.ts';
import type { StatusFields } from './status-writer.ts';
import { reconcileObject, type Reconciled, type Reconciler, type Turn } from './reconcile-object.ts';
import { StalledError } from '../stalled-error.ts';
import { fingerprintOwned, fingerprintRepository, unchangedSince } from './unchanged-sync.ts';
import { PreviewReconcile } from './preview-reconcile.ts';
import type { PreviewEntry } from '../previews/preview-requests.ts';
import type { FunctionResource } from '../objects/resources.ts';

export class RepositoryReconciler implements Reconciler<RepositoryResource, RepositoryStatus, RepositoryReason> {
  readonly kind = 'FunctionRepository';
  /** The git source of each repository (kept across syncs). */
  private readonly sources: RepositorySources;
  /** The per-function apply step of syncs (context uploads, applies in a bounded pool). */
  private readonly applies: SyncApply;
  /** Routine syncs wait at their phase boundaries while a push's sync runs (api-client/urgent-gate.ts). */
  private readonly gate = new UrgentGate({ maxWaitMs: URGENT_GATE_MAX_WAIT_MS, maxHoldMs: URGENT_GATE_MAX_HOLD_MS, quietMs: URGENT_GATE_QUIET_MS });

  /** Pull-request previews of the repositories (preview-reconcile.ts), after each sync. */
  private readonly previews: PreviewReconcile;
  /** status.previews of each repository's last run, written with every status (an failed sync's too). */
  private readonly previewStatus = new Map<string, PreviewEntry[]>();

  constructor(private readonly ctx: ReconcileContext) {
    this.sources = new RepositorySources(ctx);
    this.applies = new SyncApply(ctx);
    this.previews = new PreviewReconcile(ctx, this.applies, this.sources);
  }

  /** A Function changed: a preview's `sless/preview` status follows its built Functions. */
  previewFunctionChanged(fn: FunctionResource): void {
    this.previews.functionChanged(fn);
  }

  async close(): Promise<void> {
    await this.sources.close();
  }

  reconcile(key: string): Promise<HandlerResult | void> {
    return reconcileObject(this.ctx, this, key);
  }

  get(namespace: string, name: string): RepositoryResource | undefined {
    return this.ctx.caches.repositories.get(name, namespace);
  }

  /** With prune on, owned objects go with it through their ownerReferences (garbage collector); with prune off, finalize() orphans them first. */
  async gone(key: string, obj: RepositoryResource | undefined): Promise<void> {
    const { namespace, name } = splitKey(key);
    await this.sources.forget(key);
    // A repository being deleted keeps what its finalizer needs (removeAll forgets it afterwards).
    if (!obj) {
      this.previewStatus.delete(key);
      this.previews.forget(key);
    }
    this.ctx.commitStatus?.forget(namespace, name);
  }

  /**
   * Deleting the repository must not take its objects with it (prune off), and must take its preview
   * namespaces with it (a Namespace cannot carry an ownerReference to it): the finalizer gives finalize() the chance.
   */
  wantsFinalizer(repo: RepositoryResource): boolean {
    return repo.spec?.prune === false || PreviewReconcile.wantsFinalizer(repo);
  }

  suspended(repo: RepositoryResource): boolean {
    return repo.spec?.suspend === true;
  }

  retryReason(err: unknown): RepositoryReason {
    return err instanceof GitSourceError ? GIT_REASON_OF[err.reason] : 'SyncFailed';
  }

  /** Every sync requeues itself after spec.interval (a stalled one too: it is tried again then). */
  requeueAfterMs(repo: RepositoryResource): number {
    return syncInterval(repo.spec?.interval, this.ctx.settings.git.minIntervalMs);
  }

  /** A push's sync holds the urgent gate; a routine one takes its turns at the phase boundaries. */
  begin(repo: RepositoryResource): Turn {
    // The same test the queue used to put this sync in the urgent lanes (controller.ts urgentOf).
    const endUrgent = announcesNewHead(repo) ? this.gate.begin() : undefined;
    const turn = endUrgent ? undefined : this.gate.routine();
    return { boundary: () => (turn ? this.gate.boundary(turn) : Promise.resolve()), end: () => endUrgent?.() };
  }

  report(repo: RepositoryResource, result: Reconciled<RepositoryStatus>, failure: unknown, startedMs: number): void {
    const ctx = this.ctx;
    if (failure !== undefined) record(ctx, repo, 'Warning', result.outcome.reason, result.outcome.message);
    const outcomeLabel = result.outcome.kind === 'ready' ? 'success' : 'failure';
    ctx.metrics.syncs.inc({ outcome: outcomeLabel });
    ctx.metrics.syncDuration.observe(
      { namespace: repo.metadata?.namespace ?? '', repository: repo.metadata?.name ?? '', outcome: outcomeLabel },
      (Date.now() - startedMs) / 1000,
    );
  }

  baseStatus(repo: RepositoryResource): StatusFields<RepositoryStatus> {
    const requestedAt = repo.metadata?.annotations?.[ANNOTATIONS.requestedAt];
    const previews = this.previewStatus.get(`${repo.metadata?.namespace ?? ''}/${repo.metadata?.name ?? ''}`);
    return {
      webhookPath: `/hooks/${repo.metadata?.namespace ?? ''}/${repo.metadata?.name ?? ''}`,
      ...(requestedAt ? { lastHandledRequestedAt: requestedAt } : {}),
      // Written once a repository has had previews; a repository that never had one gets no field.
      ...(previews && (previews.length > 0 || repo.status?.previews) ? { previews } : {}),
    };
  }

  /** One sync: refused in platform namespaces; elsewhere the controller may read its secretRef after that. */
  async steps(repo: RepositoryResource, key: string, boundary: () => Promise<void>): Promise<Reconciled<RepositoryStatus, RepositoryReason>> {
    await this.ctx.tenants.ensure(splitKey(key).namespace);
    let result: Reconciled<RepositoryStatus, RepositoryReason>;
    try {
      result = await this.sync(repo, key, this.requeueAfterMs(repo), boundary);
    } catch (err) {
      // Previews do not wait for the watched branch to be fixed: they are read from their own branches.
      await this.reconcilePreviews(repo, key);
      // A revision past the tree limits (source/tree-limits.ts) needs a fix in git: retrying cannot help.
      if (err instanceof TreeLimitError) throw new StalledError(err.reason, err.message, { cause: err });
      throw err;
    }
    const previewsAfterMs = await this.reconcilePreviews(repo, key);
    if (previewsAfterMs === undefined) return result;
    return { ...result, requeueAfterMs: Math.min(result.requeueAfterMs ?? this.requeueAfterMs(repo), previewsAfterMs) };
  }

  /** The repository's previews (their status goes out through baseStatus); answers when to look again for a ttl. */
  private async reconcilePreviews(repo: RepositoryResource, key: string): Promise<number | undefined> {
    try {
      const r = await this.previews.reconcile(repo, key);
      this.previewStatus.set(key, r.previews);
      return r.requeueAfterMs;
    } catch (err) {
      // Never fails the sync of the watched branch; the next reconcile tries again.
      this.ctx.logger.warn(`FunctionRepository ${key}: previews: ${err instanceof Error ? err.message : String(err)}`);
      return undefined;
    }
  }

  private async sync(
    repo: RepositoryResource,
    key: string,
    intervalMs: number,
    boundary: () => Promise<void>,
  ): Promise<Reconciled<RepositoryStatus, RepositoryReason>> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const spec = repo.spec!;
    const { state, revision, tree } = await this.fetch(repo, key, boundary);
    const owned = {
      functions: ctx.caches.functions.list(namespace).filter((o) => ownedByRepository(o, name)),
      triggers: ctx.caches.triggers.list(namespace).filter((o) => ownedByRepository(o, name)),
      jobs: ctx.caches.functionJobs.list(namespace).filter((o) => ownedByRepository(o, name)),
    };
    const current = {
      revision,
      repository: fingerprintRepository(repo),
      owned: fingerprintOwned([owned.functions, owned.triggers, owned.jobs]),
      now: ctx.now().getTime(),
    };
    if (unchangedSince(state.applied, current)) {
      // The remote head is the revision the last full sync applied and nothing it read has changed.
      ctx.metrics.syncsUnchanged.inc();
      return { outcome: state.applied.outcome, status: { ...state.applied.status, lastSyncTime: lastSyncTime(repo, revision, ctx.now(), intervalMs) } };
    }
    state.applied = undefined;
    // Reading the tree, uploading contexts and applying objects: the costly part of a sync that changes something.
    await boundary();
    const snapshot = await state.snapshots.build(tree, { path: spec.path ?? '', ...manifestCapsOf(ctx.settings.limits) });
    /** The same by name: a sync of 1,000 functions looks each one up (no scan of the lists per function). */
    const byName = <T extends { metadata?: { name?: string } }>(list: readonly T[]) => new Map(list.map((o) => [o.metadata?.name ?? '', o]));
    const live: LiveObjects = { functions: byName(owned.functions), triggers: byName(owned.triggers), jobs: byName(owned.jobs) };
    const maxFunctions = ctx.settings.git.maxFunctions;
    if (snapshot.functions.length > maxFunctions) {
      throw new StalledError(
        'TooManyFunctions',
        `revision ${revision.slice(0, 12)} has ${snapshot.functions.length} function folders under "${spec.path || '.'}", more than the ${maxFunctions} one repository may hold; ` +
          'nothing was applied or pruned. Split the repository (spec.path per team) or ask the operator (SLESS_MAX_FUNCTIONS_PER_REPOSITORY)',
      );
    }
    const namespaceCap = ctx.settings.limits.functionsPerNamespace;
    const others = ctx.caches.functions.list(namespace).filter((o) => !ownedByRepository(o, name)).length;
    if (others + snapshot.functions.length > namespaceCap) {
      throw new StalledError(
        'NamespaceQuotaExceeded',
        `revision ${revision.slice(0, 12)} has ${snapshot.functions.length} function folders and namespace ${namespace} already holds ${others} other Function(s): ` +
          `more than the ${namespaceCap} one namespace may hold; nothing was applied or pruned (SLESS_MAX_FUNCTIONS_PER_NAMESPACE)`,
      );
    }
    const overQuota = syncQuotaProblem({
      namespace,
      manifests: snapshot.functions.flatMap((f) => (f.manifest ? [f.manifest] : [])),
      otherSchedules: ctx.caches.triggers.list(namespace).filter((t) => t.spec?.type === 'cron' && !ownedByRepository(t, name)).length,
      otherJobs: ctx.caches.functionJobs.list(namespace).filter((j) => !ownedByRepository(j, name)).length,
      schedulesCap: ctx.settings.limits.schedulesPerNamespace,
      jobsCap: ctx.settings.limits.jobsPerNamespace,
    });
    if (overQuota) throw new StalledError('NamespaceQuotaExceeded', `revision ${revision.slice(0, 12)}: ${overQuota}; nothing was applied or pruned`);
    // The safety rules of a sync (plan/plan-changes.ts), over the Functions this repository owns now.
    const running = owned.functions.map((f) => ({ name: f.metadata?.name ?? '', path: f.spec?.source?.path ?? '' }));
    const scope = scopeOfSync(running, snapshot.functions);
    if (scope.emptySource) {
      throw new StalledError(
        'EmptySource',
        `revision ${revision.slice(0, 12)} has no function folders under "${spec.path || '.'}" but this repository owns ${owned.functions.length} Function(s); ` +
          'nothing was pruned. Push the folders back, fix spec.path, or delete the FunctionRepository to remove them',
      );
    }
    const statusFunctions: FunctionStatusEntry[] = snapshot.functions
      .filter((f) => !isHealthy(f))
      .map((f) => ({
        name: f.name,
        path: f.path,
        ...(f.codeHash ? { codeHash: f.codeHash } : {}),
        error: f.problems.map(formatProblem).join('; ') || 'the function could not be read',
      }));
    const applied = await this.applies.applyFunctions(key, repo, tree, revision, snapshot.functions.filter(isHealthy), live);
    statusFunctions.push(...applied.statusFunctions);
    const { appliedGenerations, firstUploadError } = applied;
    /** Functions whose objects must stay as they are: what broken folders protect, names taken by others, failed uploads. */
    const keep = new Set([...scope.kept, ...applied.keep]);
    const kinds = [['Function', owned.functions], ['Trigger', owned.triggers], ['FunctionJob', owned.jobs]] as const;
    const pruned = spec.prune === false ? 0 : (await pruneOwned(ctx.kube, namespace, kinds, applied.wanted, keep)).length;

    statusFunctions.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const status = { revision, lastSyncTime: lastSyncTime(repo, revision, new Date(current.now), intervalMs), functions: statusFunctions };
    await ctx.commitStatus?.synced(repo, { revision, functions: statusFunctions, appliedGenerations });
    const errors = statusFunctions.filter((f) => f.error);
    const summary = `revision ${revision.slice(0, 12)}: ${statusFunctions.length - errors.length} function(s) applied${pruned ? `, ${pruned} object(s) pruned` : ''}`;
    if (repo.status?.revision !== revision) record(ctx, repo, 'Normal', 'Synced', summary);
    if (firstUploadError) {
      return { outcome: { kind: 'failed', reason: 'ArtifactFailed', message: `${summary}; ${errors.map((e) => `${e.name}: ${e.error}`).join('; ')}` }, status, retry: firstUploadError };
    }
    if (errors.length > 0) {
      return { outcome: { kind: 'failed', reason: 'FunctionErrors', message: `${summary}; ${errors.map((e) => `${e.name}: ${e.error}`).join('; ')}` }, status };
    }
    const outcome: Outcome<RepositoryReason> = { kind: 'ready', reason: 'Synced', message: summary };
    state.applied = { revision, repository: current.repository, owned: current.owned, at: current.now, outcome, status };
    return { outcome, status };
  }

  /**
   * The git step: the repository's source, then its head (ls-remote, and a fetch when it moved). Errors that
   * need a user's fix (wrong credentials, no such repository or branch) stall: hammering the server will not
   * help; the interval requeue, a spec change or a webhook tries again.
   */
  private async fetch(repo: RepositoryResource, key: string, boundary: () => Promise<void>) {
    try {
      const state = await this.sources.sourceFor(repo, key);
      await boundary();
      return { state, ...(await state.source.sync(syncHint(repo))) };
    } catch (err) {
      if (err instanceof GitSourceError && !err.retryable) throw new StalledError(GIT_REASON_OF[err.reason], err.message, { cause: err });
      throw err;
    }
  }

  /**
   * A repository being deleted: with `prune: false` its Functions, Triggers and FunctionJobs stay, as
   * objects of their own (no ownerReference to it, no repository label: /v1 then manages them), before
   * the finalizer goes and the garbage collector would see them.
   */
  async finalize(repo: RepositoryResource): Promise<void> {
    const ctx = this.ctx;
    const namespace = repo.metadata?.namespace ?? '';
    const name = repo.metadata?.name ?? '';
    const uid = repo.metadata?.uid;
    let orphaned = 0;
    const previews = await this.previews.removeAll(repo);
    if (repo.spec?.prune === false) {
      const owned = [
        ...ctx.caches.functions.list(namespace),
        ...ctx.caches.triggers.list(namespace),
        ...ctx.caches.functionJobs.list(namespace),
      ].filter((o) => ownedByRepository(o, name) || o.metadata?.ownerReferences?.some((r) => r.uid === uid));
      for (const obj of owned) {
        const refs = (obj.metadata?.ownerReferences ?? []).filter((r) => r.uid !== uid);
        await ctx.kube.mergePatch(obj, { metadata: { ownerReferences: refs.length ? refs : null, labels: { [LABELS.repository]: null } } });
        orphaned++;
      }
    }
    await ctx.kube.mergePatch(repo, {
      metadata: { finalizers: (repo.metadata?.finalizers ?? []).filter((f) => f !== FINALIZER), resourceVersion: repo.metadata?.resourceVersion },
    });
    if (previews > 0) ctx.logger.info(`FunctionRepository ${namespace}/${name} deleted: removed ${previews} preview namespace(s)`);
    if (orphaned > 0) record(ctx, repo, 'Normal', 'Orphaned', `prune is off: kept ${orphaned} object(s) this repository generated; they are no longer managed by git`);
  }
}

/**
 * lastSyncTime is refreshed once per interval, not by every sync: a no-change sync soon after the last one
 * (a restarted controller's first, a webhook's) then writes no status at all.
 */
function lastSyncTime(repo: RepositoryResource, revision: string, now: Date, intervalMs: number): string {
  const last = repo.status?.lastSyncTime;
  const recent = repo.status?.revision === revision && !!last && now.getTime() - new Date(last).getTime() < intervalMs;
  return recent ? new Date(last).toISOString() : now.toISOString();
}
