// The function page's Revisions section and pinned banner (issue 33, docs/rollback.md), pure: the kept
// revisions with "Roll back to this" on every one that does not serve now, and, while a rollback pins
// the function, the banner that says which revision serves and offers the undo.
import type { FunctionRecord, RevisionRecord } from '../platform/types.ts';
import { shortCommit } from '../platform/revisions.ts';
import { consolePaths, shortHash, timeView, type TimeView } from './view-models.ts';

export interface RevisionRow {
  readonly revision: number;
  readonly codeHashShort?: string;
  readonly codeHash: string;
  readonly commitShort?: string;
  readonly image: string;
  readonly liveFrom?: TimeView;
  readonly liveUntil?: TimeView;
  readonly live: boolean;
  /** The pin names this one. */
  readonly pinned: boolean;
  /** Where its "Roll back to this" form posts; absent for the revision that serves now. */
  readonly rollbackAction?: string;
}

export interface PinnedBanner {
  readonly revision: number;
  readonly since?: TimeView;
  readonly commitShort?: string;
  /** Git's head (or the last upload) waits: what the undo brings. */
  readonly gitManaged: boolean;
  readonly undoAction: string;
}

export interface RevisionsView {
  readonly rows: readonly RevisionRow[];
  readonly pinned?: PinnedBanner;
}

/** Newest first, as a person scans them. */
export function revisionsView(fn: Pick<FunctionRecord, 'namespace' | 'name' | 'managedBy' | 'pinned'>, revisions: readonly RevisionRecord[]): RevisionsView {
  const base = consolePaths.fn(fn.namespace, fn.name);
  const rows = [...revisions]
    .sort((a, b) => b.revision - a.revision)
    .map((r): RevisionRow => {
      const live = r.liveUntil === undefined;
      return {
        revision: r.revision,
        codeHash: r.codeHash,
        ...(shortHash(r.codeHash) ? { codeHashShort: shortHash(r.codeHash) } : {}),
        ...(r.commit ? { commitShort: shortCommit(r.commit) } : {}),
        image: r.image,
        ...(timeView(r.liveFrom) ? { liveFrom: timeView(r.liveFrom) } : {}),
        ...(timeView(r.liveUntil) ? { liveUntil: timeView(r.liveUntil) } : {}),
        live,
        pinned: fn.pinned?.revision === r.revision,
        ...(live ? {} : { rollbackAction: `${base}/rollback` }),
      };
    });
  if (!fn.pinned) return { rows };
  const commit = revisions.find((r) => r.revision === fn.pinned?.revision)?.commit;
  return {
    rows,
    pinned: {
      revision: fn.pinned.revision,
      ...(timeView(fn.pinned.since) ? { since: timeView(fn.pinned.since) } : {}),
      ...(commit ? { commitShort: shortCommit(commit) } : {}),
      gitManaged: fn.managedBy !== 'api',
      undoAction: `${base}/rollback/undo`,
    },
  };
}
