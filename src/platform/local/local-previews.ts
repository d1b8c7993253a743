// Pull-request previews in `sless dev` (docs/previews.md). A verified pull-request delivery is decided
// by the pure rules (src/preview/); a build reads the PR's head and merge base (preview-source.ts),
// plans per folder which functions the PR changes (planPreview), and runs the same RepositorySync as
// the watched branch over a snapshot of only those, in namespace `<namespace>-pr-<N>` with its own
// applied snapshot: a push to the PR rebuilds only what changed since its last push, and the others
// keep running untouched. Functions the PR leaves alone are not copied: /fn at the preview URL is
// routed to production (route()). Closing or merging the PR, or its ttl passing, removes the preview.
import type { CommitStatusPoster } from '../../commit-status/commit-status-poster.ts';
import type { FunctionDeployState, RevisionFunction } from '../../commit-status/decide-commit-status.ts';
import type { StatusTarget } from '../../commit-status/status-target.ts';
import { decidePreview } from '../../preview/preview-decision.ts';
import { parsePreviewNamespace } from '../../preview/preview-name.ts';
import { planPreview, type PreviewFunctionPlan } from '../../preview/preview-plan.ts';
import { routePreview } from '../../preview/preview-route.ts';
import type { PreviewSettings } from '../../preview/preview-settings.ts';
import { previewStatus, refusedStatus } from '../../preview/preview-status.ts';
import type { Snapshot } from '../../source/types.ts';
import type { PullRequestEvent } from '../../webhook/pull-request.ts';
import type { PlatformPreviews, PreviewAnswer, PreviewRecord } from '../types.ts';
import { previewTarget, type PreviewTarget } from '../preview-target.ts';
import type { StoredPreview, StoredRepository } from './local-state.ts';
import type { Logger } from './logger.ts';
import { PreviewBranchMissing, type PreviewReader } from '../../source/preview-source.ts';
import { RepositorySync, type SyncParts } from './repository-sync.ts';
import { SyncCoalescer } from './sync-coalescer.ts';

/** `namespace`, `repository`: the followed repository's (previews are `<namespace>-pr-<N>`, of its branch). */
export interface LocalPreviewsOptions extends SyncParts {
  readonly repoName: string;
  readonly settings: PreviewSettings;
  readonly reader: PreviewReader;
  readonly publicUrl: () => string;
  /** Commit statuses (`--commit-status`): `sless/preview` on each PR head. */
  readonly status?: { readonly poster: CommitStatusPoster; readonly target: StatusTarget };
  /** How often expired previews are looked for (default 60 s, a quarter of a shorter ttl). */
  readonly sweepMs?: number;
  readonly now?: () => number;
}

export class LocalPreviews implements PlatformPreviews {
  readonly #o: LocalPreviewsOptions;
  readonly #syncs = new Map<number, SyncCoalescer>();
  /** The head each PR's last delivery named: a hint for the fetch (preview-source.ts), never trusted. */
  readonly #heads = new Map<number, string>();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: LocalPreviewsOptions) {
    this.#o = opts;
  }

  get #stored(): Record<string, StoredPreview> {
    return (this.#o.state.data.previews ??= {});
  }

  #now(): number {
    return this.#o.now?.() ?? Date.now();
  }

  /** Starts the ttl sweep (previews in state.json were restarted with every other function). */
  start(): void {
    // Every minute, or sooner for a short ttl (a preview then goes within a quarter of it).
    this.#timer = setInterval(() => void this.#sweep(), this.#o.sweepMs ?? Math.min(60_000, Math.max(1000, this.#o.settings.ttlMs / 4)));
    this.#timer.unref();
    void this.#sweep();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await Promise.allSettled([...this.#syncs.values()].map((s) => s.close()));
    await this.#o.reader.close?.();
  }

  /** Resolves when no preview build is running or pending (tests, benchmarks). */
  async idle(): Promise<void> {
    await Promise.all([...this.#syncs.values()].map((s) => s.idle()));
  }

  async pullRequest(namespace: string, name: string, event: PullRequestEvent, reason: string): Promise<PreviewAnswer> {
    const o = this.#o;
    if (namespace !== o.namespace || name !== o.repoName) return { outcome: 'ignored', message: `no repository ${namespace}/${name} here` };
    const open = Object.values(this.#stored).map((p) => ({ number: p.number, head: p.head }));
    const decision = decidePreview({
      event,
      namespace: o.namespace,
      watchedBranch: o.repository.branch,
      settings: o.settings,
      open,
      takenByOther: (ns) => o.state.data.namespaces.includes(ns) && !Object.values(this.#stored).some((p) => p.namespace === ns),
    });
    switch (decision.kind) {
      case 'ignore':
        o.logger.info(`pull request delivery ignored: ${decision.message} [${reason}]`);
        return { outcome: 'ignored', message: decision.message };
      case 'refuse':
        o.logger.warn(`pull request #${decision.number}: no preview: ${decision.message} [${reason}]`);
        if (o.status) o.status.poster.post(o.status.target, decision.head, [refusedStatus(decision.message)]);
        return { outcome: 'refused', message: decision.message };
      case 'remove':
        o.logger.info(`${decision.message} [${reason}]`);
        void this.#remove(decision.number, decision.message).catch((err: unknown) => o.logger.error(`removing the preview of #${decision.number} failed: ${(err as Error).message}`));
        return { outcome: 'accepted', message: decision.message };
      case 'build': {
        o.logger.info(`${decision.message} [${reason}]`);
        const known = this.#stored[String(decision.number)];
        this.#stored[String(decision.number)] = {
          number: decision.number,
          namespace: decision.namespace,
          branch: decision.branch,
          head: known?.head ?? decision.head,
          updatedAt: new Date(this.#now()).toISOString(),
          functions: known?.functions ?? [],
          repository: known?.repository ?? {},
        };
        if (!o.state.data.namespaces.includes(decision.namespace)) o.state.data.namespaces.push(decision.namespace);
        await o.state.save();
        this.#heads.set(decision.number, decision.head);
        this.#syncOf(decision.number).request(reason);
        return { outcome: 'accepted', message: decision.message };
      }
    }
  }

  async list(namespace: string): Promise<PreviewRecord[]> {
    const o = this.#o;
    if (namespace !== o.namespace) return [];
    return Object.values(this.#stored)
      .sort((a, b) => a.number - b.number)
      .map((p) => ({
        number: p.number,
        namespace: p.namespace,
        repository: o.repoName,
        branch: p.branch,
        head: p.head,
        url: `${o.publicUrl()}/fn/${p.namespace}/`,
        expiresAt: new Date(Date.parse(p.updatedAt) + o.settings.ttlMs).toISOString(),
        functions: p.functions.map((f) => {
          const phase = f.state === 'built' || f.state === 'failed' ? o.table.get(p.namespace, f.name)?.record.phase : undefined;
          const url = f.state === 'built' ? o.url(p.namespace, f.name) : f.state === 'production' ? o.url(o.namespace, f.name) : undefined;
          return { name: f.name, state: f.state, ...(phase ? { phase } : {}), ...(url ? { url } : {}) };
        }),
      }));
  }

  /** True for an open preview's namespace when its functions get no Secrets (`secrets: none`, the default). */
  withholdsSecrets(namespace: string): boolean {
    return this.#o.settings.secrets !== 'inherit' && this.#isPreview(namespace);
  }

  /** Whether the queue triggers of `namespace`'s functions consume: not in a preview without `schedules: true`. */
  runsTriggers(namespace: string): boolean {
    return this.#o.settings.schedules || !this.#isPreview(namespace);
  }

  #isPreview(namespace: string): boolean {
    return Object.values(this.#stored).some((p) => p.namespace === namespace);
  }

  /**
   * For /fn and the scaler: undefined when `namespace` is no open preview; else the namespace whose
   * function answers (production for a function the PR leaves alone, the preview's own for one it
   * built), or the answer itself (404 for a removed one, 503 before the first plan).
   */
  route(namespace: string, name: string): PreviewTarget | undefined {
    const parsed = parsePreviewNamespace(namespace);
    if (!parsed || parsed.namespace !== this.#o.namespace) return undefined;
    const p = this.#stored[String(parsed.number)];
    if (!p || p.namespace !== namespace) return undefined;
    // Planned once its first read has planned it (functions) or a sync has run (a plan of no functions).
    const preview = { number: p.number, planned: p.functions.length > 0 || p.repository.revision !== undefined, functions: p.functions };
    return previewTarget(routePreview({ preview, name, ownFunction: this.#o.table.get(namespace, name) !== undefined }), namespace, this.#o.namespace);
  }

  #syncOf(number: number): SyncCoalescer {
    let s = this.#syncs.get(number);
    if (!s) {
      s = new SyncCoalescer(
        (reasons) => (this.#closed ? Promise.resolve() : this.#sync(number, reasons)),
        (err) => this.#o.logger.error(`preview of pull request #${number}: ${(err as Error).message}`),
      );
      this.#syncs.set(number, s);
    }
    return s;
  }

  /** Reads the PR, plans it against its merge base, builds what it changes (the watched branch's sync code). */
  async #sync(number: number, reasons: string[]): Promise<void> {
    const o = this.#o;
    const key = String(number);
    const start = this.#stored[key];
    if (!start) return; // removed meanwhile
    const log = prefixed(o.logger, `pr #${number}: `);
    let read;
    try {
      read = await o.reader.read(start.branch, { head: this.#heads.get(number), base: o.state.data.repository.revision });
    } catch (err) {
      if (!(err instanceof PreviewBranchMissing)) throw err;
      log.info(`${err.message}; nothing built`);
      // A preview never built leaves no trace (the delivery changes nothing); a built one stays until its PR closes.
      if (this.#stored[key]?.repository.revision === undefined) await this.#forget(number);
      return;
    }
    const plan = planPreview(read.mergeBase, read.head.snapshot);
    const current = this.#stored[key];
    if (!current) return;
    const head = read.head.snapshot.revision;
    const preview: StoredPreview = {
      ...current,
      head,
      functions: plan.functions,
      updatedAt: head === current.head && current.repository.revision !== undefined ? current.updatedAt : new Date(this.#now()).toISOString(),
    };
    this.#stored[key] = preview;
    const failedNames = new Set(plan.functions.filter((f) => f.state === 'failed').map((f) => f.name));
    const snapshot: Snapshot = { revision: head, functions: [...plan.build, ...read.head.snapshot.functions.filter((e) => failedNames.has(e.name))] };
    const slot = {
      get: (): StoredRepository => this.#stored[key]?.repository ?? {},
      set: (repository: StoredRepository) => {
        const p = this.#stored[key];
        if (p) this.#stored[key] = { ...p, repository };
      },
    };
    if (snapshot.functions.length === 0) {
      // Nothing to build (a push that undid the PR's changes): what an earlier push built goes, and
      // every function answers from production. (A sync would keep them: an empty source removes nothing.)
      for (const f of o.table.inNamespace(preview.namespace)) await o.removeFunction(preview.namespace, f.name);
      slot.set({ revision: head, lastSyncTime: new Date(this.#now()).toISOString(), snapshot });
      await o.state.save();
      this.#report(preview, head, plan.functions, []);
      log.info(`synced rev ${head.slice(0, 7)}: nothing built, ${plan.functions.filter((f) => f.state === 'production').length} from production`);
      return;
    }
    // RepositorySync reads the PR's changed functions only: the others answer from production.
    const changed = { ...read.head, snapshot };
    const sync = new RepositorySync({
      namespace: preview.namespace,
      managedBy: o.managedBy,
      repository: { displayUrl: o.repository.displayUrl, branch: preview.branch, path: o.repository.path, read: async () => changed },
      runtimes: o.runtimes,
      logger: log,
      state: o.state,
      table: o.table,
      deployer: o.deployer,
      jobs: o.jobs,
      deploys: o.deploys,
      url: o.url,
      removeFunction: o.removeFunction,
      stored: slot,
      schedules: o.settings.schedules,
      reportRevision: (revision, fns) => this.#report(preview, revision, plan.functions, fns),
    });
    await sync.run(reasons);
  }

  #report(preview: StoredPreview, revision: string, planned: readonly PreviewFunctionPlan[], deployed: readonly RevisionFunction[]): void {
    const status = this.#o.status;
    if (!status) return;
    const deployOf = new Map(deployed.map((f) => [f.name, f.state]));
    const functions = planned.map((f) => {
      const deploy: FunctionDeployState | undefined = f.state === 'failed' ? { kind: 'failed', message: `${f.path}: ${f.error ?? 'broken'}` } : deployOf.get(f.name);
      return { name: f.name, state: f.state, ...(deploy ? { deploy } : {}) };
    });
    status.poster.post(status.target, revision, [previewStatus({ namespace: preview.namespace, functions, consoleBaseUrl: this.#o.publicUrl() })]);
  }

  async #remove(number: number, why: string): Promise<void> {
    const o = this.#o;
    const sync = this.#syncs.get(number);
    this.#syncs.delete(number);
    this.#heads.delete(number);
    await sync?.close();
    const p = await this.#forget(number);
    if (p) o.logger.info(`preview ${p.namespace} removed (${why})`);
  }

  /** Removes the preview's functions (and so their prepared folders, folder-collector.ts), record, namespace and branch ref; returns what it removed. */
  async #forget(number: number): Promise<StoredPreview | undefined> {
    const o = this.#o;
    const p = this.#stored[String(number)];
    if (!p) return undefined;
    for (const f of o.table.inNamespace(p.namespace)) await o.removeFunction(p.namespace, f.name);
    delete this.#stored[String(number)];
    o.state.data.namespaces = o.state.data.namespaces.filter((n) => n !== p.namespace);
    await o.state.save();
    // Its branch in the previews' git cache, unless another open PR has the same head branch.
    if (!Object.values(this.#stored).some((other) => other.branch === p.branch)) {
      await o.reader.forget(p.branch).catch((err: unknown) => o.logger.warn(`preview ${p.namespace}: dropping branch ${p.branch} from the previews' git cache failed: ${(err as Error).message}`));
    }
    return p;
  }

  async #sweep(): Promise<void> {
    const now = this.#now();
    for (const p of Object.values(this.#stored)) {
      // A preview being built now was just pushed to: its ttl starts again when the build has read it.
      if (this.#syncs.get(p.number)?.busy) continue;
      if (Date.parse(p.updatedAt) + this.#o.settings.ttlMs <= now) {
        await this.#remove(p.number, `no push for ${durationText(this.#o.settings.ttlMs)}, its ttl`).catch((err: unknown) =>
          this.#o.logger.error(`removing the expired preview ${p.namespace} failed: ${(err as Error).message}`),
        );
      }
    }
  }
}

function prefixed(logger: Logger, prefix: string): Logger {
  return { info: (m) => logger.info(prefix + m), warn: (m) => logger.warn(prefix + m), error: (m) => logger.error(prefix + m) };
}

function durationText(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${Math.round(ms / 1000)}s`;
}
