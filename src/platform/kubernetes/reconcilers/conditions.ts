// The one summarize step every reconciler ends with (Flux style): from the outcome of the steps it sets
// Ready, Reconciling and Stalled plus observedGeneration. No step writes Ready itself.
import type { SlessReason } from '../../reasons.ts';
import type { Condition } from '../objects/resources.ts';

/**
 * - `ready`: the object is what its spec asks for.
 * - `progressing`: work is under way (a build, a rollout); Ready=Unknown... until it ends.
 * - `failed`: a retryable failure; Ready=False and Reconciling=True (kstatus reads Ready=False alone as
 *   Current, i.e. done), the queue retries with backoff.
 * - `stalled`: cannot progress until someone changes something; Ready=False and Stalled=True.
 * - `suspended`: spec.suspend; nothing is reconciled, so nothing new is said (as Flux does): Ready keeps its
 *   last status, reason and message, and no Reconciling or Stalled is left, so kstatus reads the object as
 *   Current. The conditions still take the new observedGeneration: setting suspend raised the generation,
 *   and kstatus and `kubectl wait` ignore conditions of an older one.
 */
export type Outcome<R extends SlessReason = SlessReason> = {
  readonly kind: 'ready' | 'progressing' | 'failed' | 'stalled' | 'suspended';
  readonly reason: R;
  readonly message: string;
};

function condition(
  previous: readonly Condition[] | undefined,
  type: string,
  status: Condition['status'],
  reason: string,
  message: string,
  generation: number | undefined,
  now: string,
): Condition {
  const old = previous?.find((c) => c.type === type);
  const lastTransitionTime = old && old.status === status ? old.lastTransitionTime : now;
  return {
    type,
    status,
    reason,
    message: message.slice(0, 32_000),
    lastTransitionTime,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/**
 * A condition a reconciler states beside the summary (a Function's `Pinned`): written with the others,
 * gone from the status in a run that does not state it.
 */
export interface ExtraCondition {
  readonly type: string;
  readonly status: Condition['status'];
  readonly reason: string;
  readonly message: string;
}

export function summarize(
  previous: readonly Condition[] | undefined,
  outcome: Outcome,
  generation: number | undefined,
  now: string = new Date().toISOString(),
  extra: readonly ExtraCondition[] = [],
): { conditions: Condition[]; observedGeneration?: number } {
  if (outcome.kind === 'suspended') {
    const ready = previous?.find((c) => c.type === 'Ready');
    const kept = ready ? [{ ...ready, ...(generation !== undefined ? { observedGeneration: generation } : {}) }] : [];
    return { conditions: kept, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  }
  const readyStatus = outcome.kind === 'ready' ? 'True' : outcome.kind === 'progressing' ? 'Unknown' : 'False';
  const conditions = [condition(previous, 'Ready', readyStatus, outcome.reason, outcome.message, generation, now)];
  if (outcome.kind === 'progressing' || outcome.kind === 'failed') {
    conditions.push(condition(previous, 'Reconciling', 'True', outcome.reason, outcome.message, generation, now));
  }
  if (outcome.kind === 'stalled') {
    conditions.push(condition(previous, 'Stalled', 'True', outcome.reason, outcome.message, generation, now));
  }
  for (const c of extra) conditions.push(condition(previous, c.type, c.status, c.reason, c.message, generation, now));
  return { conditions, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
}

/** True when the status already says this; lets a reconcile skip a status write. */
export function sameConditions(a: readonly Condition[] | undefined, b: readonly Condition[]): boolean {
  if (!a || a.length !== b.length) return false;
  return b.every((c) => {
    const o = a.find((x) => x.type === c.type);
    return !!o && o.status === c.status && o.reason === c.reason && o.message === c.message && o.observedGeneration === c.observedGeneration;
  });
}
