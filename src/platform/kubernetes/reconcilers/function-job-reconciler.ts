// FunctionJob: runID 0 never runs; every larger runID runs the function's image once in job mode, as a Job
// named by the runID. Status follows the Job's conditions; the message is the pod's output, capped.
import type { V1Job } from '@kubernetes/client-node';
import { functionJobRun, runJobName } from '../objects/job-workloads.ts';
import type { FunctionJobReason } from '../../reasons.ts';
import type { FunctionJobResource, FunctionJobStatus } from '../objects/resources.ts';
import type { HandlerResult } from '../api-client/work-queue.ts';
import { record, type ReconcileContext } from './reconcile-context.ts';
import { jobState } from '../objects/job-state.ts';
import { jobFailureReason, latestJobPod, podOutput } from './job-status.ts';
import { reconcileObject, type Reconciled, type Reconciler } from './reconcile-object.ts';

const OUTPUT_BYTES = 8192;

/** Status fields to merge; null clears one (a rerun clears the previous run's completionTime). */
type Result = Reconciled<FunctionJobStatus, FunctionJobReason>;

export class FunctionJobReconciler implements Reconciler<FunctionJobResource, FunctionJobStatus, FunctionJobReason> {
  readonly kind = 'FunctionJob';

  constructor(private readonly ctx: ReconcileContext) {}

  reconcile(key: string): Promise<HandlerResult | void> {
    return reconcileObject(this.ctx, this, key);
  }

  get(namespace: string, name: string): FunctionJobResource | undefined {
    return this.ctx.caches.functionJobs.get(name, namespace);
  }

  retryReason(): FunctionJobReason {
    return 'RunError';
  }

  async steps(fj: FunctionJobResource): Promise<Result> {
    const ctx = this.ctx;
    const namespace = fj.metadata?.namespace ?? '';
    const runID = fj.spec?.runID ?? 0;
    if (runID <= 0) {
      return { outcome: { kind: 'ready', reason: 'Skipped', message: 'runID is 0: nothing to run' }, status: { phase: 'Skipped', runID } };
    }
    const jobName = runJobName(fj);
    const status = fj.status;
    const finishedBefore = status?.runID === runID && (status.phase === 'Succeeded' || status.phase === 'Failed');
    const job = ctx.caches.jobs.get(jobName, namespace) ?? (finishedBefore ? undefined : await ctx.kube.read<V1Job>('batch/v1', 'Job', namespace, jobName));

    if (!job) {
      if (finishedBefore) {
        // The Job expired (ttlSecondsAfterFinished); its result stays in status.
        // finishedBefore: the phase is one of the two, and the reason repeats it.
        const ended = status.phase === 'Succeeded' ? 'Succeeded' : 'Failed';
        return { outcome: { kind: ended === 'Succeeded' ? 'ready' : 'stalled', reason: ended, message: 'run finished' }, status: {} };
      }
      const fnName = fj.spec?.functionRef ?? '';
      const fn = ctx.caches.functions.get(fnName, namespace);
      if (!fn) {
        return { outcome: { kind: 'stalled', reason: 'FunctionNotFound', message: `Function ${namespace}/${fnName} does not exist` }, status: { phase: 'Pending', runID } };
      }
      if (!fn.status?.imageRef) {
        return { outcome: { kind: 'progressing', reason: 'WaitingForImage', message: `Function ${fnName} has no image yet` }, status: { phase: 'Pending', runID } };
      }
      const refusal = await ctx.tenants.refusalOf(namespace, fn.spec?.envFromSecrets ?? []);
      if (refusal) return { outcome: { kind: 'stalled', reason: refusal.reason, message: refusal.message }, status: { phase: 'Failed', runID, message: refusal.message } };
      if ((await ctx.kube.createIfAbsent(functionJobRun(ctx.settings, fn, fj, fn.status.imageRef))) === 'created') {
        record(ctx, fj, 'Normal', 'RunStarted', `run ${runID} started as Job ${jobName}`);
      }
      return running(jobName, runID, ctx.now().toISOString());
    }

    const startTime = iso(job.status?.startTime) ?? iso(job.metadata?.creationTimestamp);
    const state = jobState(job);
    if (state === 'running') return running(jobName, runID, startTime);
    const pod = await latestJobPod(ctx.kube, job);
    const output = await podOutput(ctx.kube, pod, 'function', OUTPUT_BYTES);
    const completionTime = iso(job.status?.completionTime) ?? iso(latestCondition(job)) ?? ctx.now().toISOString();
    const fields = { jobName, runID, startTime, completionTime, message: output };
    if (state === 'succeeded') {
      if (status?.phase !== 'Succeeded' || status.runID !== runID) record(ctx, fj, 'Normal', 'RunSucceeded', `run ${runID} succeeded`);
      return { outcome: { kind: 'ready', reason: 'Succeeded', message: `run ${runID} succeeded` }, status: { ...fields, phase: 'Succeeded' } };
    }
    const why = `run ${runID} failed: ${jobFailureReason(job)}`;
    if (status?.phase !== 'Failed' || status.runID !== runID) record(ctx, fj, 'Warning', 'RunFailed', why);
    return { outcome: { kind: 'stalled', reason: 'RunFailed', message: why }, status: { ...fields, phase: 'Failed' } };
  }
}

function running(jobName: string, runID: number, startTime: string | undefined): Result {
  return {
    outcome: { kind: 'progressing', reason: 'Running', message: `run ${runID} is running as Job ${jobName}` },
    status: { phase: 'Running', jobName, runID, ...(startTime ? { startTime } : {}), completionTime: null, message: '' },
  };
}

function latestCondition(job: V1Job): Date | undefined {
  const times = (job.status?.conditions ?? []).map((c) => c.lastTransitionTime).filter((t): t is Date => !!t);
  return times.sort((a, b) => new Date(b).getTime() - new Date(a).getTime())[0];
}

function iso(t: Date | string | undefined): string | undefined {
  return t ? new Date(t).toISOString() : undefined;
}
