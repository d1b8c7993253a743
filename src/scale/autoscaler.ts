// The autoscaler's decision, pure (issue 29): how many replicas a function wants, from the requests it
// has had in flight. Modelled on Knative's KPA (knative/serving pkg/autoscaler/scaling/autoscaler.go):
// - Samples are the average concurrency (requests in flight, all replicas together) of each tick
//   (in-flight-meter.ts). Two windows average them: the stable window (60 s, or `idle` when shorter)
//   decides scaling in, the panic window (a tenth of it) sees bursts.
// - desired = ceil(average / concurrency) per window. When the panic window wants twice the replicas
//   that serve (or any while none serve), the function panics: it takes the panic window's answer
//   and never scales in, until a whole stable window has passed without another burst.
// - Scaling in goes at most halfway per decision (KPA's max scale-down rate 2), so one quiet tick
//   does not drop a busy function to its minimum.
// - With min 0, a function goes to zero only after `idle` without a request and with nothing in
//   flight; before that it keeps at least one replica.
// Bounded by min and max at the end: min is what idle keeps, max what load gets.
import type { Scale } from '../manifest/scale-spec.ts';

/** One tick's measure: the average requests in flight over the tick, all replicas together. */
export interface ConcurrencySample {
  readonly atMs: number;
  readonly concurrency: number;
}

/** What the autoscaler remembers between decisions (start from INITIAL_STATE). */
export interface AutoscalerState {
  /** While set, the function panics: no scaling in before this time. */
  readonly panicUntilMs?: number;
}
export const INITIAL_STATE: AutoscalerState = {};

export interface DecideInput {
  readonly scale: Scale;
  readonly nowMs: number;
  /** The recent samples, oldest first; older than the stable window are ignored. */
  readonly samples: readonly ConcurrencySample[];
  /** Requests in flight right now (a request waiting for a cold start counts). */
  readonly inFlight: number;
  /** When the last request arrived (or the function started, so a new one is not idle at once). */
  readonly lastRequestAtMs: number | undefined;
  /** Replicas that serve now. */
  readonly ready: number;
  /** The replicas the last decision wanted. */
  readonly desired: number;
  readonly state: AutoscalerState;
}

export interface Decision {
  readonly desired: number;
  readonly state: AutoscalerState;
  /** In a user's words, for logs: why this number. */
  readonly reason: string;
}

export const WINDOWS = {
  stableMs: 60_000,
  /** Knative's panic window is 10 % of the stable window. */
  panicFraction: 0.1,
  /** Panic when the panic window wants this many times the ready replicas (Knative's 200 %). */
  panicThreshold: 2,
  /** At most this factor fewer replicas per decision (Knative's max scale-down rate). */
  maxScaleDownRate: 2,
} as const;

/** The stable window of a function: 60 s, or its idle time when shorter (so scaling in precedes idling). */
export function stableWindowMs(scale: Scale): number {
  return Math.min(WINDOWS.stableMs, scale.idleMs);
}

function average(samples: readonly ConcurrencySample[], sinceMs: number): number {
  const inWindow = samples.filter((s) => s.atMs > sinceMs);
  if (inWindow.length === 0) return 0;
  return inWindow.reduce((sum, s) => sum + s.concurrency, 0) / inWindow.length;
}

export function decide(input: DecideInput): Decision {
  const { scale, nowMs, samples, ready, state } = input;
  const stableMs = stableWindowMs(scale);
  const panicMs = Math.max(1000, stableMs * WINDOWS.panicFraction);
  // A request in flight now counts at once, so a wake or a burst does not wait for the next sample.
  const stableAvg = Math.max(average(samples, nowMs - stableMs), 0);
  const panicAvg = Math.max(average(samples, nowMs - panicMs), input.inFlight);
  const wantStable = Math.ceil(stableAvg / scale.concurrency);
  const wantPanic = Math.ceil(panicAvg / scale.concurrency);

  // At max there is nowhere to go: no panic, the stable window decides (and max bounds it).
  const burst = ready < scale.max && (ready === 0 ? wantPanic > 0 : wantPanic >= WINDOWS.panicThreshold * ready);
  const panicUntilMs = burst ? nowMs + stableMs : state.panicUntilMs !== undefined && state.panicUntilMs > nowMs ? state.panicUntilMs : undefined;
  const next: AutoscalerState = panicUntilMs === undefined ? {} : { panicUntilMs };

  // Recently used (or busy) functions keep a replica until idle has passed; then min decides alone.
  const recent = input.inFlight > 0 || (input.lastRequestAtMs !== undefined && nowMs - input.lastRequestAtMs < scale.idleMs);
  let desired: number;
  let reason: string;
  if (panicUntilMs !== undefined) {
    // Panicking: follow the burst up, never down.
    desired = Math.max(wantPanic, input.desired);
    reason = `panic: ${panicAvg.toFixed(1)} in flight over ${panicMs / 1000}s`;
  } else {
    desired = wantStable;
    reason = `stable: ${stableAvg.toFixed(1)} in flight over ${stableMs / 1000}s`;
    // Idle past `idle`: the stable window (never longer) saw nothing, and zero may come at once.
    const floor = recent ? Math.ceil(input.desired / WINDOWS.maxScaleDownRate) : 0;
    if (desired < floor) {
      desired = floor;
      reason += `, scaling in at most by half`;
    }
  }
  if (recent && desired < 1) {
    desired = 1;
    reason = input.inFlight > 0 ? 'a request in flight' : `idle for less than ${scale.idle}`;
  }
  if (!recent && desired === 0 && scale.min === 0) reason = `idle for ${scale.idle}: scaled to zero`;
  const bounded = Math.min(scale.max, Math.max(scale.min, desired));
  if (bounded !== desired) reason += bounded === scale.max ? ` (capped at max ${scale.max})` : ` (kept at min ${scale.min})`;
  return { desired: bounded, state: next, reason };
}
