// The one skeleton every reconciler runs (Flux's shape): get the object from the informer cache → gone
// or being deleted: forget what this process remembers of it, then finalize when it carries our finalizer
// → add the finalizer when it wants one → suspended: no steps, and a status that keeps Ready as it was
// (conditions.ts) → the reconciler's ordered steps, to an Outcome → a thrown error sorted (StalledError
// stalls; anything else is Ready=False + Reconciling and retried with backoff) → one status write. The
// four reconcilers (repository, function, trigger, function-job) are their steps and hooks.
import { FINALIZER } from '../objects/meta.ts';
import type { Condition, Metadata, SlessKind } from '../objects/resources.ts';
import type { HandlerResult } from '../api-client/work-queue.ts';
import { StalledError } from '../stalled-error.ts';
import type { SlessReason } from '../../reasons.ts';
import type { ExtraCondition, Outcome } from './conditions.ts';
import { splitKey, type ReconcileContext } from './reconcile-context.ts';
import { writeStatus, type StatusFields, type StatusWriting } from './status-writer.ts';

/** What one run of a reconciler's steps came to; `R` is the kind's reasons (reasons.ts). */
export interface Reconciled<S, R extends SlessReason = SlessReason> {
  readonly outcome: Outcome<R>;
  /** Status fields written beside the conditions ('' or null clear one). */
  readonly status: StatusFields<S>;
  /** Look again after this many ms (default: the reconciler's requeueAfterMs, else only on events). */
  readonly requeueAfterMs?: number;
  /** Write no status this time: a Trigger waiting for its Function, a build whose rollout is moments away. */
  readonly hold?: boolean;
  /** A failure handed to the work queue once the status is written: it retries with backoff. */
  readonly retry?: unknown;
}

export interface ReconciledObject {
  metadata?: Metadata;
  spec?: unknown;
  status?: { conditions?: Condition[]; observedGeneration?: number };
}

export interface Reconciler<T extends ReconciledObject, S, R extends SlessReason> {
  readonly kind: SlessKind;
  /** The object from the informer cache (reads never hit the API server). */
  get(namespace: string, name: string): T | undefined;
  /** The object is gone or being deleted: drop what this process remembers of it, remove what only it removes. */
  gone?(key: string, obj: T | undefined): Promise<void> | void;
  /** Whether a live object should carry FINALIZER (added before the steps run). */
  wantsFinalizer?(obj: T): boolean;
  /** Deletion of an object that carries FINALIZER: clean up, then remove the finalizer. */
  finalize?(obj: T): Promise<void>;
  suspended?(obj: T): boolean;
  /**
   * Conditions beside Ready/Reconciling/Stalled that the object itself states, every run (an error's
   * too): a Function's Pinned. One no longer stated is removed.
   */
  conditions?(obj: T): readonly ExtraCondition[];
  /** Status fields every run writes, an error's too (the repository's webhook path and handled sync request). */
  baseStatus?(obj: T): StatusFields<S>;
  /**
   * The ordered steps: an outcome, or a thrown error (StalledError stalls, others retry). `boundary` is
   * awaited between phases (the repository's urgent gate, see begin).
   */
  steps(obj: T, key: string, boundary: () => Promise<void>): Promise<Reconciled<S, R>>;
  /** The condition reason of a retried error (a thrown error that is no StalledError). */
  retryReason(err: unknown): R;
  /** The requeue of a run that names none: the repository's interval. */
  requeueAfterMs?(obj: T): number;
  /** What a run came to, just before its status write (Events, metrics); `failure` is the thrown error it sorted. */
  report?(obj: T, result: Reconciled<S>, failure: unknown, startedMs: number): void;
  /**
   * The run's turn, taken before the steps and ended after the status write: its `boundary` is awaited
   * between phases and before the write (a routine sync waits there while a push's sync runs).
   */
  begin?(obj: T): Turn;
}

/** A run's place beside others (api-client/urgent-gate.ts). */
export interface Turn {
  boundary(): Promise<void>;
  end(): void;
}

const NO_TURN: Turn = { boundary: () => Promise.resolve(), end: () => undefined };

const SUSPENDED: Outcome = { kind: 'suspended', reason: 'Suspended', message: 'spec.suspend is true: not reconciling' };

/** One reconcile of `key` by reconciler `r`: the skeleton above. */
export async function reconcileObject<T extends ReconciledObject, S, R extends SlessReason>(
  ctx: StatusWriting & { readonly kube: Pick<ReconcileContext['kube'], 'mergePatch'> },
  r: Reconciler<T, S, R>,
  key: string,
): Promise<HandlerResult | void> {
  const { namespace, name } = splitKey(key);
  const obj = r.get(namespace, name);
  if (!obj || obj.metadata?.deletionTimestamp) {
    await r.gone?.(key, obj);
    if (obj && r.finalize && obj.metadata?.finalizers?.includes(FINALIZER)) await r.finalize(obj);
    return;
  }
  if (!obj.spec) return;
  if (r.wantsFinalizer?.(obj) && !obj.metadata?.finalizers?.includes(FINALIZER)) {
    await ctx.kube.mergePatch(obj, { metadata: { finalizers: [...(obj.metadata?.finalizers ?? []), FINALIZER] } });
  }
  if (r.suspended?.(obj)) {
    await writeStatus(ctx, r.kind, obj, SUSPENDED, {});
    return;
  }
  const turn = r.begin?.(obj) ?? NO_TURN;
  try {
    const started = Date.now();
    let result: Reconciled<S>;
    let failure: unknown;
    try {
      result = await r.steps(obj, key, () => turn.boundary());
    } catch (err) {
      failure = err;
      result = sortError(err, r.retryReason(err));
    }
    r.report?.(obj, result, failure, started);
    await turn.boundary();
    if (!result.hold) await writeStatus(ctx, r.kind, obj, result.outcome, { ...r.baseStatus?.(obj), ...result.status }, r.conditions?.(obj));
    if ('retry' in result) throw result.retry;
    const requeueAfterMs = result.requeueAfterMs ?? r.requeueAfterMs?.(obj);
    return requeueAfterMs ? { requeueAfterMs } : undefined;
  } finally {
    turn.end();
  }
}

/** A thrown error as an outcome: a StalledError stalls (no retry); anything else fails and is retried. */
export function sortError<S>(err: unknown, retryReason: SlessReason): Reconciled<S> {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof StalledError) return { outcome: { kind: 'stalled', reason: err.reason, message }, status: {} };
  return { outcome: { kind: 'failed', reason: retryReason, message }, status: {}, retry: err };
}
