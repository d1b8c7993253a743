// When a pod is in /fn's rotation, and when /fn probes it: pure, so the rules read (and are tested)
// apart from timers and sockets. The pattern is Knative's activator (pkg/activator/net,
// revision_backends.go): it probes pod IPs itself every 200 ms so a new pod serves as soon as it
// answers, not when the kubelet's next readiness probe and kube-proxy have caught up. Here:
// - a pod the kubelet reports ready is in rotation without probes (its readiness probe already runs);
// - a new pod (never ready yet, not terminating) is probed every PROBE_POLICY.intervalMs from the
//   moment its address appears, and is in rotation from its first answer, for a bounded time (then
//   the kubelet's own verdict decides);
// - a terminating pod is out at once, whatever else it says (its preStop sleep keeps it answering
//   the calls already sent to it), and so is a pod that was ready and is no longer (its readiness
//   probe fails: the kubelet knows better than one answer of ours);
// - a probed-only pod that refuses a call goes back to being probed.
import type { PodAddress } from './slice-addresses.ts';

export interface ProbePolicy {
  /** Pause between two probes of one pod (from the end of one to the start of the next). */
  readonly intervalMs: number;
  /** One probe's timeout. */
  readonly timeoutMs: number;
  /** How long a pod is probed before /fn leaves it to the kubelet (the runtimes' start-up probe allows 60 s). */
  readonly windowMs: number;
}

/** The one source of the probe cadence (docs/pod-routing.md quotes it). */
export const PROBE_POLICY: ProbePolicy = { intervalMs: 50, timeoutMs: 500, windowMs: 60_000 };

export type ProbeState =
  /** Not probed: the kubelet's word is enough (ready, terminating, or once ready). */
  | { readonly kind: 'none' }
  | { readonly kind: 'probing'; readonly since: number }
  | { readonly kind: 'answered'; readonly at: number }
  /** Probed for the whole window without an answer. */
  | { readonly kind: 'gave-up' };

export interface PodState {
  /** The kubelet has reported the pod ready at least once. */
  readonly wasReady: boolean;
  readonly probe: ProbeState;
}

const NONE: ProbeState = { kind: 'none' };

/** The state after the slices said `address` (first sight when `previous` is undefined). */
export function onAddress(previous: PodState | undefined, address: PodAddress, now: number): PodState {
  const wasReady = (previous?.wasReady ?? false) || (address.ready && !address.terminating);
  if (address.terminating || address.ready || wasReady) {
    return previous && previous.wasReady === wasReady && previous.probe.kind === 'none' ? previous : { wasReady, probe: NONE };
  }
  // New and not ready: probe it, unless that is under way or done.
  if (previous && previous.probe.kind !== 'none') return previous;
  return { wasReady: false, probe: { kind: 'probing', since: now } };
}

/** The state after one probe of the pod answered (`ok`) or not. A result for a pod no longer probed changes nothing. */
export function onProbeResult(state: PodState, ok: boolean, now: number, policy: ProbePolicy = PROBE_POLICY): PodState {
  if (state.probe.kind !== 'probing') return state;
  if (ok) return { ...state, probe: { kind: 'answered', at: now } };
  if (now - state.probe.since >= policy.windowMs) return { ...state, probe: { kind: 'gave-up' } };
  return state;
}

/** A call to the pod found nothing listening: a pod in rotation on our probe alone is probed again. */
export function onRefused(state: PodState, now: number): PodState {
  if (state.wasReady || state.probe.kind !== 'answered') return state;
  return { ...state, probe: { kind: 'probing', since: now } };
}

export function isProbing(state: PodState): boolean {
  return state.probe.kind === 'probing';
}

/** Whether /fn sends calls to the pod. */
export function inRotation(address: PodAddress, state: PodState): boolean {
  if (address.terminating) return false;
  if (address.ready) return true;
  return !state.wasReady && state.probe.kind === 'answered';
}
