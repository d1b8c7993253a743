// sless dev's side of commit statuses: one sync's plan and deploy outcomes → where each function of
// the revision stands. Pure.
import { formatProblem } from '../manifest/format-problem.ts';
import type { FunctionEntry } from '../source/types.ts';
import type { RevisionFunction } from './decide-commit-status.ts';

export type LocalOutcome = { readonly kind: 'started' | 'unchanged' | 'disabled' } | { readonly kind: 'failed'; readonly message: string };

export interface LocalSyncView {
  /** Folders whose function.yaml is broken. */
  readonly errors: readonly FunctionEntry[];
  /** Functions the sync builds, starts or restarts. */
  readonly changing: readonly FunctionEntry[];
  /** Functions already running this version. */
  readonly unchanged: readonly FunctionEntry[];
}

function nameOf(e: FunctionEntry): string {
  return e.manifest?.name ?? e.name;
}

function broken(e: FunctionEntry): RevisionFunction {
  const message = e.problems.map((p) => formatProblem(p)).join('; ') || `${e.path}: the function could not be read`;
  return { name: nameOf(e), path: e.path, state: { kind: 'failed', message } };
}

/** Before the deploys: what changes is pending. */
export function statesBeforeDeploy(view: LocalSyncView): RevisionFunction[] {
  return [
    ...view.errors.map(broken),
    ...view.changing.map((e): RevisionFunction => ({ name: nameOf(e), path: e.path, state: { kind: 'pending', message: 'preparing and starting' } })),
    ...view.unchanged.map((e): RevisionFunction => ({ name: nameOf(e), path: e.path, state: { kind: 'serving' } })),
  ];
}

/**
 * After the deploys: `outcomes[i]` belongs to `deployed[i]`. `pinnedTo`: the revision a rollback pins a
 * function to (its new code is built but not live).
 */
export function statesAfterDeploy(
  errors: readonly FunctionEntry[],
  deployed: readonly FunctionEntry[],
  outcomes: readonly LocalOutcome[],
  pinnedTo: (name: string) => number | undefined = () => undefined,
): RevisionFunction[] {
  return [
    ...errors.map(broken),
    ...deployed.map((e, i): RevisionFunction => {
      const outcome = outcomes[i];
      const pinned = pinnedTo(nameOf(e));
      const state: RevisionFunction['state'] =
        outcome?.kind === 'failed'
          ? { kind: 'failed', message: outcome.message }
          : pinned !== undefined
            ? { kind: 'pinned', revision: pinned }
            : outcome
              ? { kind: 'serving' }
              : { kind: 'pending', message: 'not deployed yet' };
      return { name: nameOf(e), path: e.path, state };
    }),
  ];
}
