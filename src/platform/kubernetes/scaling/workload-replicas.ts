// How many replicas the Function reconciler writes into a function's Deployment (issue 29), pure. The
// leader's autoscaler (kube-autoscaler.ts) owns the number between the bounds; the reconciler sets it
// only where it must, so the two never fight:
//   - http disabled (http.enabled: false, every http Trigger disabled): 0, and the Deployment says so
//     (DISABLED_ANNOTATION), so /fn answers 503 and never wakes it; with queue Triggers max(1, min)
//     under the same mark (the deliveries need it running);
//   - a new Deployment, or one switched on again: max(1, min), one replica proving the image starts
//     (a min-0 function then goes back to zero after `idle`, as in sless dev);
//   - otherwise the live count, pulled into [min, max] when a scale change moved the bounds past it.
import { compactScale, resolveScale, type Scale } from '../../../manifest/scale-spec.ts';
import type { Runtime } from '../../../manifest/types.ts';
import { ANNOTATIONS } from '../objects/meta.ts';

/** On a function's Deployment while its http serving is switched off (0 replicas that are not idle). */
export const DISABLED_ANNOTATION = ANNOTATIONS.httpDisabled;

export interface LiveWorkload {
  readonly replicas: number | undefined;
  readonly disabled: boolean;
}

export function workloadReplicas(httpEnabled: boolean, scale: Scale, live: LiveWorkload | undefined, forQueues = false): number {
  // Queue-only (http off, queue Triggers on): it runs for its deliveries, at its floor (docs/queues.md).
  if (!httpEnabled) return forQueues ? Math.max(1, scale.min) : 0;
  if (!live || live.disabled || live.replicas === undefined) return Math.max(1, scale.min);
  return Math.min(scale.max, Math.max(scale.min, live.replicas));
}

/** What a Deployment says of itself for workloadReplicas (undefined: there is none yet). */
export function liveWorkloadOf(d: { spec?: { replicas?: number }; metadata?: { annotations?: Record<string, string> } } | undefined): LiveWorkload | undefined {
  if (!d) return undefined;
  return { replicas: d.spec?.replicas, disabled: d.metadata?.annotations?.[DISABLED_ANNOTATION] === 'true' };
}

/** A Function object's scale with every default filled in (the one rule: scale-spec.ts resolveScale). */
export function scaleOfSpec(spec: { scale?: { min?: number; max?: number; concurrency?: number; idle?: string }; runtime?: string } | undefined, cap?: number): Scale {
  return resolveScale(compactScale(spec?.scale), (spec?.runtime ?? 'nodejs20') as Runtime, cap);
}
