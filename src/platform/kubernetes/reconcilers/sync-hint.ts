// What a repository's pending sync request tells its sync (the requestedRevision annotation a push
// webhook set beside requestedAt: kube-repositories.ts requestSync).
import type { SyncOptions } from '../../../source/git-source.ts';
import { ANNOTATIONS } from '../objects/meta.ts';
import type { RepositoryResource } from '../objects/resources.ts';

/**
 * The head a push webhook named (ANNOTATIONS.requestedRevision), while its request is not handled yet: the
 * source fetches that commit at once and takes it only when the branch tip, asked beside the fetch, is it
 * (git-source.ts). An old hint is never passed again.
 */
export function syncHint(repo: RepositoryResource): SyncOptions {
  const annotations = repo.metadata?.annotations ?? {};
  const requestedAt = annotations[ANNOTATIONS.requestedAt];
  const head = annotations[ANNOTATIONS.requestedRevision];
  const fresh = !!requestedAt && requestedAt !== repo.status?.lastHandledRequestedAt;
  return fresh && head && /^[0-9a-f]{40}$/.test(head) ? { head } : {};
}

/**
 * A pending push webhook names a head other than the one the last sync applied: this sync will change
 * something, unlike a routine resync that mostly finds the same head. The repository queue runs it before
 * routine syncs (work-queue.ts urgentOf), so one push is not served after a hundred resyncs.
 */
export function announcesNewHead(repo: RepositoryResource | undefined): boolean {
  const head = repo ? syncHint(repo).head : undefined;
  return head !== undefined && head !== repo?.status?.revision;
}
