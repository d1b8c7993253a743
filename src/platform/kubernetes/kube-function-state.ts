// The controller's side of commit statuses: where one Function of a synced revision stands, read from
// its object (Flux style conditions). Pure.
import type { FunctionResource } from './objects/resources.ts';
import type { FunctionDeployState } from '../../commit-status/decide-commit-status.ts';
import { pinOf } from './function-revisions.ts';

/**
 * `appliedGeneration`: the generation the sync's apply gave the Function (undefined when the sync
 * changed nothing): until the Function reconciler has observed it, the object still describes the
 * previous revision.
 */
export function kubeFunctionState(fn: FunctionResource | undefined, appliedGeneration: number | undefined): FunctionDeployState {
  if (!fn) return { kind: 'pending', message: 'being created' };
  const generation = Math.max(appliedGeneration ?? 0, fn.metadata?.generation ?? 0);
  if ((fn.status?.observedGeneration ?? 0) < generation) return { kind: 'pending', message: 'waiting for the controller' };
  const ready = fn.status?.conditions?.find((c) => c.type === 'Ready');
  const stalled = fn.status?.conditions?.find((c) => c.type === 'Stalled');
  const pin = pinOf(fn);
  // Built (Ready), but a rollback pins an earlier revision: this revision is not live there.
  if (ready?.status === 'True' && pin && typeof pin !== 'string') return { kind: 'pinned', revision: pin.revision };
  if (ready?.status === 'True') return { kind: 'serving' };
  if (stalled?.status === 'True' || fn.status?.phase === 'Failed') {
    return { kind: 'failed', message: fn.status?.message || stalled?.message || ready?.message || 'failed' };
  }
  // Building, rolling out, or a retryable hiccup the controller is retrying.
  return { kind: 'pending', message: ready?.message || fn.status?.phase?.toLowerCase() || 'reconciling' };
}
