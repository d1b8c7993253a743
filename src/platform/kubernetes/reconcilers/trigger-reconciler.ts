// Trigger: http → whether the function serves (the Function reconciler scales its Deployment) and the URL;
// cron → a CronJob running the function's own image in job mode, suspended while disabled; queue → a
// consumer in this leader (queue-trigger-step.ts).
import type { V1CronJob } from '@kubernetes/client-node';
import { cronJobName, triggerCronJob } from '../objects/job-workloads.ts';
import { LABELS } from '../objects/meta.ts';
import { splitKey, type ReconcileContext } from './reconcile-context.ts';
import { functionUrl } from './function-reconciler.ts';
import { reconcileObject, type Reconciled, type Reconciler } from './reconcile-object.ts';
import { queueTriggerSteps } from './queue-trigger-step.ts';
import type { HandlerResult } from '../api-client/work-queue.ts';
import type { TriggerReason } from '../../reasons.ts';
import type { TriggerResource, TriggerStatus } from '../objects/resources.ts';

export class TriggerReconciler implements Reconciler<TriggerResource, TriggerStatus, TriggerReason> {
  readonly kind = 'Trigger';
  constructor(private readonly ctx: ReconcileContext) {}

  reconcile(key: string): Promise<HandlerResult | void> {
    return reconcileObject(this.ctx, this, key);
  }

  get(namespace: string, name: string): TriggerResource | undefined {
    return this.ctx.caches.triggers.get(name, namespace);
  }

  /** A CronJob is owned by the Function, so it outlives a deleted Trigger unless removed here. */
  async gone(key: string): Promise<void> {
    const { namespace, name } = splitKey(key);
    await this.ctx.queues?.remove(key);
    await this.removeCronJob(namespace, name);
  }

  retryReason(): TriggerReason {
    return 'ApplyFailed';
  }

  async steps(trigger: TriggerResource, key: string): Promise<Reconciled<TriggerStatus, TriggerReason>> {
    const ctx = this.ctx;
    const { namespace } = splitKey(key);
    const spec = trigger.spec!;
    const enabled = spec.enabled !== false;
    const fn = ctx.caches.functions.get(spec.functionRef, namespace);
    const url = functionUrl(ctx, namespace, spec.functionRef);
    const wait = { kind: 'progressing', reason: 'WaitingForFunction', message: '' } as const;
    if (!fn && young(trigger, ctx.now())) {
      // A repository applies the Function just before its Triggers, but their watch events race:
      // wait for the Function (its event enqueues this Trigger) rather than report a missing one.
      return { outcome: wait, status: {}, hold: true, requeueAfterMs: 5_000 };
    }
    if (!fn) {
      await ctx.queues?.remove(key);
      return { outcome: { kind: 'stalled', reason: 'FunctionNotFound', message: `Function ${namespace}/${spec.functionRef} does not exist` }, status: { active: false } };
    }
    if (spec.type === 'queue') return queueTriggerSteps(ctx, trigger, key, namespace, fn);
    if (spec.type === 'http') {
      return { outcome: { kind: 'ready', reason: enabled ? 'Enabled' : 'Disabled', message: enabled ? `serving ${url}` : 'http calls answer 503' }, status: { active: enabled, url } };
    }
    if (!fn.status?.imageRef) {
      // A new Trigger of a Function building its first image: nothing to report that its missing status
      // (kstatus: in progress) does not say already; the Function's status change enqueues it again. One
      // status write per Trigger instead of two. A failed build is reported.
      if (!trigger.status?.conditions?.length && fn.status?.phase !== 'Failed') return { outcome: wait, status: {}, hold: true };
      return {
        outcome: { kind: 'progressing', reason: 'WaitingForImage', message: `Function ${spec.functionRef} has no image yet${fn.status?.phase === 'Failed' ? ': its build failed' : ''}` },
        status: { active: false },
      };
    }
    const refusal = await ctx.tenants.refusalOf(namespace, fn.spec?.envFromSecrets ?? []);
    if (refusal) return { outcome: { kind: 'stalled', reason: refusal.reason, message: refusal.message }, status: { active: false } };
    const form = triggerCronJob(ctx.settings, fn, trigger, fn.status.imageRef);
    const cached = ctx.caches.cronJobs.get(form.metadata?.name ?? '', namespace);
    // Unchanged and untouched (the CronJob watch enqueues this Trigger on any change): no request.
    const cron = await ctx.owned.ensure<V1CronJob>(form, cached);
    const live = cron.applied ? cron.answer : cached;
    const last = live?.status?.lastScheduleTime ?? trigger.status?.lastScheduleTime;
    return {
      outcome: {
        kind: 'ready',
        reason: enabled ? 'Scheduled' : 'Suspended',
        message: `CronJob ${cronJobName(trigger)} runs "${spec.schedule}"${spec.timezone ? ` (${spec.timezone})` : ''}${enabled ? '' : ', suspended'}`,
      },
      status: { active: enabled, ...(last ? { lastScheduleTime: new Date(last).toISOString() } : {}) },
    };
  }

  private async removeCronJob(namespace: string, triggerName: string): Promise<void> {
    const name = cronJobName({ metadata: { name: triggerName } });
    this.ctx.owned.forget(namespace, name);
    const existing = this.ctx.caches.cronJobs.get(name, namespace);
    if (existing?.metadata?.labels?.[LABELS.trigger] === triggerName) {
      await this.ctx.kube.delete({ apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name, namespace } });
    }
  }
}

function young(obj: TriggerResource, now: Date): boolean {
  const created = obj.metadata?.creationTimestamp;
  return !!created && now.getTime() - new Date(created).getTime() < 5_000;
}
