// Composition of the reconcile machinery: informers over the four sless kinds and over what the controller
// owns (controller-informers.ts: a change or deletion of an owned object enqueues its owner at once, so
// drift heals in seconds), one work queue per kind (a key never runs twice at once), bounded pools for syncs, builds and
// the rest, and the event → key mapping between them. `sless controller` starts it on the elected leader.
import type { KubeConfig, KubernetesObject, V1Job, V1Pod } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import { Registry } from 'prom-client';
import type { ArtifactStore } from '../../build/artifact-store.ts';
import { baseImageOf } from '../../build/runtime-catalog.ts';
import { S3ArtifactStore } from '../../build/s3-artifact-store.ts';
import type { Runtime } from '../../manifest/types.ts';
import type { BuildLog, InvocationLog } from '../../store/types.ts';
import type { Platform } from '../types.ts';
import type { RetryDelays } from '../../queue/delivery.ts';
import { httpInvoker } from '../queue-invoker.ts';
import { KubeQueueConsumers } from './queue-consumers.ts';
import { previewRequestsFingerprint } from './previews/preview-requests.ts';
import { KubeCommitStatus } from './kube-commit-status.ts';
import { createMetrics, dropFunctionSeries, dropRepositorySeries, type Metrics } from '../../metrics/metrics.ts';
import { createInformers, scopedHandlers, type ControllerInformers } from './controller-informers.ts';
import { reportBudgetWait } from './budget-wait-report.ts';
import { createControllerMetrics, type ControllerMetrics } from './controller-metrics.ts';
import { ANNOTATIONS, GROUP, LABELS } from './objects/meta.ts';
import { OwnedApplier } from './objects/owned-applier.ts';
import { type FunctionResource, type RepositoryResource, type SlessKind, type TriggerResource } from './objects/resources.ts';
import { FunctionJobReconciler } from './reconcilers/function-job-reconciler.ts';
import { FunctionReconciler } from './reconcilers/function-reconciler.ts';
import { jobState } from './objects/job-state.ts';
import { keyOf, repositoryGroup, splitKey, type Caches, type ControllerLogger, type ReconcileContext } from './reconcilers/reconcile-context.ts';
import { RepositoryReconciler } from './reconcilers/repository-reconciler.ts';
import { gitTargets } from './reconcilers/repository-sources.ts';
import { forgetStatus } from './reconcilers/status-writer.ts';
import { TriggerReconciler } from './reconcilers/trigger-reconciler.ts';
import { KubeClient, VERSION } from './api-client/kube-client.ts';
import { TenantAccess } from './tenant-access.ts';
import { select } from './api-client/cache-index.ts';
import type { InformerEvent } from './api-client/resilient-informer.ts';
import { reuseConnections } from './api-client/reuse-connections.ts';
import type { Timers } from './api-client/timers.ts';
import { TimeBudget } from './api-client/time-budget.ts';
import { WorkQueue, type WorkQueueOptions } from './api-client/work-queue.ts';
import { announcesNewHead } from './reconcilers/sync-hint.ts';
import { resolveControllerSettings, SYNC_BURST_MS, SYNC_WAIT_MAX_MS, URGENT_SYNC_SLOTS, type ControllerSettings, type ResolvedControllerSettings, type S3Settings } from './settings.ts';
import { LEGACY_BUILD_S3_SECRET } from '../tenant-rules.ts';

export interface ControllerOptions {
  readonly kubeConfig: KubeConfig;
  readonly logger: ControllerLogger;
  readonly settings: ControllerSettings;
  /** Where /metrics reads from; a private registry when absent. */
  readonly registry?: Registry;
  /** Default: S3ArtifactStore from settings.s3. */
  readonly store?: ArtifactStore;
  readonly timers?: Timers;
  /** Watch only this namespace, or these (a namespace-scoped controller; also keeps parallel test controllers apart). */
  readonly watchNamespace?: string | readonly string[];
  /**
   * Watching every namespace, act only on objects whose namespace this accepts (absent: all). Namespaces
   * made at run time (previews) cannot be listed in watchNamespace beforehand; test kits sharing one API
   * server scope a watch-everything controller to their own namespaces with it.
   */
  readonly namespaceScope?: (namespace: string) => boolean;
  /** Work-queue retry backoff (tests shorten it). */
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  /** Receives one `started` record per build Job this controller creates and one outcome per finished build. */
  readonly buildLog?: BuildLog;
  /**
   * How queue deliveries reach functions: the same endpoints /fn uses (the KubernetesPlatform's
   * resolveEndpoint, and its scaling port to wake a function at zero). Absent: queue Triggers stall.
   */
  readonly functions?: Pick<Platform, 'resolveEndpoint' | 'scaling'>;
  /** Records every queue delivery beside /fn's calls. */
  readonly invocationLog?: InvocationLog;
  /** Delays between the calls of a failing message (tests shorten them); default delivery.ts DEFAULT_RETRY_DELAYS. */
  readonly queueRetryDelays?: RetryDelays;
}

/** How long stop() waits for running reconciles. */
const STOP_GRACE_MS = 30_000;

type AnyResource = KubernetesObject & { spec?: unknown; status?: unknown };

export class Controller {
  readonly kube: KubeClient;
  readonly metrics: ControllerMetrics;
  /** The per-function and per-repository series (dropped with their objects). */
  private readonly series: Metrics;
  readonly store: ArtifactStore;
  private readonly informers: ControllerInformers;
  private readonly queues: Record<SlessKind, WorkQueue>;
  private readonly repositoryReconciler: RepositoryReconciler;
  private readonly functionReconciler: FunctionReconciler;
  private readonly triggerReconciler: TriggerReconciler;
  /** Commit statuses of repositories with spec.commitStatus (public for tests: idle()). */
  readonly commitStatus: KubeCommitStatus;
  /** Last seen generation + requestedAt per repository: only those changes (not our status writes) start a sync. */
  private readonly seenRepos = new Map<string, string>();
  private started = false;
  /** Every informer has listed: before that, an owned object's event could reach a reconciler that cannot see its owner yet. */
  private synced = false;
  private markSynced!: () => void;
  /** Reconciles wait for it: a reconciler must see every cache complete (an owner, its Triggers, its workloads). */
  private readonly allSynced = new Promise<void>((resolve) => (this.markSynced = resolve));
  private stopped = false;
  private readonly pools: Record<'syncs' | 'urgentSyncs' | 'builds' | 'other', PQueue>;
  private readonly ctx: ReconcileContext;
  /** The leader's queue consumers (stopped with the controller: the next leader starts its own). */
  private readonly queueConsumers: KubeQueueConsumers | undefined;

  /** The options' settings with every default filled in (the only place they are). */
  private readonly settings: ResolvedControllerSettings;

  constructor(private readonly opts: ControllerOptions) {
    const { logger } = opts;
    const settings = (this.settings = resolveControllerSettings(opts.settings));
    // One dispatcher for all API calls (client-node makes one per call otherwise); idempotent.
    const kubeConfig = reuseConnections(opts.kubeConfig);
    this.kube = new KubeClient(kubeConfig);
    const registry = opts.registry ?? new Registry();
    this.metrics = createControllerMetrics(registry);
    this.series = createMetrics(registry);
    this.store = opts.store ?? s3StoreOf(settings.s3);
    const watched = opts.watchNamespace === undefined ? [] : typeof opts.watchNamespace === 'string' ? [opts.watchNamespace] : [...opts.watchNamespace];
    this.informers = createInformers(
      {
        kubeConfig,
        logger,
        resyncMs: settings.resyncMs,
        watched,
        buildNamespace: settings.buildNamespace,
        ...(opts.timers ? { timers: opts.timers } : {}),
      },
      scopedHandlers(opts.namespaceScope, {
        repository: (e, o) => {
          if (e === 'delete') this.forget('FunctionRepository', o);
          this.onRepository(e, o);
        },
        function: (e, o) => {
          if (e === 'delete') this.forget('Function', o);
          this.onFunction(o);
        },
        trigger: (e, o) => {
          if (e === 'delete') this.forget('Trigger', o);
          this.onTrigger(o);
        },
        functionJob: (e, o) => {
          if (e === 'delete') this.forget('FunctionJob', o);
          this.queues.FunctionJob.add(keyOf(o));
        },
        job: (o, e) => this.onJob(o, e),
        buildPod: (o, e) => this.onBuildPod(o, e),
        owned: (o, e) => this.onOwned(o, e),
      }),
    );
    const caches: Caches = this.informers;
    this.queueConsumers = opts.functions
      ? new KubeQueueConsumers({
          invoke: httpInvoker(opts.functions),
          limits: { consumersPerNamespace: settings.limits.queueConsumersPerNamespace, inFlightPerNamespace: settings.limits.queueInFlightPerNamespace },
          registry,
          ...(opts.invocationLog ? { invocationLog: opts.invocationLog } : {}),
          ...(opts.queueRetryDelays ? { retryDelays: opts.queueRetryDelays } : {}),
          log: { info: (m) => logger.info(m), warn: (m) => logger.warn(m), error: (m) => logger.error(m) },
        })
      : undefined;
    this.commitStatus = new KubeCommitStatus({
      readSecret: async (namespace, name) => (await this.kube.readSecret(namespace, name))?.data,
      getFunction: (namespace, name) => this.informers.functions.get(name, namespace),
      logger,
      targets: gitTargets(settings.git ?? {}),
      ...(settings.publicBaseUrl ? { publicBaseUrl: settings.publicBaseUrl } : {}),
    });
    const ctx: ReconcileContext = (this.ctx = {
      kube: this.kube,
      caches,
      settings,
      logger,
      store: this.store,
      metrics: this.metrics,
      tenants: new TenantAccess(kubeConfig, settings),
      baseImageOf: (runtime) => baseImageOf(runtime as Runtime, settings.runtimeImagePrefix),
      now: () => new Date(),
      owned: new OwnedApplier((obj) => this.kube.apply(obj)),
      statusMemo: new Map(),
      commitStatus: this.commitStatus,
      ...(opts.buildLog ? { buildLog: opts.buildLog } : {}),
      ...(this.queueConsumers ? { queues: this.queueConsumers } : {}),
    });
    this.repositoryReconciler = new RepositoryReconciler(ctx);
    const functions = (this.functionReconciler = new FunctionReconciler(ctx));
    const triggers = (this.triggerReconciler = new TriggerReconciler(ctx));
    const functionJobs = new FunctionJobReconciler(ctx);
    const c = settings.concurrency;
    const pools = (this.pools = {
      syncs: new PQueue({ concurrency: c.syncs }),
      // Kept for webhook pushes: routine resyncs never hold it, so a push does not wait for one to end.
      urgentSyncs: new PQueue({ concurrency: URGENT_SYNC_SLOTS }),
      builds: new PQueue({ concurrency: c.builds }),
      other: new PQueue({ concurrency: c.reconciles }),
    });
    const queue = (
      kind: SlessKind,
      pool: PQueue,
      handler: (key: string) => Promise<unknown>,
      groupOf: (key: string) => string,
      fairness: Pick<WorkQueueOptions, 'maxRunningPerNamespace' | 'urgentOf' | 'urgentPool' | 'budget' | 'namespaceBudget'> = {},
    ) =>
      new WorkQueue({
        name: kind,
        pool,
        groupOf,
        ...fairness,
        ...(opts.backoff ? { backoff: opts.backoff } : {}),
        ...(opts.timers ? { timers: opts.timers } : {}),
        handler: async (key) => {
          await this.allSynced;
          const end = this.metrics.reconcileDuration.startTimer({ kind });
          try {
            const result = (await handler(key)) as { requeueAfterMs?: number } | void;
            end({ outcome: 'success' });
            return result;
          } catch (err) {
            end({ outcome: 'error' });
            throw err;
          } finally {
            this.metrics.apiRequests.set(this.kube.requests);
          }
        },
        onError: (key, err, retry) =>
          logger.warn(`ReconcileError: ${kind} ${key}: ${err instanceof Error ? err.message : String(err)}; retrying in ${retry} ms`, { reason: 'ReconcileError' }),
        onDepth: (name, depth) => this.metrics.queueDepth.set({ queue: name }, depth),
        onBudgetWait: reportBudgetWait(this.metrics, logger, kind),
      });
    const syncBudget = () => new TimeBudget({ share: settings.limits.syncShare, burstMs: SYNC_BURST_MS, maxWaitMs: SYNC_WAIT_MAX_MS });
    this.queues = {
      // Syncs run long (fetch, uploads): one namespace never holds the whole pool (fair shares, README).
      FunctionRepository: queue(
        'FunctionRepository',
        pools.syncs,
        (k) => this.repositoryReconciler.reconcile(k),
        (k) => `${splitKey(k).namespace}/${splitKey(k).name}`,
        {
          maxRunningPerNamespace: settings.limits.syncsPerNamespace,
          // A webhook's push goes before routine resyncs; a repository syncing all the time waits its turn.
          urgentOf: (k) => announcesNewHead(caches.repositories.get(splitKey(k).name, splitKey(k).namespace)),
          urgentPool: pools.urgentSyncs,
          budget: syncBudget(),
          // And a tenant's repositories together, beside a lighter tenant: four busy repositories are not four shares.
          namespaceBudget: {
            budget: syncBudget(),
            contendedMs: SYNC_WAIT_MAX_MS,
          },
        },
      ),
      Function: queue('Function', pools.builds, (k) => functions.reconcile(k), (k) => repositoryGroup(k, caches.functions)),
      Trigger: queue('Trigger', pools.other, (k) => triggers.reconcile(k), (k) => repositoryGroup(k, caches.triggers)),
      FunctionJob: queue('FunctionJob', pools.other, (k) => functionJobs.reconcile(k), (k) => repositoryGroup(k, caches.functionJobs)),
    };
  }

  /** Lists everything (each informer retries until its first list succeeds), then starts reconciling. */
  async start(): Promise<void> {
    if (this.stopped) throw new Error('this Controller was stopped; create a new one (e.g. after regaining leadership)');
    if (this.started) return;
    this.started = true;
    // Every kind lists at once (a restart waits for the slowest list, not for the sum of them): no reconcile
    // runs before all have listed (allSynced), so the Function reconciler still finds running builds in its
    // cache (never a twin) and the workloads it would apply (a restarted controller re-applies nothing in place).
    await Promise.all([this.removeLegacyBuildSecret(), ...Object.values(this.informers).map((i) => i.start())]);
    this.synced = true;
    this.markSynced();
    this.opts.logger.info('ControllerStarted: informers synced, reconciling', { reason: 'ControllerStarted' });
  }

  /** Stops for good: queues drop pending work, informers close, git caches are released. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const q of Object.values(this.queues)) q.stop();
    await Promise.all(Object.values(this.informers).map((i) => i.stop()));
    // Let running reconciles finish (a follower must not keep writing), but never hang a shutdown on one.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(Object.values(this.pools).map((p) => p.onIdle())),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS))),
    ]);
    clearTimeout(timer);
    // Consumers stop after the reconciles (none starts one again); their calls in flight settle first.
    await this.queueConsumers?.close();
    await this.repositoryReconciler.close();
    await this.commitStatus.close();
  }

  /** Asks for a sync now by annotating the repository; the leader's watch picks it up at once. */
  async requestSync(namespace: string, name: string, at: Date = new Date()): Promise<void> {
    const result = await this.kube.mergePatch(
      { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name, namespace } },
      { metadata: { annotations: { [ANNOTATIONS.requestedAt]: at.toISOString() } } },
    );
    if (result === 'missing') throw new Error(`FunctionRepository ${namespace}/${name} does not exist; cannot request a sync`);
  }

  /** Keys waiting or running per queue (for tests, /readyz detail and the benchmark). */
  depth(): Record<SlessKind, number> {
    return {
      FunctionRepository: this.queues.FunctionRepository.depth(),
      Function: this.queues.Function.depth(),
      Trigger: this.queues.Trigger.depth(),
      FunctionJob: this.queues.FunctionJob.depth(),
    };
  }

  /** Read access to the informer caches (the platform can serve reads from them). */
  get caches(): Caches {
    return this.informers;
  }

  /** A sless object is gone: what this process remembered of it goes too (status memo, events, its metric series). */
  private forget(kind: SlessKind, obj: AnyResource): void {
    forgetStatus(this.ctx.statusMemo, kind, obj);
    this.kube.events.forget(obj.metadata?.uid);
    const namespace = obj.metadata?.namespace ?? '';
    const name = obj.metadata?.name ?? '';
    if (kind === 'Function') dropFunctionSeries(this.series, namespace, name);
    if (kind === 'FunctionRepository') dropRepositorySeries(this.series, namespace, name);
  }

  private onRepository(event: InformerEvent, repo: RepositoryResource): void {
    const key = keyOf(repo);
    // A recorded pull-request delivery (previews/preview-requests.ts) asks for a reconcile as requestedAt does.
    const seen = `${repo.metadata?.generation ?? ''}|${repo.metadata?.annotations?.[ANNOTATIONS.requestedAt] ?? ''}|${repo.metadata?.deletionTimestamp ? 'x' : ''}|${previewRequestsFingerprint(repo.metadata?.annotations)}`;
    if (event === 'delete') {
      this.seenRepos.delete(key);
      this.queues.FunctionRepository.add(key);
      return;
    }
    // Our own status writes are updates too; only spec changes and sync requests start a sync.
    // (Resyncs are left to each repository's own interval requeue.)
    if (event === 'resync' || this.seenRepos.get(key) === seen) return;
    this.seenRepos.set(key, seen);
    this.queues.FunctionRepository.add(key);
  }

  private onFunction(fn: FunctionResource): void {
    const ns = fn.metadata?.namespace ?? '';
    const name = fn.metadata?.name ?? '';
    this.queues.Function.add(keyOf(fn));
    // By index, not a scan of the namespace's Triggers per Function event (cache-index.ts).
    for (const t of select(this.informers.triggers, ns, 'functionRef', `${ns}/${name}`)) this.queues.Trigger.add(keyOf(t));
    for (const j of select(this.informers.functionJobs, ns, 'functionRef', `${ns}/${name}`)) this.queues.FunctionJob.add(keyOf(j));
    this.commitStatus.functionChanged(fn, fn.metadata?.labels?.[LABELS.repository]);
    this.repositoryReconciler.previewFunctionChanged(fn);
  }

  private onTrigger(t: TriggerResource): void {
    this.queues.Trigger.add(keyOf(t));
    // http and queue Triggers decide whether the function's Deployment runs (a queue-only function runs too).
    if ((t.spec?.type === 'http' || t.spec?.type === 'queue') && t.spec.functionRef) this.queues.Function.add(`${t.metadata?.namespace ?? ''}/${t.spec.functionRef}`);
  }

  private onJob(job: V1Job, e: InformerEvent): void {
    const labels = job.metadata?.labels ?? {};
    const fnName = labels[LABELS.function];
    if (labels[LABELS.component] === 'build' && fnName) {
      const namespace = labels[LABELS.functionNamespace] ?? '';
      this.queues.Function.add(`${namespace}/${fnName}`);
      // Its slot is free once it has finished (or is gone while running): the namespace's longest
      // waiting build goes now. Not on add/resync: a finished Job listed again frees nothing.
      const freed = e === 'update' ? jobState(job) !== 'running' : e === 'delete' && jobState(job) === 'running';
      const next = freed ? this.functionReconciler.buildSlotFreed(namespace) : undefined;
      if (next) this.queues.Function.add(next);
    } else if (labels[LABELS.functionJob]) {
      this.queues.FunctionJob.add(`${job.metadata?.namespace ?? ''}/${labels[LABELS.functionJob]}`);
    }
  }

  /** A build pod Succeeded: its Function rolls the image out now, before the Job's Complete condition (function-build.ts). */
  private onBuildPod(pod: V1Pod, e: InformerEvent): void {
    const labels = pod.metadata?.labels ?? {};
    const fnName = labels[LABELS.function];
    if (e !== 'update' || pod.status?.phase !== 'Succeeded' || labels[LABELS.component] !== 'build' || !fnName) return;
    this.queues.Function.add(`${labels[LABELS.functionNamespace] ?? ''}/${fnName}`);
  }

  /**
   * A Deployment, Service or CronJob of a Function changed or went away: its owner reconciles now and puts
   * it back as it should be (a no-op when it already is). Resyncs are left to the owners' own.
   */
  private onOwned(obj: KubernetesObject, event: InformerEvent): void {
    // Before the sync their owners are not in the caches yet (a Trigger reconciler would take its CronJob for an
    // orphan); the owners' own first events reconcile everything anyway.
    if (event === 'resync' || !this.synced) return;
    const labels = obj.metadata?.labels ?? {};
    const namespace = obj.metadata?.namespace ?? '';
    // Gone: the next reconcile must not trust what was applied there before.
    if (event === 'delete') this.ctx.owned.forget(namespace, obj.metadata?.name ?? '');
    if (labels[LABELS.trigger]) this.queues.Trigger.add(`${namespace}/${labels[LABELS.trigger]}`);
    else if (labels[LABELS.function]) this.queues.Function.add(`${namespace}/${labels[LABELS.function]}`);
  }

  /**
   * Builds hold no S3 key any more (they read their context through a presigned URL): remove the copy of
   * ours that earlier versions kept in the build namespace.
   */
  private async removeLegacyBuildSecret(): Promise<void> {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: LEGACY_BUILD_S3_SECRET, namespace: this.settings.buildNamespace } };
    try {
      // Read first: a restarted controller with nothing to remove writes nothing.
      if (await this.kube.readSecret(secret.metadata.namespace, secret.metadata.name)) await this.kube.delete(secret);
    } catch (err) {
      this.opts.logger.warn(
        `cannot delete the Secret ${this.settings.buildNamespace}/${LEGACY_BUILD_S3_SECRET} earlier versions kept for kaniko (${err instanceof Error ? err.message : String(err)}); delete it by hand, builds no longer use it`,
        { reason: 'LegacyBuildSecret' },
      );
    }
  }
}

/** The artifact store of the controller's S3 settings (the one place it is made from them). */
export function s3StoreOf(s3: S3Settings): ArtifactStore {
  return new S3ArtifactStore({
    bucket: s3.bucket,
    region: s3.region,
    ...(s3.endpoint ? { endpoint: s3.endpoint } : {}),
    ...(s3.credentials ? { credentials: s3.credentials } : {}),
  });
}

export interface StartedController {
  readonly controller: Controller;
  stop(): Promise<void>;
  requestSync(namespace: string, name: string): Promise<void>;
}

/** What `sless controller` calls once this replica leads. */
export async function startController(opts: ControllerOptions): Promise<StartedController> {
  const controller = new Controller(opts);
  await controller.start();
  return { controller, stop: () => controller.stop(), requestSync: (ns, name) => controller.requestSync(ns, name) };
}

