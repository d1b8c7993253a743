// What a platform does with a verified pull-request delivery, decided without I/O. One rule per line
// of the contract (docs/previews.md): ignored deliveries change nothing and are only logged; refused
// ones change nothing and say why in a commit status on the PR's head; builds and removals name the
// preview namespace.
import type { PullRequestEvent } from '../webhook/pull-request.ts';
import { checkPreviewNamespace } from './preview-name.ts';
import type { PreviewSettings } from './preview-settings.ts';

/** An open preview, as far as the decision needs to know it. */
export interface OpenPreview {
  readonly number: number;
  readonly head: string;
}

export interface PreviewDecisionInput {
  readonly event: PullRequestEvent;
  /** The repository's namespace (previews are `<namespace>-pr-<N>`). */
  readonly namespace: string;
  readonly watchedBranch: string;
  readonly settings: PreviewSettings;
  readonly open: readonly OpenPreview[];
  /** Whether a namespace of that name exists that is not a preview of this repository. */
  readonly takenByOther: (name: string) => boolean;
}

export type PreviewDecision =
  /** Acknowledged, logged, nothing changes. */
  | { readonly kind: 'ignore'; readonly message: string }
  /** Nothing changes; the head commit gets a failed `sless/preview` status with the message. */
  | { readonly kind: 'refuse'; readonly number: number; readonly head: string; readonly message: string }
  | { readonly kind: 'build'; readonly number: number; readonly namespace: string; readonly branch: string; readonly head: string; readonly message: string }
  | { readonly kind: 'remove'; readonly number: number; readonly namespace: string; readonly message: string };

const COMMIT = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

export function decidePreview(input: PreviewDecisionInput): PreviewDecision {
  const { event, settings, watchedBranch } = input;
  const ignore = (message: string): PreviewDecision => ({ kind: 'ignore', message });
  if (!settings.enabled) return ignore('previews are off for this repository (spec.previews.enabled, sless dev --previews)');
  const n = event.number;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n <= 0) {
    return ignore(`pull request number ${JSON.stringify(n)} is not a positive integer; ignored`);
  }
  const pr = `pull request #${n}`;
  if (event.baseBranch !== watchedBranch) return ignore(`${pr} targets ${event.baseBranch}; this repository watches ${watchedBranch}`);
  const open = input.open.find((p) => p.number === n);
  if (event.action === 'closed' || event.action === 'merged') {
    if (!open) return ignore(`${pr} ${event.action}; it has no preview`);
    return { kind: 'remove', number: n, namespace: `${input.namespace}-pr-${n}`, message: `${pr} ${event.action}; removing its preview` };
  }
  if (event.action === 'other') return ignore(`${pr}: action "${event.providerAction}" changes no code; nothing to do`);
  if (!COMMIT.test(event.headSha)) return ignore(`${pr}: head "${event.headSha.slice(0, 80)}" is not a commit id; ignored`);
  const refuse = (message: string): PreviewDecision => ({ kind: 'refuse', number: n, head: event.headSha, message });
  if (!event.sameRepository) {
    return refuse('pull requests from forks are not built (their code would run with this server’s build resources)');
  }
  // `edited` is a new title or body unless the head moved with it.
  if (event.action === 'edited' && open?.head === event.headSha) return ignore(`${pr} edited; its head is already previewed`);
  if (!open && input.open.length >= settings.maxOpen) {
    const n = input.open.length;
    return refuse(`${n} preview${n === 1 ? ' is' : 's are'} open, the most this repository allows (spec.previews.maxOpen ${settings.maxOpen}); close one`);
  }
  const name = checkPreviewNamespace(input.namespace, n, { takenByOther: input.takenByOther });
  if ('error' in name) return refuse(name.error);
  return {
    kind: 'build',
    number: n,
    namespace: name.name,
    branch: event.headBranch,
    head: event.headSha,
    message: `${pr} ${event.action} at ${event.headSha.slice(0, 12)}; building its preview in ${name.name}`,
  };
}
