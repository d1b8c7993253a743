// Writes a status once per reconcile, and only when it differs from what the object already says.
import type { Condition } from '../objects/resources.ts';
import type { SlessKind } from '../objects/resources.ts';
import { sameConditions, summarize, type Outcome } from './conditions.ts';
import type { ReconcileContext } from './context.ts';

interface WithStatus {
  metadata?: { name?: string; namespace?: string; generation?: number };
  status?: { conditions?: Condition[]; observedGeneration?: number };
}

export async function writeStatus(
  ctx: Pick<ReconcileContext, 'kube' | 'now'>,
  kind: SlessKind,
  obj: WithStatus,
  outcome: Outcome,
  fields: Record<string, unknown>,
): Promise<void> {
  const prev = (obj.status ?? {}) as Record<string, unknown> & NonNullable<WithStatus['status']>;
  const summary = summarize(prev.conditions, outcome, obj.metadata?.generation, ctx.now().toISOString());
  const same =
    Object.entries(fields).every(([k, v]) => equalish(prev[k], v)) &&
    prev.observedGeneration === summary.observedGeneration &&
    sameConditions(prev.conditions, summary.conditions);
  if (same) return;
  await ctx.kube.patchStatus(kind, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '', { ...fields, ...summary });
}

/** '' and null clear a field, so they equal an absent one; objects compare by JSON. */
function equalish(a: unknown, b: unknown): boolean {
  const blank = (x: unknown) => x === undefined || x === null || x === '';
  if (blank(a) && blank(b)) return true;
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return a === b;
}
