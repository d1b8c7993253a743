// When a sync may stop right after ls-remote (issue 15: one push among 100 busy repositories). A sync
// that applied everything its revision wants leaves a memo; the next sync of the same repository stops
// once ls-remote names that revision again, before the snapshot (tree reads, code hashes), the comparison
// with the live objects, the commit status and the status write, as long as nothing else that decides
// what it would apply changed. What invalidates the memo, so the sync runs in full:
//   - another remote head (a push, a force-push, a branch reset);
//   - the repository's metadata.generation (any spec change: url, branch, path, prune, secretRef,
//     commitStatus, interval) and its uid (deleted and made again);
//   - anything of the objects it owns that the comparison reads (fingerprintOwned): one created,
//     deleted or being deleted, a spec edited by hand (its generation), its labels, annotations or
//     owners changed: the full sync then heals that drift as before;
//   - the git source itself (another url, branch or credentials: a new cache, no memo);
//   - a sync that was not wholly Ready (a broken folder, a name taken, a failed upload, a refusal):
//     no memo is kept, so it is tried in full every time;
//   - age: one full sync at least every FULL_SYNC_EVERY_MS, whatever the memo says;
//   - a controller restart (the memo is in memory; settings such as the function caps and base images
//     are fixed for a process's life).
// A sync request (the requestedAt annotation, a webhook) does not invalidate it: it asks for "look at
// git now", and the ls-remote does that.
import { createHash } from 'node:crypto';
import type { RepositoryStatus } from '../objects/resources.ts';
import type { RepositoryReason } from '../../reasons.ts';
import type { Outcome } from './conditions.ts';
import type { StatusFields } from './status-writer.ts';

/** The longest a memo stands in for a full sync. */
export const FULL_SYNC_EVERY_MS = 10 * 60_000;

export interface AppliedSync {
  readonly revision: string;
  readonly repository: string;
  readonly owned: string;
  /** ms since the epoch when the full sync that left this memo ran. */
  readonly at: number;
  /** What that sync reported (status fields and outcome), to report again. */
  readonly outcome: Outcome<RepositoryReason>;
  readonly status: StatusFields<RepositoryStatus>;
}

export interface CurrentSync {
  readonly revision: string;
  readonly repository: string;
  readonly owned: string;
  readonly now: number;
}

interface Owned {
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly uid?: string;
    readonly generation?: number;
    readonly deletionTimestamp?: unknown;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly ownerReferences?: ReadonlyArray<{ readonly uid?: string }>;
  };
}

/** The repository as far as a sync reads it: its identity and spec generation. */
export function fingerprintRepository(repo: Owned): string {
  return `${repo.metadata?.uid ?? ''}:${repo.metadata?.generation ?? ''}`;
}

/**
 * What the comparison with the live objects reads of the owned objects, in a stable order, as a sha256
 * digest: the rows themselves came to 786 KB per memo at 1,000 functions. A status write changes none of it
 * (no generation bump), so the Function reconciler's work does not invalidate the memo.
 */
export function fingerprintOwned(groups: ReadonlyArray<readonly Owned[]>): string {
  const rows: string[] = [];
  for (const [i, list] of groups.entries()) {
    for (const o of list) {
      const m = o.metadata ?? {};
      rows.push(
        JSON.stringify([
          i,
          m.name ?? '',
          m.uid ?? '',
          m.generation ?? 0,
          m.deletionTimestamp ? 1 : 0,
          sorted(m.labels),
          sorted(m.annotations),
          (m.ownerReferences ?? []).map((r) => r.uid ?? ''),
        ]),
      );
    }
  }
  const hash = createHash('sha256');
  for (const row of rows.sort()) hash.update(row).update('\n');
  return hash.digest('hex');
}

/** True when `current` may report `memo` again instead of syncing in full. */
export function unchangedSince(memo: AppliedSync | undefined, current: CurrentSync, maxAgeMs = FULL_SYNC_EVERY_MS): memo is AppliedSync {
  if (!memo) return false;
  if (memo.outcome.kind !== 'ready') return false;
  if (current.now - memo.at >= maxAgeMs || current.now < memo.at) return false;
  return memo.revision === current.revision && memo.repository === current.repository && memo.owned === current.owned;
}

function sorted(record: Readonly<Record<string, string>> | undefined): Array<[string, string]> {
  return Object.entries(record ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
