// Where a /fn call at a preview URL goes: `/fn/<namespace>-pr-<N>/<name>` (docs/previews.md). Pure; the
// one rule of both platforms (sless dev: local-previews.ts route(); Kubernetes: kube-preview-serving.ts,
// from the watches). The plan decides before what happens to exist: a function the PR leaves alone
// answers from production even while a Function an earlier push built is still being removed, and one the
// PR deletes answers 404 even before its leftover is gone.

import type { PreviewFunctionState } from './preview-plan.ts';

/** The open preview of that namespace as its repository's status records it. */
export interface PreviewView {
  readonly number: number;
  /** False until the pull request has been read and planned once. */
  readonly planned: boolean;
  readonly functions: readonly { readonly name: string; readonly state: PreviewFunctionState }[];
}

export interface PreviewRouteInput {
  /** The open preview whose namespace the call names; undefined: none is open there. */
  readonly preview: PreviewView | undefined;
  readonly name: string;
  /** Whether the preview namespace holds a function of that name (not being removed). */
  readonly ownFunction: boolean;
  /** Whether that function was made for a preview (on Kubernetes: labelled so); with no open preview it is a leftover. */
  readonly previewBuilt?: boolean;
}

export type PreviewRoute =
  /** No open preview there: the namespace is served as any other. */
  | { readonly kind: 'not-a-preview' }
  /** The preview's own function answers (one the PR builds, or its last good build). */
  | { readonly kind: 'preview' }
  /** The production function of the base namespace answers (and counts the call for its scaling). */
  | { readonly kind: 'production' }
  | { readonly kind: 'not-found' }
  /** 503 with this reason: the call may well succeed soon. */
  | { readonly kind: 'not-ready'; readonly reason: string };

export function routePreview(input: PreviewRouteInput): PreviewRoute {
  const { preview, name } = input;
  // A closed preview's functions answer nothing while they are removed (the namespace goes with them).
  if (!preview) return input.ownFunction && input.previewBuilt ? { kind: 'not-found' } : { kind: 'not-a-preview' };
  const state = preview.functions.find((f) => f.name === name)?.state;
  if (state === 'production') return { kind: 'production' };
  if (state === 'removed') return { kind: 'not-found' };
  if (input.ownFunction) return { kind: 'preview' };
  if (!preview.planned) return { kind: 'not-ready', reason: `the preview of pull request #${preview.number} is still being read` };
  if (state === 'built') return { kind: 'not-ready', reason: `the preview of pull request #${preview.number} is building ${name}` };
  // failed (broken function.yaml, never built) or a name the PR does not have.
  return { kind: 'not-found' };
}
