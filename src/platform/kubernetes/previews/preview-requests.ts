// How a pull-request delivery reaches the leader on Kubernetes. Deliveries hit any replica; only the
// leader writes status.previews and the preview namespaces. The receiving replica records the delivery
// as one annotation per pull request on the FunctionRepository (`preview.sless.kube5s.ru/pr-<N>`, the
// last delivery of that PR wins: a close after an open is a close), the way a push records its sync
// request in requestedAt; the leader's repository reconcile decides it again with what only it knows
// (the open previews, the namespaces), acts, and removes the annotation. Pure.
import type { PullRequestAction, PullRequestEvent } from '../../../webhook/pull-request.ts';
import type { PreviewSettings } from '../../../preview/preview-settings.ts';
import type { FunctionRepositoryPreviewsItem } from '../crd-types.ts';

export const PREVIEW_REQUEST_PREFIX = 'preview.sless.kube5s.ru/pr-';

/** A recorded delivery: the parsed event and when it arrived (a build's ttl counts from there). */
export interface PreviewRequest {
  readonly number: number;
  readonly event: PullRequestEvent;
  readonly at: string;
  /** The annotation's key and value, to remove exactly this one once handled. */
  readonly key: string;
  readonly value: string;
}

const ACTIONS: readonly PullRequestAction[] = ['opened', 'reopened', 'synchronized', 'edited', 'closed', 'merged', 'other'];

/** The annotation a delivery of PR `number` is recorded as. */
export function previewRequestAnnotation(number: number, event: PullRequestEvent, at: string): { key: string; value: string } {
  const { action, providerAction, baseBranch, headBranch, headSha, sameRepository } = event;
  return { key: `${PREVIEW_REQUEST_PREFIX}${number}`, value: JSON.stringify({ action, providerAction, number, baseBranch, headBranch, headSha, sameRepository, at }) };
}

/** The recorded deliveries of a repository, by PR number; a value that is not one (edited by hand) is skipped. */
export function previewRequests(annotations: Readonly<Record<string, string>> | undefined): PreviewRequest[] {
  const out: PreviewRequest[] = [];
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (!key.startsWith(PREVIEW_REQUEST_PREFIX)) continue;
    const number = Number(key.slice(PREVIEW_REQUEST_PREFIX.length));
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(value) as Record<string, unknown>;
    } catch {
      continue;
    }
    const str = (x: unknown) => (typeof x === 'string' ? x : '');
    const action = ACTIONS.find((a) => a === v.action);
    if (!Number.isSafeInteger(number) || number <= 0 || !action || typeof v.at !== 'string') continue;
    const event: PullRequestEvent = {
      kind: 'pull_request',
      action,
      providerAction: str(v.providerAction),
      number,
      baseBranch: str(v.baseBranch),
      headBranch: str(v.headBranch),
      headSha: str(v.headSha),
      sameRepository: v.sameRepository === true,
    };
    out.push({ number, event, at: v.at, key, value });
  }
  return out.sort((a, b) => a.number - b.number);
}

/** Changes whenever a delivery is recorded or handled: the controller starts a reconcile then. */
export function previewRequestsFingerprint(annotations: Readonly<Record<string, string>> | undefined): string {
  return previewRequests(annotations)
    .map((r) => `${r.number}@${r.at}`)
    .join(',');
}

export type PreviewEntry = FunctionRepositoryPreviewsItem;

/** Previews whose ttl has passed since their last push, or all of them when previews are off. */
export function expiredPreviews(entries: readonly PreviewEntry[], settings: PreviewSettings | { error: string }, nowMs: number): PreviewEntry[] {
  if ('error' in settings) return [];
  if (!settings.enabled) return [...entries];
  return entries.filter((e) => Date.parse(e.updatedAt) + settings.ttlMs <= nowMs);
}

/** When the next preview expires (for the repository's requeue), or undefined. */
export function nextExpiryMs(entries: readonly PreviewEntry[], settings: PreviewSettings | { error: string }, nowMs: number): number | undefined {
  if ('error' in settings || entries.length === 0) return undefined;
  return Math.max(1000, Math.min(...entries.map((e) => Date.parse(e.updatedAt) + settings.ttlMs - nowMs)));
}

/** The preview entry a build decision makes: a new head is read and planned again (planned false). */
export function entryForBuild(known: PreviewEntry | undefined, d: { number: number; namespace: string; branch: string; head: string }, at: string): PreviewEntry {
  if (known && known.head === d.head && known.branch === d.branch) return known;
  return { ...(known ?? {}), number: d.number, namespace: d.namespace, branch: d.branch, head: d.head, updatedAt: at, planned: false };
}
