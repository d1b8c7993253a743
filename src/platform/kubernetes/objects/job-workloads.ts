// CronJobs (one per cron Trigger) and Jobs (one per FunctionJob run) run the function's own image in job
// mode: the runtime calls the handler once with SLESS_EVENT, prints the result and exits (docs/contract.md §4).
import type { V1CronJob, V1Job, V1PodTemplateSpec } from '@kubernetes/client-node';
import type { ResolvedControllerSettings } from '../settings.ts';
import { functionPodSpec, workloadLabels } from './function-workload.ts';
import { ANNOTATIONS, LABELS, controllerRef, dnsLabel } from './meta.ts';
import type { FunctionJobResource, FunctionResource, TriggerResource } from './resources.ts';

function jobTemplate(
  settings: Pick<ResolvedControllerSettings, 'imagePullSecrets'>,
  fn: FunctionResource,
  imageRef: string,
  eventJSON: string | undefined,
  labels: Record<string, string>,
): V1PodTemplateSpec {
  const spec = functionPodSpec(settings, fn, imageRef, [
    { name: 'SLESS_MODE', value: 'job' },
    { name: 'SLESS_EVENT', value: eventJSON ?? '{}' },
  ]);
  spec.restartPolicy = 'Never';
  return { metadata: { labels }, spec };
}

/** The runtime's own timeout plus a margin, so a hung handler never keeps a pod forever. */
function deadlineSeconds(fn: FunctionResource): number {
  return (fn.spec?.timeoutSec ?? 30) + 60;
}

export function cronJobName(trigger: TriggerResource): string {
  return dnsLabel([trigger.metadata?.name ?? ''], 52); // CronJob names are capped at 52 characters
}

export function triggerCronJob(
  settings: Pick<ResolvedControllerSettings, 'imagePullSecrets'>,
  fn: FunctionResource,
  trigger: TriggerResource,
  imageRef: string,
): V1CronJob {
  const spec = trigger.spec;
  if (!spec?.schedule) throw new Error(`Trigger ${trigger.metadata?.namespace}/${trigger.metadata?.name} has no schedule`);
  const labels = { ...workloadLabels(fn, 'cron'), [LABELS.trigger]: trigger.metadata?.name ?? '' };
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name: cronJobName(trigger),
      namespace: fn.metadata?.namespace,
      labels,
      ownerReferences: [controllerRef(fn, 'Function')],
    },
    spec: {
      schedule: spec.schedule,
      ...(spec.timezone ? { timeZone: spec.timezone } : {}),
      suspend: spec.enabled === false,
      concurrencyPolicy: 'Forbid',
      startingDeadlineSeconds: 300,
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 3,
      jobTemplate: {
        metadata: { labels },
        spec: {
          backoffLimit: 0,
          activeDeadlineSeconds: deadlineSeconds(fn),
          ttlSecondsAfterFinished: 86400,
          template: jobTemplate(settings, fn, imageRef, spec.eventJSON, labels),
        },
      },
    },
  };
}

/** One Job per run: a larger runID gives a new name, so a rerun never collides with the previous run. */
export function runJobName(fj: FunctionJobResource): string {
  const runId = fj.spec?.runID ?? 0;
  return dnsLabel([fj.metadata?.name ?? '', `r${runId}`], 63);
}

export function functionJobRun(
  settings: Pick<ResolvedControllerSettings, 'imagePullSecrets'>,
  fn: FunctionResource,
  fj: FunctionJobResource,
  imageRef: string,
): V1Job {
  const labels = { ...workloadLabels(fn, 'job'), [LABELS.functionJob]: fj.metadata?.name ?? '' };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: runJobName(fj),
      namespace: fn.metadata?.namespace,
      labels,
      annotations: { [ANNOTATIONS.runId]: String(fj.spec?.runID ?? 0) },
      ownerReferences: [controllerRef(fn, 'Function')],
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: deadlineSeconds(fn),
      ttlSecondsAfterFinished: 7 * 86400,
      template: jobTemplate(settings, fn, imageRef, fj.spec?.eventJSON, labels),
    },
  };
}
