// Function: build when the build key (code_hash + runtime + base image) has no image yet (function-build.ts:
// Jobs in the build namespace, named from the build key, so a restarted controller adopts a running build
// instead of starting a second one), then run the image as a Deployment + Service. A failed build leaves
// the previous Deployment serving.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { buildKey, imageTag, tagOf } from '../objects/build-key.ts';
import { functionDeployment, functionService } from '../objects/function-workload.ts';
import { ANNOTATIONS, FINALIZER, LABELS } from '../objects/meta.ts';
import type { FunctionReason } from '../../reasons.ts';
import type { FunctionResource, FunctionStatus } from '../objects/resources.ts';
import { envProblem, httpEnabledFrom } from '../records.ts';
import { select } from '../api-client/cache-index.ts';
import type { HandlerResult } from '../api-client/work-queue.ts';
import { record, splitKey, type ReconcileContext } from './reconcile-context.ts';
import { FunctionBuilds } from './function-build.ts';
import type { StepResult } from './function-step.ts';
import { rolloutOf } from './rollout.ts';
import { reconcileObject, type Reconciler } from './reconcile-object.ts';
import { liveWorkloadOf, scaleOfSpec, workloadReplicas } from '../scaling/workload-replicas.ts';
import type { ExtraCondition } from './conditions.ts';
import { functionAtRevision, liveVersionOf, pinOf, revisionsOf } from '../function-revisions.ts';
import { missingPinMessage, pinnedMessage, recordLive, type Pin } from '../../revisions.ts';

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

export function functionUrl(ctx: Pick<ReconcileContext, 'settings'>, namespace: string, name: string): string {
  return `${(ctx.settings.publicBaseUrl ?? '').replace(/\/+$/, '')}/fn/${namespace}/${name}`;
}

/** Whether the function's http Trigger(s) allow serving (the one rule: none, or any enabled; records.ts). */
export function httpEnabled(ctx: Pick<ReconcileContext, 'caches'>, namespace: string, name: string): boolean {
  return httpEnabledFrom(select(ctx.caches.triggers, namespace, 'functionRef', `${namespace}/${name}`), name);
}

/** Whether the function has an enabled queue Trigger: it then runs with http off too (docs/queues.md). */
export function hasQueueTriggers(ctx: Pick<ReconcileContext, 'caches'>, namespace: string, name: string): boolean {
  return select(ctx.caches.triggers, namespace, 'functionRef', `${namespace}/${name}`).some((t) => t.spec?.type === 'queue' && t.spec.enabled !== false);
}

export function functionBuildKey(ctx: Pick<ReconcileContext, 'baseImageOf'>, fn: FunctionResource): string | undefined {
  const spec = fn.spec;
  // A Function of the old system has its context in S3 but no codeHash: the object's address stands in.
  const codeHash = spec?.codeHash ?? (spec?.s3Key ? `s3:${spec.s3Bucket ?? ''}/${spec.s3Key}` : undefined);
  if (!spec || !codeHash) return undefined;
  return buildKey({ codeHash, runtime: spec.runtime, baseImage: ctx.baseImageOf(spec.runtime) });
}

export class FunctionReconciler implements Reconciler<FunctionResource, FunctionStatus, FunctionReason> {
  readonly kind = 'Function';
  private readonly builds: FunctionBuilds;

  /** When this process first saw the rollout of each applied form (hash) unfinished; gone once it is available. */
  private readonly rollingOutSince = new Map<string, { hash: string; since: number }>();

  /** A finished build whose image the status does not name yet (see StepResult.hold), per function. */
  private readonly built = new Map<string, { buildKey: string; imageRef: string; finishedAt: string; seenAt: number }>();

  constructor(private readonly ctx: ReconcileContext) {
    this.builds = new FunctionBuilds(ctx);
  }

  /** A build slot of `namespace` freed: the Function whose queued build should look now, if one waits. */
  buildSlotFreed(namespace: string): string | undefined {
    return this.builds.slotFreed(namespace);
  }

  reconcile(key: string): Promise<HandlerResult | void> {
    return reconcileObject(this.ctx, this, key);
  }

  get(namespace: string, name: string): FunctionResource | undefined {
    return this.ctx.caches.functions.get(name, namespace);
  }

  gone(key: string): void {
    const { namespace, name } = splitKey(key);
    // Its Deployment and Service share its name.
    this.ctx.owned.forget(namespace, name);
    this.rollingOutSince.delete(key);
    this.builds.forget(key);
    this.built.delete(key);
  }

  wantsFinalizer(): boolean {
    return true;
  }

  retryReason(): FunctionReason {
    return 'ReconcileError';
  }

  async steps(fn: FunctionResource, key: string): Promise<StepResult> {
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

    const pin = pinOf(fn);
    if (typeof pin === 'string') return { outcome: { kind: 'stalled', reason: 'InvalidPin', message: pin }, status: { phase: 'Failed', message: pin, url } };
    if (pin) return this.pinnedSteps(fn, key, pin, bk, url);

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
        // The Service first: kube-proxy programs a new Service a moment (seconds, under load) after it is
        // made, and a call to its address before that is sent wherever the node routes it (a gateway answered
        // one on the real test node: an empty 404). Made while the build runs, it is routable when Ready.
        if (!imageRef) await this.applyService(fn);
        const build = await this.builds.build(fn, bk, ctx.settings.s3.bucket, spec.s3Key, functionUrl(ctx, fn.metadata?.namespace ?? '', fn.metadata?.name ?? ''));
        if (build.kind !== 'built') return build.result;
        imageRef = build.imageRef;
        lastBuiltAt = build.finishedAt;
        justBuilt = true;
      }
    } else {
      this.builds.notWaiting(key);
    }
    if (!imageRef) throw new Error('unreachable: no image after a finished build');

    const { hash, applied } = await this.deploy(fn, key, imageRef, justBuilt);
    // Replicas moved by the autoscaler (or a wake) alone are no rollout: a function already Ready on this
    // image stays Ready while its pods come and go, so scaling writes no status beyond status.replicas.
    const scalingOnly = !applied && !unreported && fn.status?.imageRef === imageRef && fn.status.phase === 'Ready';
    // One Event for "built and deployed" (the status says the rest): until the status names this image, the
    // finished Job is seen again, so a failed deploy above records it on the next attempt.
    if (justBuilt) record(ctx, fn, 'Normal', 'BuildSucceeded', `built ${imageRef}; Deployment ${namespace}/${name} runs it`);
    // The build is done: forget its failures; what is left is whether the new pods serve.
    const built = { imageRef, lastBuiltAt, url, failedBuildKey: '', buildRetries: 0 };
    // From the watch (its events enqueue this Function as the rollout moves), not a GET per reconcile. Until
    // the cache shows the form just applied, the apply's answer stands in for it; neither → still rolling out.
    const live = ctx.caches.deployments.get(name, namespace);
    const deployment = live?.metadata?.annotations?.[ANNOTATIONS.appliedHash] === hash ? live : applied;
    const rollout = await this.rolloutFor(key, hash, deployment, imageRef, scalingOnly);
    // What serves, from the Deployment the watch shows (written only when it changes: per scale, not per call).
    const replicas = { desired: deployment?.spec?.replicas ?? 0, ready: deployment?.status?.availableReplicas ?? 0 };
    switch (rollout.state) {
      case 'available': {
        // The spec's version serves: it is the live revision (revisions.ts).
        const revisions = recordLive(revisionsOf(fn), liveVersionOf(fn, imageRef), ctx.now().toISOString());
        return { outcome: { kind: 'ready', reason: 'Deployed', message: rollout.message }, status: { ...built, replicas, phase: 'Ready', message: '', revisions } };
      }
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
          status: { ...built, replicas, phase: 'Pending', message: rollout.message },
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

  /** Pinned=True while a rollback pins the function (also on a run that failed), False when the pin is unusable. */
  conditions(fn: FunctionResource): readonly ExtraCondition[] {
    const pin = pinOf(fn);
    if (pin === undefined) return [];
    if (typeof pin === 'string') return [{ type: 'Pinned', status: 'False', reason: 'InvalidPin', message: pin }];
    const rev = revisionsOf(fn).find((r) => r.revision === pin.revision);
    if (!rev) return [{ type: 'Pinned', status: 'False', reason: 'RevisionMissing', message: missingPinMessage(pin) }];
    return [{ type: 'Pinned', status: 'True', reason: 'RolledBack', message: pinnedMessage(rev, !!fn.spec?.source) }];
  }

  /**
   * A pinned Function (docs/rollback.md): its Deployment runs the pinned revision's image and settings,
   * with no build; the spec's own code still builds (so the fix is ready: status.imageRef names it) but
   * goes live only once the pin is removed. Ready while the revision serves and no build is under way.
   */
  private async pinnedSteps(fn: FunctionResource, key: string, pin: Pin, bk: string, url: string): Promise<StepResult> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const rev = revisionsOf(fn).find((r) => r.revision === pin.revision);
    if (!rev) {
      const message = missingPinMessage(pin);
      return { outcome: { kind: 'stalled', reason: 'RevisionMissing', message }, status: { phase: 'Failed', message, url } };
    }
    const { hash, applied } = await this.deploy(functionAtRevision(fn, rev), key, rev.image, false);
    const live = ctx.caches.deployments.get(name, namespace);
    const rollout = await this.rolloutFor(key, hash, live?.metadata?.annotations?.[ANNOTATIONS.appliedHash] === hash ? live : applied, rev.image, false);
    let head: StepResult | undefined;
    let built = {};
    if (tagOf(fn.status?.imageRef) !== imageTag(bk) && fn.spec?.s3Key) {
      const build = await this.builds.build(fn, bk, ctx.settings.s3.bucket, fn.spec.s3Key, url);
      if (build.kind === 'built') {
        built = { imageRef: build.imageRef, lastBuiltAt: build.finishedAt, failedBuildKey: '', buildRetries: 0 };
        record(ctx, fn, 'Normal', 'BuildSucceeded', `built ${build.imageRef}; not live while pinned to revision ${rev.revision}`);
      } else head = build.result;
    } else {
      this.builds.notWaiting(key);
    }
    const message = pinnedMessage(rev, !!fn.spec?.source);
    switch (rollout.state) {
      case 'available': {
        const revisions = recordLive(revisionsOf(fn), rev, ctx.now().toISOString());
        // The spec's build under way or failed says so (the revision serves all the same).
        if (head) return { ...head, status: { ...head.status, revisions } };
        return { outcome: { kind: 'ready', reason: 'Pinned', message }, status: { ...built, phase: 'Ready', message, revisions, url } };
      }
      case 'progressing':
        return {
          outcome: { kind: 'progressing', reason: rollout.reason, message: `rolling back to revision ${rev.revision}: ${rollout.message}` },
          status: { ...built, phase: 'Pending', message: rollout.message, url },
          requeueAfterMs: ROLLOUT_POLL_MS,
        };
      case 'failing':
        return {
          outcome: { kind: 'failed', reason: rollout.reason, message: rollout.message },
          status: { ...built, phase: 'Failed', message: rollout.message, url },
          requeueAfterMs: 5 * ROLLOUT_POLL_MS,
        };
      case 'stalled':
        return { outcome: { kind: 'stalled', reason: rollout.reason, message: rollout.message }, status: { ...built, phase: 'Failed', message: rollout.message, url } };
    }
  }

  /**
   * The rollout from the Deployment alone while it is young; with its pods once it has been unfinished
   * for ROLLOUT_POLL_MS (they may say why: CrashLoopBackOff, ImagePullBackOff).
   */
  private async rolloutFor(key: string, hash: string, deployment: V1Deployment | undefined, imageRef: string, scalingOnly: boolean) {
    const bare = rolloutOf(deployment, [], imageRef, { scalingOnly });
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
    return rolloutOf(deployment, await this.podsOf(deployment), imageRef, { scalingOnly });
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

  /**
   * Applies what changed; answers the applied-hash wanted and, when it applied the Deployment now, the
   * server's answer. `justBuilt`: the caller records the one Event.
   */
  private async deploy(fn: FunctionResource, key: string, imageRef: string, justBuilt: boolean): Promise<{ hash: string; applied?: V1Deployment }> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const liveDeployment = ctx.caches.deployments.get(name, namespace);
    // Unchanged and untouched (the Deployment/Service watch enqueues this function on any change): no request.
    const enabled = httpEnabled(ctx, namespace, name);
    // The autoscaler's count stands unless the bounds, disabling or queue Triggers force another (workload-replicas.ts).
    const scale = scaleOfSpec(fn.spec, ctx.settings.limits.maxReplicas);
    const replicas = workloadReplicas(enabled, scale, liveWorkloadOf(liveDeployment), hasQueueTriggers(ctx, namespace, name));
    const deployment = await ctx.owned.ensure(functionDeployment(ctx.settings, fn, { imageRef, httpEnabled: enabled, replicas }), liveDeployment);
    await this.applyService(fn);
    if (!deployment.applied) return { hash: deployment.hash };
    const newForm = liveDeployment?.metadata?.annotations?.[ANNOTATIONS.appliedHash] !== deployment.hash;
    if (justBuilt) {
      // recorded as BuildSucceeded by the caller
    } else if (newForm || fn.status?.imageRef !== imageRef) {
      record(ctx, fn, 'Normal', 'Deployed', `Deployment ${namespace}/${name} runs ${imageRef}`);
    } else {
      ctx.logger.info(`DriftRepaired: Function ${namespace}/${name}: its Deployment was changed or removed; applied again`, { reason: 'DriftRepaired' });
    }
    return { hash: deployment.hash, applied: deployment.answer };
  }

  /** Applies the function's Service unless the cache (or this replica's last apply, which it may lag) has it as wanted. */
  private async applyService(fn: FunctionResource): Promise<void> {
    await this.ctx.owned.ensure(functionService(fn), this.ctx.caches.services.get(fn.metadata?.name ?? '', fn.metadata?.namespace ?? ''));
  }

  /** Deletion: remove this function's build Jobs and its build context unless another Function uses it. */
  async finalize(fn: FunctionResource): Promise<void> {
    const ctx = this.ctx;
    const namespace = fn.metadata?.namespace ?? '';
    const name = fn.metadata?.name ?? '';
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
      metadata: { finalizers: (fn.metadata?.finalizers ?? []).filter((f) => f !== FINALIZER), resourceVersion: fn.metadata?.resourceVersion },
    });
    if (removed === 'missing') return;
    record(ctx, fn, 'Normal', 'Finalized', `removed ${builds.length} build Job(s)${s3Key ? ' and the unreferenced build context' : ''}`);
  }
}
