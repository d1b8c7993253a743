// The leader's part of pull-request previews on Kubernetes (docs/previews.md "Kubernetes"), run by the
// repository reconciler after each sync of a repository:
//   1. each recorded delivery (preview-requests.ts) is decided again by decidePreview with what only the
//      leader knows (the open previews of status.previews, the namespaces): ignore, refuse (a failed
//      `sless/preview` status), remove (the namespace), or build;
//   2. a build reads the PR's head and merge base (the same reader as `sless dev`, preview-source.ts),
//      plans per folder (planPreview), creates `<ns>-pr-<N>` with the base's tenant rules and copies of its
//      ResourceQuotas and LimitRanges (preview-limits-copy.ts; before any function: none runs unbounded), and applies,
//      with the same per-folder apply as the watched branch (sync-apply.ts), only the functions the PR
//      changes; what it no longer changes is pruned, and a pruned Function's images are deleted at once
//      (preview-images.ts). A second push rebuilds only what changed again;
//   3. every other open preview's quota copies follow the base again (an operator changed a quota);
//   4. previews past their ttl (all of them once previews are turned off) are removed; removing a preview
//      deletes its namespace, then starts the Job that deletes its images (preview-images.ts);
//   5. `sless/preview` goes to the PR head as the built Functions' phases change.
// A delivery stays recorded until it is handled (a failed read is retried at the next reconcile).
import type { FunctionDeployState } from '../../../commit-status/decide-commit-status.ts';
import { manifestCapsOf } from '../../../manifest/defaults.ts';
import { decidePreview } from '../../../preview/preview-decision.ts';
import { planPreview } from '../../../preview/preview-plan.ts';
import { previewSettingsOf, type PreviewSettings } from '../../../preview/preview-settings.ts';
import { previewStatus, refusedStatus } from '../../../preview/preview-status.ts';
import { openPreviewReader, PreviewBranchMissing, type PreviewReader } from '../../../source/preview-source.ts';
import type { PreviewFunctionItem } from '../crd-types.ts';
import { kubeFunctionState } from '../kube-function-state.ts';
import { ownedByRepository } from '../objects/drift.ts';
import type { FunctionResource, RepositoryResource } from '../objects/resources.ts';
import { gitTargets, type RepositorySources } from './repository-sources.ts';
import { splitKey, type ReconcileContext } from './reconcile-context.ts';
import { pruneOwned, type LiveObjects, type PrunedObject, type SyncApply } from './sync-apply.ts';
import { isPreviewObject, previewObjects, type PreviewIdentity } from '../previews/preview-objects.ts';
import { PreviewImages } from './preview-images.ts';
import { pruneIncarnation, removalIncarnation } from '../previews/preview-images-job.ts';
import { PreviewNamespaces } from './preview-namespaces.ts';
import { PreviewLimitsCopy } from './preview-limits-copy.ts';
import type { LimitCopyPlan, LimitObject } from '../previews/preview-limits.ts';
import { expiredPreviews, nextExpiryMs, previewRequests, type PreviewEntry, type PreviewRequest } from '../previews/preview-requests.ts';

export interface PreviewsReconciled {
  /** status.previews as it is now (sorted by number). */
  readonly previews: PreviewEntry[];
  /** Look again by then (the next ttl expiry). */
  readonly requeueAfterMs?: number;
}

/** Begins status.previews[].message when an open preview's quota copies could not follow the base (cleared once they do). */
const LIMITS_FAILED = 'keeping the base namespace\'s ResourceQuotas and LimitRanges failed: ';

interface Tracked {
  readonly repo: RepositoryResource;
  readonly entry: PreviewEntry;
  readonly generations: ReadonlyMap<string, number>;
}

export class PreviewReconcile {
  private readonly namespaces: PreviewNamespaces;
  private readonly images: PreviewImages;
  private readonly limits: PreviewLimitsCopy;
  private readonly readers = new Map<string, { fingerprint: string; reader: PreviewReader }>();
  /** The built previews whose `sless/preview` status follows their Functions, by preview namespace. */
  private readonly tracked = new Map<string, Tracked>();
  /**
   * status.previews as this leader last made it, per repository: the starting point of its next
   * reconcile, not the informer cache, which may not have the last status write yet (starting from it
   * would forget the preview just built: maxOpen would let one more in, the finalizer would miss it).
   * Only the leader writes status.previews; a new leader starts from the cache.
   */
  private readonly known = new Map<string, readonly PreviewEntry[]>();

  constructor(
    private readonly ctx: ReconcileContext,
    private readonly applies: SyncApply,
    private readonly sources: RepositorySources,
  ) {
    this.namespaces = new PreviewNamespaces(ctx);
    this.images = new PreviewImages(ctx);
    this.limits = new PreviewLimitsCopy(ctx.kube.core);
  }

  /** Whether the repository needs the finalizer that removes its previews (a Namespace cannot be owned by it). */
  static wantsFinalizer(repo: RepositoryResource): boolean {
    return repo.spec?.previews?.enabled === true || (repo.status?.previews?.length ?? 0) > 0;
  }

  async reconcile(repo: RepositoryResource, key: string): Promise<PreviewsReconciled> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const settings = previewSettingsOf(repo.spec?.previews);
    const entries = new Map((this.known.get(key) ?? repo.status?.previews ?? []).map((e) => [e.number, e]));
    const handled: PreviewRequest[] = [];
    /** The previews a delivery was handled for in this reconcile: their copies were made by build(). */
    const attempted = new Set<number>();
    for (const request of previewRequests(repo.metadata?.annotations)) {
      if ('error' in settings) break;
      const id: PreviewIdentity = { namespace, repository: name, number: request.number };
      const previewNs = `${namespace}-pr-${request.number}`;
      const taken = await this.namespaces.takenByOther(previewNs, id);
      const d = decidePreview({
        event: request.event,
        namespace,
        watchedBranch: repo.spec?.branch ?? 'main',
        settings,
        open: [...entries.values()].map((e) => ({ number: e.number, head: e.head })),
        takenByOther: (n) => n === previewNs && taken,
      });
      const pr = `FunctionRepository ${key}: pull request #${request.number}`;
      if (d.kind === 'ignore') {
        ctx.logger.info(`${pr}: ${d.message}`);
        handled.push(request);
      } else if (d.kind === 'refuse') {
        ctx.logger.warn(`${pr}: no preview: ${d.message}`);
        await ctx.commitStatus?.post(repo, d.head, [refusedStatus(d.message)]);
        handled.push(request);
      } else if (d.kind === 'remove') {
        ctx.logger.info(`${pr}: ${d.message}`);
        await this.remove(entries.get(d.number) ?? { number: d.number, namespace: d.namespace }, id);
        entries.delete(d.number);
        handled.push(request);
      } else {
        const known = entries.get(d.number);
        const entry: PreviewEntry = { ...(known ?? { planned: false, head: d.head }), number: d.number, namespace: d.namespace, branch: d.branch, updatedAt: request.at };
        entries.set(d.number, entry);
        attempted.add(d.number);
        try {
          entries.set(d.number, await this.build(repo, entry, id, settings));
          handled.push(request);
        } catch (err) {
          if (err instanceof PreviewBranchMissing) {
            ctx.logger.info(`${pr}: ${err.message}; nothing built`);
            if (!known) {
              await this.remove(entry, id);
              entries.delete(d.number);
            }
            handled.push(request);
            continue;
          }
          const message = err instanceof Error ? err.message : String(err);
          ctx.logger.warn(`${pr}: building the preview failed: ${message}; retrying at the next reconcile`);
          entries.set(d.number, { ...entry, message });
        }
      }
    }
    const nowMs = ctx.now().getTime();
    for (const e of expiredPreviews([...entries.values()], settings, nowMs)) {
      const why = !('error' in settings) && !settings.enabled ? 'previews are off (spec.previews.enabled)' : 'its ttl passed since the last push';
      ctx.logger.info(`FunctionRepository ${key}: removing the preview of pull request #${e.number} (${e.namespace}): ${why}`);
      await this.remove(e, { namespace, repository: name, number: e.number });
      entries.delete(e.number);
    }
    await this.followLimits(namespace, name, entries, attempted);
    await this.forgetHandled(repo, handled);
    const previews = [...entries.values()].sort((a, b) => a.number - b.number);
    this.known.set(key, previews);
    const next = nextExpiryMs(previews, settings, nowMs);
    return { previews, ...(next !== undefined ? { requeueAfterMs: next } : {}) };
  }

  /** The repository is being deleted: every preview namespace it made goes first (its finalizer). */
  async removeAll(repo: RepositoryResource): Promise<number> {
    const namespace = repo.metadata?.namespace ?? '';
    const repository = repo.metadata?.name ?? '';
    const key = `${namespace}/${repository}`;
    const all = new Map([...(repo.status?.previews ?? []), ...(this.known.get(key) ?? [])].map((e) => [e.number, e]));
    let removed = 0;
    for (const e of all.values()) {
      if (await this.remove(e, { namespace, repository, number: e.number })) removed++;
    }
    this.forget(key);
    return removed;
  }

  /** The repository is gone: what this process remembers of its previews goes too. */
  forget(key: string): void {
    this.readers.delete(key);
    this.known.delete(key);
  }

  /** A Function changed: the `sless/preview` status of its preview follows its phase. */
  functionChanged(fn: FunctionResource): void {
    const t = this.tracked.get(fn.metadata?.namespace ?? '');
    if (t) void this.postStatus(t);
  }

  /**
   * Removes the preview: its namespace (everything in it), its branch's ref in the git cache, and its images (preview-images.ts): those of every
   * function its status lists (one the PR leaves alone now may have been built at an earlier push) and of the
   * Functions its namespace holds.
   */
  private async remove(e: Pick<PreviewEntry, 'number' | 'namespace'> & Partial<PreviewEntry>, id: PreviewIdentity): Promise<boolean> {
    this.tracked.delete(e.namespace);
    // A namespace of that name that is not this preview (made after it went) is not ours, nor are its images.
    if (await this.namespaces.takenByOther(e.namespace, id)) return false;
    const held = this.ctx.caches.functions.list(e.namespace).filter((f) => isPreviewObject(f.metadata?.labels, id));
    const names = [...(e.functions ?? []).map((f) => f.name), ...held.map((f) => f.metadata?.name ?? '')];
    const removed = await this.namespaces.remove(e.namespace, id);
    await this.images.remove(e.namespace, id, names, removalIncarnation(e));
    // Its branch's ref in the repository's previews cache (another open PR of the same branch fetches it again).
    const reader = this.readers.get(`${id.namespace}/${id.repository}`)?.reader;
    if (e.branch && reader) {
      await reader.forget(e.branch).catch((err: unknown) => this.ctx.logger.warn(`preview ${e.namespace}: dropping branch ${e.branch} from the previews' git cache failed: ${(err as Error).message}`));
    }
    return removed;
  }

  /**
   * The open previews' copies of the base's ResourceQuotas and LimitRanges follow the base (changed, added,
   * deleted since the preview's last push): one read of the base for all of them. A failure is logged and
   * said in the preview's status message (its functions keep the copies they had), tried again next time.
   */
  private async followLimits(namespace: string, repository: string, entries: Map<number, PreviewEntry>, skip: ReadonlySet<number>): Promise<void> {
    const open = [...entries.values()].filter((e) => e.planned && !skip.has(e.number));
    if (open.length === 0) return;
    let base: LimitObject[] | Error;
    try {
      base = await this.limits.list(namespace, 'to copy them into its previews');
    } catch (err) {
      base = err as Error;
    }
    for (const e of open) {
      try {
        if (base instanceof Error) throw base;
        await this.copyLimits({ namespace, repository, number: e.number }, e.namespace, base);
        if (e.message?.startsWith(LIMITS_FAILED)) {
          const { message: _healed, ...rest } = e;
          entries.set(e.number, rest);
        }
      } catch (err) {
        const message = `${LIMITS_FAILED}${err instanceof Error ? err.message : String(err)}`;
        this.ctx.logger.warn(`preview ${e.namespace}: ${message}; retrying at the next reconcile`);
        entries.set(e.number, { ...e, message });
      }
    }
  }

  /** Copies the base's ResourceQuotas and LimitRanges (`base`, else read now) into the preview namespace. */
  private async copyLimits(id: PreviewIdentity, previewNs: string, base?: readonly LimitObject[], opts: { readonly sayKept?: boolean } = {}): Promise<void> {
    const plan = await this.limits.sync(base ?? (await this.limits.list(id.namespace, `to copy them into ${previewNs}`)), previewNs, id);
    const names = (list: LimitCopyPlan['kept']) => list.map((o) => `${o.kind} ${o.name}`).join(', ');
    const done = [['created', plan.create], ['updated', plan.update], ['deleted', plan.delete]] as const;
    const said = done.filter(([, list]) => list.length > 0).map(([verb, list]) => `${verb} ${names(list)}`);
    if (said.length > 0) this.ctx.logger.info(`preview ${previewNs}: copies of ${id.namespace}'s quotas and limit ranges ${said.join('; ')}`);
    if (opts.sayKept && plan.kept.length > 0) {
      this.ctx.logger.info(`preview ${previewNs}: ${names(plan.kept)} of ${id.namespace} not copied: the preview namespace holds its own of that name (not labelled app.kubernetes.io/managed-by=sless)`);
    }
  }

  /** Reads, plans and applies one preview; answers its planned entry. */
  private async build(repo: RepositoryResource, entry: PreviewEntry, id: PreviewIdentity, settings: PreviewSettings): Promise<PreviewEntry> {
    const ctx = this.ctx;
    const read = await (await this.readerFor(repo)).read(entry.branch);
    const plan = planPreview(read.mergeBase, read.head.snapshot);
    const previewNs = entry.namespace;
    const cap = ctx.settings.limits.functionsPerNamespace;
    if (plan.build.length > cap) throw new Error(`the pull request changes ${plan.build.length} functions, more than the ${cap} one namespace may hold (SLESS_MAX_FUNCTIONS_PER_NAMESPACE)`);
    await this.namespaces.ensure(previewNs, id);
    // Before any of its functions is applied: a preview never runs unbounded by its base's quotas.
    await this.copyLimits(id, previewNs, undefined, { sayKept: true });
    if (ctx.settings.imagePullSecrets.length > 0) await this.namespaces.copySecrets(id.namespace, previewNs, ctx.settings.imagePullSecrets, { pullSecrets: true });
    if (settings.secrets === 'inherit') {
      await this.namespaces.copySecrets(id.namespace, previewNs, plan.build.flatMap((f) => f.manifest?.envFromSecrets ?? []));
    }
    const owned = {
      functions: ctx.caches.functions.list(previewNs).filter((o) => ownedByRepository(o, id.repository)),
      triggers: ctx.caches.triggers.list(previewNs).filter((o) => ownedByRepository(o, id.repository)),
      jobs: ctx.caches.functionJobs.list(previewNs).filter((o) => ownedByRepository(o, id.repository)),
    };
    const byName = <T extends { metadata?: { name?: string } }>(list: readonly T[]) => new Map(list.map((o) => [o.metadata?.name ?? '', o]));
    const live: LiveObjects = { functions: byName(owned.functions), triggers: byName(owned.triggers), jobs: byName(owned.jobs) };
    const previewRepo: RepositoryResource = { ...repo, metadata: { ...repo.metadata, namespace: previewNs } };
    const applied = await this.applies.applyFunctions(`${previewNs}/${id.repository}`, previewRepo, read.headTree, read.headCommit, plan.build, live, (o) =>
      previewObjects(o, id, settings),
    );
    const kinds = [['Function', owned.functions], ['Trigger', owned.triggers], ['FunctionJob', owned.jobs]] as const;
    const pruned: PrunedObject[] = [];
    try {
      await pruneOwned(ctx.kube, previewNs, kinds, applied.wanted, applied.keep, pruned);
    } finally {
      // A pruned Function drops out of the status, so the preview's removal would never name its images: they go now.
      const names = pruned.filter((o) => o.kind === 'Function').map((o) => o.name).sort();
      if (names.length > 0) await this.images.pruned(previewNs, id, names, pruneIncarnation(read.headCommit, entry.updatedAt, names));
    }
    const errors = new Map(applied.statusFunctions.filter((f) => f.error).map((f) => [f.name, f.error as string]));
    const functions: PreviewFunctionItem[] = plan.functions.map((f) => {
      const error = f.error ?? errors.get(f.name);
      return { name: f.name, state: error ? 'failed' : f.state, path: f.path, ...(error ? { error } : {}) };
    });
    const { message: _old, ...rest } = entry;
    const planned: PreviewEntry = { ...rest, head: read.headCommit, planned: true, functions };
    if (applied.firstUploadError) throw applied.firstUploadError;
    const t: Tracked = { repo, entry: planned, generations: applied.appliedGenerations };
    this.tracked.set(previewNs, t);
    await this.postStatus(t);
    return planned;
  }

  private async postStatus(t: Tracked): Promise<void> {
    const fns = (t.entry.functions ?? []).map((f) => ({
      name: f.name,
      state: f.state,
      ...(f.state === 'failed'
        ? { deploy: { kind: 'failed', message: f.error ?? 'failed' } as FunctionDeployState }
        : f.state === 'built'
          ? { deploy: kubeFunctionState(this.ctx.caches.functions.get(f.name, t.entry.namespace), t.generations.get(f.name)) }
          : {}),
    }));
    const base = this.ctx.commitStatus?.consoleBaseUrl;
    await this.ctx.commitStatus?.post(t.repo, t.entry.head, [previewStatus({ namespace: t.entry.namespace, functions: fns, ...(base ? { consoleBaseUrl: base } : {}) })]);
  }

  /** One reader (and git cache) per repository, made anew when its url, branch, path or credentials change. */
  private async readerFor(repo: RepositoryResource): Promise<PreviewReader> {
    const key = `${repo.metadata?.namespace ?? ''}/${repo.metadata?.name ?? ''}`;
    const auth = await this.sources.credentials(repo);
    const spec = repo.spec!;
    const fingerprint = JSON.stringify([spec.url, spec.branch ?? 'main', spec.path ?? '', auth]);
    const known = this.readers.get(key);
    if (known?.fingerprint === fingerprint) return known.reader;
    const reader = openPreviewReader({
      repo: spec.url,
      branch: spec.branch ?? 'main',
      path: spec.path ?? '',
      cacheDir: this.ctx.settings.cacheDir,
      cacheName: `previews-${key.replace('/', '--')}.git`,
      targets: gitTargets(this.ctx.settings.git ?? {}),
      ...(auth ? { auth } : {}),
      ...manifestCapsOf(this.ctx.settings.limits),
    });
    this.readers.set(key, { fingerprint, reader });
    return reader;
  }

  /** Removes the handled deliveries' annotations, all only while each still holds the value handled. */
  private async forgetHandled(repo: RepositoryResource, handled: readonly PreviewRequest[]): Promise<void> {
    if (handled.length === 0) return;
    const answer = await this.ctx.kube.removeAnnotationsIf(repo, Object.fromEntries(handled.map((r) => [r.key, r.value])));
    // A delivery recorded meanwhile over a handled one keeps its annotation (and is handled at the next reconcile).
    if (answer === 'changed') this.ctx.logger.info(`FunctionRepository ${repo.metadata?.namespace}/${repo.metadata?.name}: pull-request deliveries arrived while handling others; handling them next`);
  }
}
