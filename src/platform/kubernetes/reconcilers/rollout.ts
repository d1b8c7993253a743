// Ready means serving (issue 9 item 5): whether the Deployment of a Function's current image and config
// is rolled out and available, decided from the Deployment and its pods (pure). While the new pods
// start, the old ReplicaSet keeps serving (maxUnavailable 0) and the Function is Reconciling; pods that
// crash-loop or cannot pull their image make it Ready=False with the reason, still Reconciling (the
// kubelet keeps trying, a push may fix it); a Deployment past its progress deadline is Stalled.
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { isBrokenContainerReason, type RolloutReason } from '../../reasons.ts';

export type Rollout =
  | { readonly state: 'available'; readonly message: string }
  | { readonly state: 'progressing'; readonly reason: RolloutReason; readonly message: string }
  | { readonly state: 'failing'; readonly reason: RolloutReason; readonly message: string }
  | { readonly state: 'stalled'; readonly reason: RolloutReason; readonly message: string };

/** Lines of a crashed container's output that a Function's status message quotes. */
const OUTPUT_LINES = 6;

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}

/**
 * `scalingOnly`: the Deployment's form is the one already rolled out and Ready (only its replica count
 * moved: the autoscaler, a wake). Pods starting or stopping for that are no rollout: while no pod of an
 * older template is left it stays available (a crash-looping new pod still says failing).
 */
export function rolloutOf(deployment: V1Deployment | undefined, pods: readonly V1Pod[], imageRef: string, opts: { scalingOnly?: boolean } = {}): Rollout {
  const name = `${deployment?.metadata?.namespace ?? ''}/${deployment?.metadata?.name ?? ''}`;
  if (!deployment) return { state: 'progressing', reason: 'RollingOut', message: `waiting for Deployment ${name}` };
  const wanted = deployment.spec?.replicas ?? 1;
  const status = deployment.status ?? {};
  const progressing = status.conditions?.find((c) => c.type === 'Progressing');
  if (progressing?.status === 'False' && progressing.reason === 'ProgressDeadlineExceeded') {
    return { state: 'stalled', reason: 'ProgressDeadlineExceeded', message: `Deployment ${name} did not roll out ${imageRef}: ${progressing.message ?? 'progress deadline exceeded'}` };
  }
  const current = pods.filter((p) => !p.metadata?.deletionTimestamp && p.spec?.containers.some((c) => c.image === imageRef));
  for (const pod of current) {
    for (const c of pod.status?.containerStatuses ?? []) {
      const waiting = c.state?.waiting;
      if (waiting?.reason && isBrokenContainerReason(waiting.reason)) {
        const last = c.lastState?.terminated;
        // The crashed process's last output (terminationMessagePolicy FallbackToLogsOnError) says why,
        // e.g. a SyntaxError; the kubelet's back-off message says only that it waits.
        const output = lastLines(last?.message ?? '', OUTPUT_LINES);
        const exit = last ? `exit code ${last.exitCode}${last.reason ? ` (${last.reason})` : ''}` : '';
        const detail = output ? `${exit}: ${output}` : (waiting.message ?? (exit ? `last ${exit}` : ''));
        return {
          state: 'failing',
          reason: waiting.reason,
          message: `pod ${pod.metadata?.name ?? ''} of ${imageRef}: ${waiting.reason}${detail ? `: ${detail}` : ''}; the previous version keeps serving`,
        };
      }
    }
  }
  if (opts.scalingOnly && (status.replicas ?? 0) <= (status.updatedReplicas ?? 0)) return { state: 'available', message: `serving ${imageRef}` };
  if ((status.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0)) {
    return { state: 'progressing', reason: 'RollingOut', message: `Deployment ${name} has not seen its new spec yet` };
  }
  if (wanted === 0) return (status.replicas ?? 0) === 0 ? { state: 'available', message: `Deployment ${name} scaled to 0` } : { state: 'progressing', reason: 'ScalingDown', message: `Deployment ${name} scales to 0` };
  const updated = status.updatedReplicas ?? 0;
  const available = status.availableReplicas ?? 0;
  const total = status.replicas ?? 0;
  if (updated < wanted || available < wanted || total > updated) {
    return { state: 'progressing', reason: 'RollingOut', message: `Deployment ${name}: ${updated}/${wanted} updated, ${available} available, rolling out ${imageRef}` };
  }
  return { state: 'available', message: `serving ${imageRef}` };
}
