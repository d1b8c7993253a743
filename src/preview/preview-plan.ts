// Which functions a preview builds, decided from the pull request's own diff: the snapshot of its merge
// base (where the PR branched from the watched branch) against the snapshot of its head, per folder by
// code_hash and function.yaml (planChanges, the same rules as a sync of the watched branch). Pure.
// Not from the watched branch's current tip: what main changed since the PR branched is not the PR's.
//   added, rebuilt or reconfigured by the PR → `built` (runs in the preview namespace);
//   left alone                               → `production` (the preview's URL answers from production);
//   deleted by the PR                        → `removed` (404 at the preview's URL);
//   broken in the PR (bad function.yaml)     → `failed` (404 at the preview's URL; the status says why).
import { formatProblem } from '../manifest/format-problem.ts';
import { planChanges, type ChangeReason } from '../plan/plan-changes.ts';
import type { FunctionEntry, Snapshot } from '../source/types.ts';

export type PreviewFunctionState = 'built' | 'production' | 'removed' | 'failed';

export interface PreviewFunctionPlan {
  readonly name: string;
  /** The folder at the PR's head (at the merge base for a removed function). */
  readonly path: string;
  readonly state: PreviewFunctionState;
  /** For `built`: what differs from the merge base (`added` when the merge base has no such function). */
  readonly reasons?: readonly (ChangeReason | 'added')[];
  /** For `failed`: the manifest's problems, file:line first. */
  readonly error?: string;
}

export interface PreviewPlan {
  /** Sorted by name. */
  readonly functions: readonly PreviewFunctionPlan[];
  /** The healthy entries of the head to build, in the order of `functions`. */
  readonly build: readonly FunctionEntry[];
}

export function planPreview(mergeBase: Snapshot, head: Snapshot): PreviewPlan {
  const plan = planChanges(mergeBase, head);
  const out: PreviewFunctionPlan[] = [];
  for (const e of plan.added) out.push({ name: e.name, path: e.path, state: 'built', reasons: ['added'] });
  for (const e of [...plan.rebuild, ...plan.redeploy]) out.push({ name: e.name, path: e.path, state: 'built', reasons: plan.reasons[e.name] ?? [] });
  for (const e of plan.unchanged) out.push({ name: e.name, path: e.path, state: 'production' });
  const seen = new Set(out.map((f) => f.name));
  for (const e of plan.errors) {
    if (seen.has(e.name)) continue;
    seen.add(e.name);
    out.push({ name: e.name, path: e.path, state: 'failed', error: e.problems.map((p) => formatProblem(p)).join('; ') || 'could not be read' });
  }
  // planChanges keeps everything when the head has no function folder at all (the safety rule of a
  // sync); a preview only serves, so a PR that deletes every function deletes them in its preview.
  const removed = plan.emptySource ? mergeBase.functions.filter((e) => e.manifest !== undefined) : plan.removed;
  for (const e of removed) if (!seen.has(e.name)) out.push({ name: e.name, path: e.path, state: 'removed' });
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const builtNames = new Set(out.filter((f) => f.state === 'built').map((f) => f.name));
  const build = [...plan.added, ...plan.rebuild, ...plan.redeploy].filter((e) => builtNames.has(e.name)).sort((a, b) => (a.name < b.name ? -1 : 1));
  return { functions: out, build };
}
