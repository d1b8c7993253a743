// Trigger: http → whether the function serves (the Function reconciler scales its Deployment) and the URL;
// cron → a CronJob running the function's own image in job mode, suspended while disabled.
import type { V1CronJob } from '@kubernetes/client-node';
import { cronJobName, triggerCronJob } from '../objects/job-workloads.ts';
import { stamped, upToDate } from '../objects/drift.ts';
import { ANNOTATIONS, LABELS } from '../objects/meta.ts';
import type { Outcome } from './conditions.ts';
import { splitKey, type ReconcileContext } from './context.ts';
import { functionUrl } from './function-reconciler.ts';
import { writeStatus } from './status-writer.ts';
import type { HandlerResult } from '../runtime/work-queue.ts';
import type { TriggerResource } from '../objects/resources.ts';
import type { TenantRefusal } from '../tenant-access.ts';

export class TriggerReconciler {
  /** Hash applied per Trigger and the CronJob resourceVersion the cache showed then (see FunctionReconciler.applied). */
  private readonly applied = new Map<string, { hash: string; before: string | undefined }>();

  constructor(private readonly ctx: ReconcileContext) {}

  /** Its CronJob went away: the next reconcile must not trust what it applied before. */
  forgetApplied(key: string): void {
    this.applied.delete(key);
  }

  async reconcile(key: string): Promise<HandlerResult | void> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const trigger = ctx.caches.triggers.get(name, namespace);
    if (!trigger || trigger.metadata?.deletionTimestamp) {
      // A CronJob is owned by the Function, so it outlives a deleted Trigger unless removed here.
      this.applied.delete(key);
      await this.removeCronJob(namespace, name);
      return;
    }
    const spec = trigger.spec;
    if (!spec) return;
    const enabled = spec.enabled !== false;
    const fn = ctx.caches.functions.get(spec.functionRef, namespace);
    const url = functionUrl(ctx, namespace, spec.functionRef);

    let outcome: Outcome;
    let fields: Record<string, unknown>;
    let refusal: TenantRefusal | undefined;
    try {
      if (!fn && young(trigger, ctx.now())) {
        // A repository applies the Function just before its Triggers, but their watch events race:
        // wait for the Function (its event enqueues this Trigger) rather than report a missing one.
        return { requeueAfterMs: 5_000 };
      } else if (!fn) {
        outcome = { kind: 'stalled', reason: 'FunctionNotFound', message: `Function ${namespace}/${spec.functionRef} does not exist` };
        fields = { active: false };
      } else if (spec.type === 'http') {
        outcome = { kind: 'ready', reason: enabled ? 'Enabled' : 'Disabled', message: enabled ? `serving ${url}` : 'http calls answer 503' };
        fields = { active: enabled, url };
      } else if (!fn.status?.imageRef) {
        // A new Trigger of a Function building its first image: nothing to report that its missing status
        // (kstatus: in progress) does not say already; the Function's status change enqueues it again. One
        // status write per Trigger instead of two. A failed build is reported.
        if (!trigger.status?.conditions?.length && fn.status?.phase !== 'Failed') return;
        outcome = { kind: 'progressing', reason: 'WaitingForImage', message: `Function ${spec.functionRef} has no image yet${fn.status?.phase === 'Failed' ? ': its build failed' : ''}` };
        fields = { active: false };
      } else if ((refusal = await ctx.tenants.refusalOf(namespace, fn.spec?.envFromSecrets ?? []))) {
        outcome = { kind: 'stalled', reason: refusal.reason, message: refusal.message };
        fields = { active: false };
      } else {
        const desired = stamped(triggerCronJob(ctx.settings, fn, trigger, fn.status.imageRef));
        const cronName = desired.metadata?.name ?? '';
        const hash = desired.metadata?.annotations?.[ANNOTATIONS.appliedHash] ?? '';
        let live = ctx.caches.cronJobs.get(cronName, namespace);
        const memo = this.applied.get(key);
        const lagging = memo?.hash === hash && memo.before === live?.metadata?.resourceVersion;
        // Unchanged and untouched (the CronJob watch enqueues this Trigger on any change): no request.
        if (!lagging && !upToDate(desired, live)) {
          const before = live?.metadata?.resourceVersion;
          live = await ctx.kube.apply<V1CronJob>(desired);
          this.applied.set(key, { hash, before });
        }
        const last = live?.status?.lastScheduleTime ?? trigger.status?.lastScheduleTime;
        outcome = {
          kind: 'ready',
          reason: enabled ? 'Scheduled' : 'Suspended',
          message: `CronJob ${cronJobName(trigger)} runs "${spec.schedule}"${spec.timezone ? ` (${spec.timezone})` : ''}${enabled ? '' : ', suspended'}`,
        };
        fields = { active: enabled, ...(last ? { lastScheduleTime: new Date(last).toISOString() } : {}) };
      }
    } catch (err) {
      await writeStatus(ctx, 'Trigger', trigger, { kind: 'failed', reason: 'ApplyFailed', message: String(err instanceof Error ? err.message : err) }, {});
      throw err;
    }
    await writeStatus(ctx, 'Trigger', trigger, outcome, fields);
  }

  private async removeCronJob(namespace: string, triggerName: string): Promise<void> {
    const name = cronJobName({ metadata: { name: triggerName } });
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
