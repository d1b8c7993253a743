// Function: build when the build key (code_hash + runtime + base image) has no image yet, then run the
// image as a Deployment + Service. Builds are kaniko Jobs in the build namespace, named from the build key,
// so a restarted controller adopts a running build instead of starting a second one. A failed build leaves
// the previous Deployment serving.
import type { V1Deployment, V1Job, V1Pod } from '@kubernetes/client-node';
import { isArtifactStoreError } from '../../../build/artifact-store.ts';
import { buildKindOfContextKey } from '../../../build/build-kind.ts';
import { BUILD_CONTAINERS, buildContextUrlTtlSec, buildDestination, buildJob, buildJobName } from '../objects/build-job.ts';
import { buildKey, imageTag, tagOf } from '../objects/build-key.ts';
import { functionDeployment, functionService } from '../objects/function-workload.ts';
import { stamped, upToDate } from '../objects/drift.ts';
import { ANNOTATIONS, FINALIZER, LABELS } from '../objects/meta.ts';
import { DEFAULT_BUILDS_PER_NAMESPACE } from '../settings.ts';
import type { FunctionResource, FunctionStatus } from '../objects/resources.ts';
import { envProblem, httpEnabledFrom } from '../records.ts';
import type { BuildRecord } from '../../../store/types.ts';
import type { HandlerResult } from '../runtime/work-queue.ts';
import type { Outcome } from './conditions.ts';
import { record, splitKey, type ReconcileContext } from './context.ts';
import { BUILD_QUEUED_RECHECK_MS, BuildReservations } from './build-share.ts';
import { buildRetryDelayMs, classifyBuildFailure, jobFinishedAt } from './build-failure.ts';
import { rolloutOf } from './rollout.ts';
import { writeStatus } from './status-writer.ts';
import { failedContainer, jobFailureReason, jobState, latestJobPod, podOutput, terminationMessage } from './job-status.ts';

const LOG_TAIL_BYTES = 4096;
const DIGEST = /^sha256:[0-9a-f]{64}$/;
/**
 * How often an unfinished rollout is looked at again: for its pods (the Deployment itself is watched).
 * Also how long a rollout may take before its pods are read at all: a new pod needs longer than that
 * to crash-loop or fail its pull, so most rollouts finish without a single pod list.
 */
const ROLLOUT_POLL_MS = 3_000;
/** How long the status write after a build may wait for its rollout to finish (StepResult.hold). */
const ROLLOUT_HOLD_MS = 5_000;

/**
 * `hold`: write no status this time. A build just finished and its rollout has begun: most rollouts are
 * done within ROLLOUT_HOLD_MS, so the status goes Building → Ready in one write instead of Building →
 * rolling out → Ready (the conditions say Reconciling all along). The build's outcome is remembered
 * meanwhile (FunctionReconciler.built), so no reconcile reads the Job's pod a second time.
 */
type StepResult = { outcome: Outcome; status: Partial<FunctionStatus>; requeueAfterMs?: number; hold?: boolean };

export function functionUrl(ctx: Pick<ReconcileContext, 'settings'>, namespace: string, name: string): string {
  return `${(ctx.settings.publicBaseUrl ?? '').replace(/\/+$/, '')}/fn/${namespace}/${name}`;
}

/** Whether the function's http Trigger(s) allow serving (the one rule: none, or any enabled; records.ts). */
export function httpEnabled(ctx: Pick<ReconcileContext, 'caches'>, namespace: string, name: string): boolean {
  return httpEnabledFrom(ctx.caches.triggers.list(namespace), name);
}

export function functionBuildKey(ctx: Pick<ReconcileContext, 'baseImageOf'>, fn: FunctionResource): string | undefined {
  const spec = fn.spec;
  // A Function of the old system has its context in S3 but no codeHash: the object's address stands in.
  const codeHash = spec?.codeHash ?? (spec?.s3Key ? `s3:${spec.s3Bucket ?? ''}/${spec.s3Key}` : undefined);
  if (!spec || !codeHash) return undefined;
  return buildKey({ codeHash, runtime: spec.runtime, baseImage: ctx.baseImageOf(spec.runtime) });
}

export class FunctionReconciler {
  /**
   * The last build outcome recorded per function (`<job name> <outcome>`). The informer cache can lag
   * behind our status write, so a reconcile may see the same finished Job as new once more; this keeps
   * the BuildLog at one record per outcome. Across controllers, the status (imageRef / Failed message)
   * already written guards it.
   */
  private readonly recordedBuilds = new Map<string, string>();
  /** The uid of the build Job this process last deleted per function (to build again), while the cache may still show it. */
  private readonly discarded = new Map<string, string>();
  /** Build slots taken by this controller's reconciles before the Job cache shows their Jobs (build-share.ts). */
  private readonly reservations = new BuildReservations();

  /**
   * What this process applied per function and which resourceVersion the cache showed then: until the
   * cache moves past that version it lags behind our own apply, and applying again would be a wasted request.
   */
  private readonly applied = new Map<string, { hash: string; before: string | undefined }>();
  /** The same for the Service. */
  private readonly appliedServices = new Map<string, { hash: string; before: string | undefined }>();

  /** When this process first saw the rollout of each applied form (hash) unfinished; gone once it is available. */
  private readonly rollingOutSince = new Map<string, { hash: string; since: number }>();

  /** A finished build whose image the status does not name yet (see StepResult.hold), per function. */
  private readonly built = new Map<string, { buildKey: string; imageRef: string; finishedAt: string; seenAt: number }>();

  constructor(private readonly ctx: ReconcileContext) {}

  /** Its Deployment or Service went away: the next reconcile must not trust what it applied before. */
  forgetApplied(key: string): void {
    this.applied.delete(key);
    this.appliedServices.delete(key);
  }

  async reconcile(key: string): Promise<HandlerResult | void> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const fn = ctx.caches.functions.get(name, namespace);
    if (!fn) {
      this.applied.delete(key);
      this.appliedServices.delete(key);
      this.rollingOutSince.delete(key);
      this.recordedBuilds.delete(key);
      this.discarded.delete(key);
      this.built.delete(key);
      return;
    }
    if (fn.metadata?.deletionTimestamp) return this.finalize(fn);
    if (!fn.metadata?.finalizers?.includes(FINALIZER)) {
      await ctx.kube.mergePatch(fn, { metadata: { finalizers: [...(fn.metadata?.finalizers ?? []), FINALIZER] } });
    }

    let result: StepResult | undefined;
    let failure: unknown;
    try {
      result = await this.steps(fn, key);
    } catch (err) {
      failure = err;
      result = { outcome: { kind: 'failed', reason: 'ReconcileError', message: err instanceof Error ? err.message : String(err) }, status: {} };
    } finally {
      if (result && !result.hold) await writeStatus(ctx, 'Function', fn, result.outcome, result.status);
    }
    if (failure) throw failure;
    return result?.requeueAfterMs ? { requeueAfterMs: result.requeueAfterMs } : undefined;
  }

  private async steps(fn: FunctionResource, key: string): Promise<StepResult> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const spec = fn.spec;
    const bk = functionBuildKey(ctx, fn);
    const url = functionUrl(ctx, namespace, name);
    if (!spec || !bk || !spec.s3Key) {
      return {
        outcome: { kind: 'stalled', reason: 'NoCode', message: 'the function has no code yet: upload it or fix its repository' },
        status: { phase: 'Pending', url },
      };
    }
    if (spec.s3Bucket && spec.s3Bucket !== ctx.settings.s3.bucket) {
      // The context URL is presigned with the controller's own S3 keys: another bucket would make it read,
      // on a tenant's behalf, whatever those keys reach.
      const message = `spec.s3Bucket "${spec.s3Bucket}" is not this controller's bucket "${ctx.settings.s3.bucket}": copy the context to s3://${ctx.settings.s3.bucket}/${spec.s3Key} and drop s3Bucket, or push the code again`;
      return { outcome: { kind: 'stalled', reason: 'ForeignBucket', message }, status: { phase: 'Failed', message, url } };
    }
    const badEnv = envProblem(spec.env);
    if (badEnv) return { outcome: { kind: 'stalled', reason: 'InvalidEnv', message: badEnv }, status: { phase: 'Failed', message: badEnv, url } };
    const refusal = await ctx.tenants.refusalOf(namespace, spec.envFromSecrets ?? []);
    if (refusal) {
      return {
        outcome: { kind: 'stalled', reason: refusal.reason, message: refusal.message },
        status: { phase: 'Failed', message: refusal.message, url },
        // A missing Secret may yet be created: look again soon rather than at the next resync.
        ...(refusal.reason === 'SecretNotFound' ? { requeueAfterMs: 30_000 } : {}),
      };
    }

    let imageRef = fn.status?.imageRef;
    let lastBuiltAt = fn.status?.lastBuiltAt;
    let justBuilt = false;
    /** The status does not name this build's image yet: it was built now, or moments ago (held). */
    let unreported = false;
    const held = this.built.get(key);
    if (tagOf(imageRef) === imageTag(bk) || held?.buildKey !== bk) this.built.delete(key);
    if (tagOf(imageRef) !== imageTag(bk)) {
      unreported = true;
      if (held?.buildKey === bk) {
        imageRef = held.imageRef;
        lastBuiltAt = held.finishedAt;
      } else {
        const build = await this.build(fn, bk, ctx.settings.s3.bucket, spec.s3Key);
        if (build.kind !== 'built') return build.result;
        imageRef = build.imageRef;
        lastBuiltAt = build.finishedAt;
        justBuilt = true;
      }
    }
    if (!imageRef) throw new Error('unreachable: no image after a finished build');

    const { hash, applied } = await this.deploy(fn, key, imageRef, justBuilt);
    // One Event for "built and deployed" (the status says the rest): until the status names this image, the
    // finished Job is seen again, so a failed deploy above records it on the next attempt.
    if (justBuilt) record(ctx, fn, 'Normal', 'BuildSucceeded', `built ${imageRef}; Deployment ${namespace}/${name} runs it`);
    // The build is done: forget its failures; what is left is whether the new pods serve.
    const built = { imageRef, lastBuiltAt, url, failedBuildKey: '', buildRetries: 0 };
    // From the watch (its events enqueue this Function as the rollout moves), not a GET per reconcile. Until
    // the cache shows the form just applied, the apply's answer stands in for it; neither → still rolling out.
    const live = ctx.caches.deployments.get(name, namespace);
    const deployment = live?.metadata?.annotations?.[ANNOTATIONS.appliedHash] === hash ? live : applied;
    const rollout = await this.rolloutFor(key, hash, deployment, imageRef);
    switch (rollout.state) {
      case 'available':
        return { outcome: { kind: 'ready', reason: 'Deployed', message: rollout.message }, status: { ...built, phase: 'Ready', message: '' } };
      case 'progressing': {
        const since = justBuilt ? ctx.now().getTime() : (this.built.get(key)?.seenAt ?? 0);
        if (unreported && ctx.now().getTime() - since < ROLLOUT_HOLD_MS) {
          if (justBuilt) this.built.set(key, { buildKey: bk, imageRef, finishedAt: lastBuiltAt ?? ctx.now().toISOString(), seenAt: since });
          // The Deployment's watch enqueues this Function as the rollout moves; a failing rollout (its pods,
          // read after ROLLOUT_POLL_MS) is written at once; the requeues lift the hold after ROLLOUT_HOLD_MS.
          return { outcome: { kind: 'progressing', reason: rollout.reason, message: rollout.message }, status: {}, hold: true, requeueAfterMs: ROLLOUT_POLL_MS };
        }
        return {
          outcome: { kind: 'progressing', reason: rollout.reason, message: rollout.message },
          status: { ...built, phase: 'Pending', message: rollout.message },
          requeueAfterMs: ROLLOUT_POLL_MS,
        };
      }
      case 'failing':
        return {
          outcome: { kind: 'failed', reason: rollout.reason, message: rollout.message },
          status: { ...built, phase: 'Failed', message: rollout.message },
          requeueAfterMs: 5 * ROLLOUT_POLL_MS,
        };
      case 'stalled':
        return { outcome: { kind: 'stalled', reason: rollout.reason, message: rollout.message }, status: { ...built, phase: 'Failed', message: rollout.message } };
    }
  }

  /**
   * The rollout from the Deployment alone while it is young; with its pods once it has been unfinished
   * for ROLLOUT_POLL_MS (they may say why: CrashLoopBackOff, ImagePullBackOff).
   */
  private async rolloutFor(key: string, hash: string, deployment: V1Deployment | undefined, imageRef: string) {
    const bare = rolloutOf(deployment, [], imageRef);
    if (bare.state === 'available' || bare.state === 'stalled' || !deployment) {
      if (bare.state === 'available') this.rollingOutSince.delete(key);
      return bare;
    }
    const now = this.ctx.now().getTime();
    const seen = this.rollingOutSince.get(key);
    if (seen?.hash !== hash) {
      this.rollingOutSince.set(key, { hash, since: now });
      return bare;
    }
    if (now - seen.since < ROLLOUT_POLL_MS) return bare;
    return rolloutOf(deployment, await this.podsOf(deployment), imageRef);
  }

  /** The pods of the function's Deployment. */
  private async podsOf(deployment: V1Deployment): Promise<V1Pod[]> {
    const namespace = deployment.metadata?.namespace ?? '';
    const labels = deployment.spec?.selector.matchLabels ?? {};
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    return selector ? this.ctx.kube.listPods(namespace, selector) : [];
  }

  private async build(
    fn: FunctionResource,
    key: string,
    bucket: string,
    s3Key: string,
  ): Promise<{ kind: 'built'; imageRef: string; finishedAt: string } | { kind: 'waiting'; result: StepResult }> {
    const ctx = this.ctx;
    const namespace = fn.metadata?.namespace ?? '';
    const name = fn.metadata?.name ?? '';
    const buildNs = ctx.settings.buildNamespace;
    const jobName = buildJobName(namespace, name, key);
    const url = functionUrl(ctx, namespace, name);
    // The Job informer synced before any reconcile, so a miss means "not there yet" (or created a moment
    // ago and not yet seen): creation is idempotent by name, so the second case costs one 409, no twin.
    const cached = ctx.caches.jobs.get(jobName, buildNs);
    // A Job this controller deleted to build again may linger in the cache for a moment.
    const job = cached && this.discarded.get(`${namespace}/${name}`) === cached.metadata?.uid ? undefined : cached;
    const requestedAt = fn.metadata?.annotations?.[ANNOTATIONS.requestedAt];
    const requested = !!requestedAt && requestedAt !== fn.status?.lastHandledRequestedAt;

    if (job && requested && jobState(job) !== 'running') {
      // An explicit request (sless.kube5s.ru/requestedAt) builds a finished key again.
      await this.discard(fn, job);
      return { kind: 'waiting', result: { ...building(fn, jobName, buildNs, url), requeueAfterMs: 1_000 } };
    }
    if (!job && fn.status?.failedBuildKey === key && !requested) {
      // Deterministic failure: the same key fails the same way, whether or not its Job is still there (TTL).
      const message = fn.status.message || `the build of key ${key.slice(0, 12)} failed`;
      return { kind: 'waiting', result: { outcome: { kind: 'stalled', reason: 'BuildFailed', message }, status: { phase: 'Failed', message } } };
    }

    if (!job) {
      const cap = ctx.settings.limits?.buildsPerNamespace ?? DEFAULT_BUILDS_PER_NAMESPACE;
      const share = this.reservations.take(ctx.caches.jobs.list(buildNs), namespace, jobName, cap, Date.now());
      if (!share.start) {
        const queued = { outcome: { kind: 'progressing', reason: 'BuildQueued', message: share.message }, status: { phase: 'Building', message: share.message, url } } as const;
        return { kind: 'waiting', result: { ...queued, requeueAfterMs: BUILD_QUEUED_RECHECK_MS } };
      }
      let created: 'created' | 'exists' | 'no-context';
      try {
        created = await this.createBuildJob(s3Key, { namespace, name, buildKey: key });
      } catch (err) {
        this.reservations.release(namespace, jobName);
        throw err;
      }
      if (created === 'no-context') {
        this.reservations.release(namespace, jobName);
        return {
          kind: 'waiting',
          result: {
            outcome: { kind: 'failed', reason: 'ContextMissing', message: `build context s3://${bucket}/${s3Key} is not in the store yet` },
            status: { phase: 'Pending', url },
            requeueAfterMs: 10_000,
          },
        };
      }
      if (created === 'exists' && cached) {
        // The discarded Job is still being deleted: try again in a moment.
        this.reservations.release(namespace, jobName);
        return { kind: 'waiting', result: { ...building(fn, jobName, buildNs, url), requeueAfterMs: 1_000 } };
      }
      this.discarded.delete(`${namespace}/${name}`);
      if (created === 'created') {
        ctx.metrics.builds.inc({ outcome: 'started' });
        this.recordBuild(fn, jobName, { outcome: 'started', startedAt: ctx.now().toISOString() });
        record(ctx, fn, 'Normal', 'BuildStarted', `building ${buildDestination(ctx.settings, { namespace, name, buildKey: key })} in Job ${buildNs}/${jobName}`);
      }
      const started = building(fn, jobName, buildNs, url);
      const cleared = { failedBuildKey: '', ...(requested ? { lastHandledRequestedAt: requestedAt } : {}), ...(fn.status?.failedBuildKey === key ? { buildRetries: 0 } : {}) };
      return { kind: 'waiting', result: { ...started, status: { ...started.status, ...cleared } } };
    }

    const state = jobState(job);
    if (state === 'running') return { kind: 'waiting', result: building(fn, jobName, buildNs, url) };

    const pod = await latestJobPod(ctx.kube, job);
    if (state === 'succeeded') {
      const digest = terminationMessage(pod, BUILD_CONTAINERS.push)?.trim();
      if (digest && DIGEST.test(digest)) {
        const imageRef = `${buildDestination(ctx.settings, { namespace, name, buildKey: key })}@${digest}`;
        const finishedAt = toIso(job.status?.completionTime) ?? ctx.now().toISOString();
        ctx.metrics.builds.inc({ outcome: 'succeeded' });
        observeBuild(ctx, namespace, name, job, 'succeeded');
        // Only reached while status.imageRef lacks this build's tag, i.e. before the status says so.
        this.recordBuild(fn, jobName, { outcome: 'succeeded', imageRef, ...jobTimes(job, ctx.now()) });
        return { kind: 'built', imageRef, finishedAt };
      }
      return this.failed(fn, job, `build Job ${buildNs}/${jobName} succeeded but reported no image digest (got "${digest ?? ''}"); delete the Job to build again`);
    }
    const failure = classifyBuildFailure(job, pod);
    if (failure.kind === 'infrastructure') return this.retryLater(fn, job, failure.why, url);
    const tail = await podOutput(ctx.kube, pod, failedContainer(pod) ?? BUILD_CONTAINERS.kaniko, LOG_TAIL_BYTES);
    if (fn.status?.phase !== 'Failed') observeBuild(ctx, namespace, name, job, 'failed');
    const message = `build failed (Job ${buildNs}/${jobName}, ${jobFailureReason(job)}: ${failure.why})${tail ? `:\n${tail}` : ''}`;
    const failed = this.failed(fn, job, message);
    return { kind: 'waiting', result: { ...failed.result, status: { ...failed.result.status, failedBuildKey: key, buildRetries: 0 } } };
  }

  /**
   * A build that failed for the infrastructure's reasons: built again (the Job deleted, then created
   * anew) after a capped exponential backoff; meanwhile Ready=False and Reconciling=True (kstatus: still
   * progressing, with retries).
   */
  private async retryLater(fn: FunctionResource, job: V1Job, why: string, url: string): Promise<{ kind: 'waiting'; result: StepResult }> {
    const ctx = this.ctx;
    const retries = fn.status?.buildRetries ?? 0;
    const wait = jobFinishedAt(job) + buildRetryDelayMs(retries + 1) - ctx.now().getTime();
    const message = `the build could not run (${why}); retry ${retries + 1} ${wait > 0 ? `in ${Math.ceil(wait / 1000)} s` : 'now'}`;
    if (wait > 0) {
      return { kind: 'waiting', result: { outcome: { kind: 'failed', reason: 'BuildRetrying', message }, status: { phase: 'Building', message, url }, requeueAfterMs: wait } };
    }
    record(ctx, fn, 'Warning', 'BuildRetrying', message);
    await this.discard(fn, job);
    return {
      kind: 'waiting',
      result: { outcome: { kind: 'progressing', reason: 'BuildRetrying', message }, status: { phase: 'Building', message, url, buildRetries: retries + 1 }, requeueAfterMs: 1_000 },
    };
  }

  /** Deletes a finished build Job so that the next reconcile creates it again. */
  private async discard(fn: FunctionResource, job: V1Job): Promise<void> {
    this.discarded.set(`${fn.metadata?.namespace ?? ''}/${fn.metadata?.name ?? ''}`, job.metadata?.uid ?? '');
    await this.ctx.kube.delete({ apiVersion: 'batch/v1', kind: 'Job', metadata: job.metadata ?? {} });
  }

  private failed(fn: FunctionResource, job: V1Job, message: string): { kind: 'waiting'; result: StepResult } {
    const ctx = this.ctx;
    // The transition into Failed with this message: the status does not say so yet.
    if (fn.status?.phase !== 'Failed' || fn.status.message !== message) {
      ctx.metrics.builds.inc({ outcome: 'failed' });
      record(ctx, fn, 'Warning', 'BuildFailed', message);
      this.recordBuild(fn, job.metadata?.name ?? '', { outcome: 'failed', message, ...jobTimes(job, ctx.now()) });
    }
    // Stalled: the same build key would fail the same way; a code change (new key) or deleting the Job retries.
    return { kind: 'waiting', result: { outcome: { kind: 'stalled', reason: 'BuildFailed', message }, status: { phase: 'Failed', message } } };
  }

  /** One BuildLog record per build Job and outcome (see recordedBuilds). */
  private recordBuild(fn: FunctionResource, jobName: string, entry: Omit<BuildRecord, 'namespace' | 'function' | 'codeHash'>): void {
    const log = this.ctx.buildLog;
    if (!log) return;
    const key = `${fn.metadata?.namespace ?? ''}/${fn.metadata?.name ?? ''}`;
    const mark = `${jobName} ${entry.outcome}`;
    if (this.recordedBuilds.get(key) === mark) return;
    this.recordedBuilds.set(key, mark);
    log.record({ namespace: fn.metadata?.namespace ?? '', function: fn.metadata?.name ?? '', codeHash: fn.spec?.codeHash ?? '', ...entry });
  }

  /** Creates the build Job of `s3Key`'s context, or answers that the context is not stored yet. */
  private async createBuildJob(s3Key: string, input: { namespace: string; name: string; buildKey: string }): Promise<'created' | 'exists' | 'no-context'> {
    if (!(await this.contextExists(s3Key))) return 'no-context';
    // The build reads its context through this URL and holds no S3 key (README, security notes).
    const contextUrl = await this.ctx.store.readUrl(s3Key, buildContextUrlTtlSec(this.ctx.settings));
    return this.ctx.kube.createIfAbsent(buildJob(this.ctx.settings, { ...input, contextUrl, kind: buildKindOfContextKey(s3Key, this.ctx.settings.build) }));
  }

  private async contextExists(s3Key: string): Promise<boolean> {
    try {
      return await this.ctx.store.has(s3Key);
    } catch (err) {
      const what = isArtifactStoreError(err) ? err.message : String(err);
      throw new Error(`cannot check the build context ${s3Key} in ${this.ctx.store.location}: ${what}`, { cause: err });
    }
  }

  /**
   * Applies what changed; answers the applied-hash wanted and, when it applied the Deployment now, the
   * server's answer. `justBuilt`: the caller records the one Event.
   */
  private async deploy(fn: FunctionResource, key: string, imageRef: string, justBuilt: boolean): Promise<{ hash: string; applied?: V1Deployment }> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const deployment = stamped(functionDeployment(ctx.settings, fn, { imageRef, httpEnabled: httpEnabled(ctx, namespace, name) }));
    const service = stamped(functionService(fn));
    const liveDeployment = ctx.caches.deployments.get(name, namespace);
    const hash = deployment.metadata?.annotations?.[ANNOTATIONS.appliedHash] ?? '';
    const last = this.applied.get(key);
    if (last?.hash === hash && last.before === liveDeployment?.metadata?.resourceVersion) return { hash }; // the cache lags behind our apply
    const deploymentCurrent = upToDate(deployment, liveDeployment);
    // Unchanged and untouched (the Deployment/Service watch enqueues this function on any change): no request.
    if (deploymentCurrent && upToDate(service, ctx.caches.services.get(name, namespace))) return { hash };
    const applied = deploymentCurrent ? undefined : await ctx.kube.apply(deployment);
    const liveService = ctx.caches.services.get(name, namespace);
    const serviceHash = service.metadata?.annotations?.[ANNOTATIONS.appliedHash] ?? '';
    const lastService = this.appliedServices.get(key);
    // As for the Deployment: a Service applied a moment ago may not be in the cache yet.
    if (!upToDate(service, liveService) && !(lastService?.hash === serviceHash && lastService.before === liveService?.metadata?.resourceVersion)) {
      await ctx.kube.apply(service);
      this.appliedServices.set(key, { hash: serviceHash, before: liveService?.metadata?.resourceVersion });
    }
    const newForm = liveDeployment?.metadata?.annotations?.[ANNOTATIONS.appliedHash] !== deployment.metadata?.annotations?.[ANNOTATIONS.appliedHash];
    if (!deploymentCurrent && justBuilt) {
      // recorded as BuildSucceeded by the caller
    } else if (!deploymentCurrent && (newForm || fn.status?.imageRef !== imageRef)) {
      record(ctx, fn, 'Normal', 'Deployed', `Deployment ${namespace}/${name} runs ${imageRef}`);
    } else if (!deploymentCurrent) {
      ctx.logger.info(`DriftRepaired: Function ${namespace}/${name}: its Deployment was changed or removed; applied again`, { reason: 'DriftRepaired' });
    }
    if (!deploymentCurrent) this.applied.set(key, { hash, before: liveDeployment?.metadata?.resourceVersion });
    return applied ? { hash, applied } : { hash };
  }

  /** Deletion: remove this function's build Jobs and its build context unless another Function uses it. */
  private async finalize(fn: FunctionResource): Promise<void> {
    const ctx = this.ctx;
    const namespace = fn.metadata?.namespace ?? '';
    const name = fn.metadata?.name ?? '';
    if (!fn.metadata?.finalizers?.includes(FINALIZER)) return;
    const builds = ctx.caches.jobs
      .list(ctx.settings.buildNamespace)
      .filter((j) => j.metadata?.labels?.[LABELS.function] === name && j.metadata.labels[LABELS.functionNamespace] === namespace);
    for (const job of builds) await ctx.kube.delete({ apiVersion: 'batch/v1', kind: 'Job', metadata: job.metadata ?? {} });
    const s3Key = fn.spec?.s3Key;
    if (s3Key) {
      const shared = ctx.caches.functions
        .list()
        .some((o) => o.spec?.s3Key === s3Key && !(o.metadata?.namespace === namespace && o.metadata.name === name) && !o.metadata?.deletionTimestamp);
      if (!shared) await ctx.store.delete(s3Key);
    }
    const removed = await ctx.kube.mergePatch(fn, {
      metadata: { finalizers: (fn.metadata.finalizers ?? []).filter((f) => f !== FINALIZER), resourceVersion: fn.metadata.resourceVersion },
    });
    if (removed === 'missing') return;
    record(ctx, fn, 'Normal', 'Finalized', `removed ${builds.length} build Job(s)${s3Key ? ' and the unreferenced build context' : ''}`);
  }
}

function building(fn: FunctionResource, jobName: string, buildNs: string, url: string): StepResult {
  const message = `building the image in Job ${buildNs}/${jobName}${fn.status?.imageRef ? `; ${fn.status.imageRef} keeps serving` : ''}`;
  return { outcome: { kind: 'progressing', reason: 'Building', message }, status: { phase: 'Building', message, url } };
}

/** When a build Job started and ended as the Job saw it (completion, or its last condition when it failed). */
function jobSpan(job: V1Job): { start: Date; end: Date } | undefined {
  const start = job.status?.startTime ?? job.metadata?.creationTimestamp;
  const end = job.status?.completionTime ?? (job.status?.conditions ?? []).map((c) => c.lastTransitionTime).filter(Boolean).pop();
  if (!start || !end) return undefined;
  return { start: new Date(start), end: new Date(end) };
}

/** Build time as the Job saw it. */
function observeBuild(ctx: ReconcileContext, namespace: string, name: string, job: V1Job, outcome: 'succeeded' | 'failed'): void {
  const span = jobSpan(job);
  if (!span) return;
  const seconds = (span.end.getTime() - span.start.getTime()) / 1000;
  if (seconds >= 0) ctx.metrics.buildDuration.observe({ namespace, function: name, outcome }, seconds);
}

/** The times of a finished build for its BuildLog record (now when the Job does not tell). */
function jobTimes(job: V1Job, now: Date): Pick<BuildRecord, 'startedAt' | 'finishedAt' | 'durationMs'> {
  const span = jobSpan(job);
  if (!span) return { startedAt: toIso(job.metadata?.creationTimestamp) ?? now.toISOString(), finishedAt: now.toISOString() };
  return { startedAt: span.start.toISOString(), finishedAt: span.end.toISOString(), durationMs: Math.max(0, span.end.getTime() - span.start.getTime()) };
}

function toIso(t: Date | string | undefined): string | undefined {
  if (!t) return undefined;
  return new Date(t).toISOString();
}

