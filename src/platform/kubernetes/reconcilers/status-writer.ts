// Writes a status once per reconcile, and only when it differs from what the object already says.
import type { Condition } from '../objects/resources.ts';
import type { SlessKind } from '../objects/resources.ts';
import { sameConditions, summarize, type ExtraCondition, type Outcome } from './conditions.ts';
import type { KubeClient } from '../api-client/kube-client.ts';
import { normalize, normalizedDigest } from '../objects/drift.ts';

/** An object of one of our kinds, `S` its status (crd-types.ts). */
interface WithStatus<S = object> {
  metadata?: { name?: string; namespace?: string; generation?: number; uid?: string };
  status?: S & { conditions?: Condition[]; observedGeneration?: number };
}

/** Status fields a reconcile writes beside the conditions: any of the kind's own, '' or null clearing one. */
export type StatusFields<S> = { readonly [K in keyof S]?: S[K] | null };

/**
 * The last status body this controller wrote per object, and when. Informer caches lag behind our own
 * writes, so a reconcile right after a write would otherwise send the same status again. Entries count
 * only for a short while: after that the (by then current) cache decides, so a status someone else
 * changed in between (another leader) is still corrected.
 */
export type StatusMemo = Map<string, { readonly fingerprint: string; readonly at: number }>;
const MEMO_MS = 30_000;
const MAX_REMEMBERED = 50_000;

/** What a status write needs of the reconcile context (reconcile-context.ts hands it in). */
export interface StatusWriting {
  readonly kube: Pick<KubeClient, 'patchStatus'>;
  readonly now: () => Date;
  readonly statusMemo: StatusMemo;
}

export async function writeStatus<S extends object>(
  ctx: StatusWriting,
  kind: SlessKind,
  obj: WithStatus<S>,
  outcome: Outcome,
  fields: StatusFields<S>,
  extra: readonly ExtraCondition[] = [],
): Promise<void> {
  const prev: Partial<S> & NonNullable<WithStatus['status']> = obj.status ?? {};
  const summary = summarize(prev.conditions, outcome, obj.metadata?.generation, ctx.now().toISOString(), extra);
  const same =
    (Object.keys(fields) as (keyof S)[]).every((k) => equalish(prev[k], fields[k])) &&
    prev.observedGeneration === summary.observedGeneration &&
    sameConditions(prev.conditions, summary.conditions);
  if (same) return;
  const id = memoId(kind, obj);
  const body = { ...fields, ...summary };
  // Cleared fields ('' or null) say what an absent one says (equalish): they make no difference here either.
  const kept = Object.fromEntries(Object.entries(body).filter(([, v]: [string, unknown]) => v !== undefined && v !== null && v !== ''));
  // A digest, not the body: a repository's status at 1,000 functions is 129 KB, kept per object.
  const fingerprint = normalizedDigest({ ...kept, conditions: body.conditions.map(({ lastTransitionTime: _t, ...c }) => c) });
  const now = ctx.now().getTime();
  const last = ctx.statusMemo.get(id);
  if (last && last.fingerprint === fingerprint && now - last.at < MEMO_MS) return;
  await ctx.kube.patchStatus(kind, obj.metadata?.namespace ?? '', obj.metadata?.name ?? '', body);
  if (ctx.statusMemo.size >= MAX_REMEMBERED) ctx.statusMemo.clear();
  ctx.statusMemo.set(id, { fingerprint, at: now });
}

function memoId(kind: SlessKind, obj: Pick<WithStatus, 'metadata'>): string {
  return `${kind}/${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}/${obj.metadata?.uid ?? ''}`;
}

/** The object is gone: drop what this controller remembered of its status. */
export function forgetStatus(memo: StatusMemo, kind: SlessKind, obj: Pick<WithStatus, 'metadata'>): void {
  memo.delete(memoId(kind, obj));
}

/**
 * '' and null clear a field, so they equal an absent one; objects compare by their normalised JSON (keys
 * sorted: the API server answers with its own key order, so plain JSON made every sync look like a change).
 */
export function equalish(a: unknown, b: unknown): boolean {
  const blank = (x: unknown) => x === undefined || x === null || x === '';
  if (blank(a) && blank(b)) return true;
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(normalize(a)) === JSON.stringify(normalize(b));
  return a === b;
}
