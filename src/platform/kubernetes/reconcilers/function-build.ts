// A Function's image build: one Job per build key in the build namespace (objects/build-job.ts), adopted
// by name after a restart, started only within the namespace's share (build-share.ts), its outcome read
// from the Job and its pod (digest, failure class, log tail) and recorded once in the BuildLog; failures
// of the infrastructure are retried with backoff, deterministic ones stall until a new key or a request.
import type { V1Job } from '@kubernetes/client-node';
import { isArtifactStoreError } from '../../../build/artifact-store.ts';
import { buildKindOfContextKey } from '../../../build/build-kind.ts';
import type { BuildRecord } from '../../../store/types.ts';
import { BUILD_CONTAINERS, buildContextUrlTtlSec, buildDestination, buildJob, buildJobName } from '../objects/build-job.ts';
import { ANNOTATIONS } from '../objects/meta.ts';
import type { FunctionResource } from '../objects/resources.ts';
import { BUILD_QUEUED_RECHECK_MS, BuildReservations, BuildWaiters, buildsInCache } from './build-share.ts';
import { buildRetryDelayMs, classifyBuildFailure, jobFinishedAt } from './build-failure.ts';
import { record, splitKey, type ReconcileContext } from './reconcile-context.ts';
import type { StepResult } from './function-step.ts';
import { jobState } from '../objects/job-state.ts';
import { failedContainer, jobFailureReason, latestJobPod, podOutput, succeededPodMessage, terminationMessage } from './job-status.ts';

const LOG_TAIL_BYTES = 4096;
const DIGEST = /^sha256:[0-9a-f]{64}$/;

export class FunctionBuilds {
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
  /** Functions queued for their namespace's share, woken one per slot that frees. */
  private readonly waiters = new BuildWaiters();

  constructor(private readonly ctx: ReconcileContext) {}

  /** The Function `namespace/name` is gone. */
  forget(key: string): void {
    this.recordedBuilds.delete(key);
    this.discarded.delete(key);
    this.notWaiting(key);
  }

  /** `key` needs no build now (its image is current): it waits for no slot. */
  notWaiting(key: string): void {
    this.waiters.done(splitKey(key).namespace, key);
  }

  /** A build slot of `namespace` freed (a build ended or its Job went away): the Function to look now, if one waits. */
  slotFreed(namespace: string): string | undefined {
    return this.waiters.wake(namespace);
  }

  /**
   * The image of build key `key`: built already (its Job succeeded), or what the Function waits for (a
   * build started, queued for its namespace's share, running, failed, retried).
   */
  async build(
    fn: FunctionResource,
    key: string,
    bucket: string,
    s3Key: string,
    url: string,
  ): Promise<{ kind: 'built'; imageRef: string; finishedAt: string } | { kind: 'waiting'; result: StepResult }> {
    const ctx = this.ctx;
    const namespace = fn.metadata?.namespace ?? '';
    const name = fn.metadata?.name ?? '';
    const buildNs = ctx.settings.buildNamespace;
    const jobName = buildJobName(namespace, name, key);
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

    const fnKey = `${namespace}/${name}`;
    if (job) {
      this.waiters.done(namespace, fnKey);
      this.reservations.release(namespace, jobName);
    } else if (this.reservations.startedUnseen(namespace, jobName, Date.now())) {
      // Created by this controller a moment ago; its watch event has not arrived (a loaded API server).
      return { kind: 'waiting', result: { ...building(fn, jobName, buildNs, url), requeueAfterMs: 1_000 } };
    } else {
      const cap = ctx.settings.limits.buildsPerNamespace;
      const share = this.reservations.take(buildsInCache(ctx.caches.jobs, buildNs, namespace), namespace, jobName, cap, Date.now());
      if (!share.start) {
        this.waiters.wait(namespace, fnKey);
        const queued = { outcome: { kind: 'progressing', reason: 'BuildQueued', message: share.message }, status: { phase: 'Building', message: share.message, url } } as const;
        return { kind: 'waiting', result: { ...queued, requeueAfterMs: BUILD_QUEUED_RECHECK_MS } };
      }
      this.waiters.done(namespace, fnKey);
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
    if (state === 'running') {
      // Its pod may have Succeeded already (the image pushed): roll out now, not when the Job says Complete.
      const digest = succeededPodMessage(job, ctx.caches.buildPods, BUILD_CONTAINERS.push)?.trim();
      if (digest && DIGEST.test(digest)) return this.succeeded(fn, job, key, digest);
      return { kind: 'waiting', result: building(fn, jobName, buildNs, url) };
    }

    const pod = await latestJobPod(ctx.kube, job, ctx.caches.buildPods);
    if (state === 'succeeded') {
      const digest = terminationMessage(pod, BUILD_CONTAINERS.push)?.trim();
      if (digest && DIGEST.test(digest)) return this.succeeded(fn, job, key, digest);
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

  /** The build pushed `digest`: the image to roll out. Only reached while status.imageRef lacks this build's tag, i.e. before the status says so. */
  private succeeded(fn: FunctionResource, job: V1Job, key: string, digest: string): { kind: 'built'; imageRef: string; finishedAt: string } {
    const ctx = this.ctx;
    const namespace = fn.metadata?.namespace ?? '';
    const name = fn.metadata?.name ?? '';
    const imageRef = `${buildDestination(ctx.settings, { namespace, name, buildKey: key })}@${digest}`;
    const now = ctx.now();
    const finishedAt = toIso(job.status?.completionTime) ?? now.toISOString();
    ctx.metrics.builds.inc({ outcome: 'succeeded' });
    observeBuild(ctx, namespace, name, job, 'succeeded', now);
    this.recordBuild(fn, job.metadata?.name ?? '', { outcome: 'succeeded', imageRef, ...jobTimes(job, now) });
    return { kind: 'built', imageRef, finishedAt };
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
    this.reservations.release(fn.metadata?.namespace ?? '', job.metadata?.name ?? '');
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
    // The build reads its context through this URL and holds no S3 key (docs/security.md, Builds).
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
}

function building(fn: FunctionResource, jobName: string, buildNs: string, url: string): StepResult {
  const message = `building the image in Job ${buildNs}/${jobName}${fn.status?.imageRef ? `; ${fn.status.imageRef} keeps serving` : ''}`;
  return { outcome: { kind: 'progressing', reason: 'Building', message }, status: { phase: 'Building', message, url } };
}

/**
 * When a build Job started and ended as the Job saw it (completion, or its last condition when it failed);
 * `now` as the end of one whose pod succeeded before the Job said Complete.
 */
function jobSpan(job: V1Job, now?: Date): { start: Date; end: Date } | undefined {
  const start = job.status?.startTime ?? job.metadata?.creationTimestamp;
  const end = job.status?.completionTime ?? (job.status?.conditions ?? []).map((c) => c.lastTransitionTime).filter(Boolean).pop() ?? now;
  if (!start || !end) return undefined;
  return { start: new Date(start), end: new Date(end) };
}

/** Build time as the Job saw it. */
function observeBuild(ctx: ReconcileContext, namespace: string, name: string, job: V1Job, outcome: 'succeeded' | 'failed', now?: Date): void {
  const span = jobSpan(job, now);
  if (!span) return;
  const seconds = (span.end.getTime() - span.start.getTime()) / 1000;
  if (seconds >= 0) ctx.metrics.buildDuration.observe({ namespace, function: name, outcome }, seconds);
}

/** The times of a finished build for its BuildLog record (now when the Job does not tell). */
function jobTimes(job: V1Job, now: Date): Pick<BuildRecord, 'startedAt' | 'finishedAt' | 'durationMs'> {
  const span = jobSpan(job, now);
  if (!span) return { startedAt: toIso(job.metadata?.creationTimestamp) ?? now.toISOString(), finishedAt: now.toISOString() };
  return { startedAt: span.start.toISOString(), finishedAt: span.end.toISOString(), durationMs: Math.max(0, span.end.getTime() - span.start.getTime()) };
}

function toIso(t: Date | string | undefined): string | undefined {
  if (!t) return undefined;
  return new Date(t).toISOString();
}
