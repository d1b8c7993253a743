// Revisions, rollback and pinning (issue 33): the pure decisions both platforms take alike.
//
// A revision is a distinct (code_hash, config) that went live. Its number is given once: when the same
// code and config go live again (a rollback to it, a revert in git) the same revision is live again, with
// a new live_from. The last REVISIONS_KEPT revisions (by when they were last live) stay runnable: their
// images (prepared folders in `sless dev`) are never pruned. A pin says which revision serves whatever
// the function's spec (git's head, the last upload) asks for; new code still builds, but goes live only
// once the pin is removed.
import { createHash } from 'node:crypto';
import type { RevisionRecord } from './types.ts';

/** How many revisions per function are kept runnable (the live one always among them). */
export const REVISIONS_KEPT = 10;

/**
 * One revision. `C` is what the platform needs to run it again with no build (its config: entrypoint,
 * env, memory, timeout...; `sless dev` adds its prepared folder's key).
 */
export interface Revision<C> extends RevisionRecord {
  /** Identifies the config (configHash): with codeHash, what makes two revisions the same. */
  readonly configHash: string;
  readonly config: C;
}

/** The function serves `revision` whatever its spec says, since `since` (a rollback). */
export interface Pin {
  readonly revision: number;
  readonly since: string;
}

/** What went live: a revision before it has a number. */
export type LiveVersion<C> = Pick<Revision<C>, 'codeHash' | 'image' | 'commit' | 'configHash' | 'config'>;

/** A stable digest of a config (keys sorted at every level), the config's identity in a revision. */
export function configHashOf(config: unknown): string {
  return `sha256:${createHash('sha256').update(JSON.stringify(sorted(config))).digest('hex')}`;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, sorted(v)]),
  );
}

/** The revision that serves now (none before anything went live). */
export function liveRevision<C>(revisions: readonly Revision<C>[]): Revision<C> | undefined {
  return revisions.find((r) => r.liveUntil === undefined);
}

/**
 * The revisions after `live` went live at `now`: unchanged when it is the live revision already (its image
 * refreshed: a new base image rebuilds the same code); else the live one ends, and `live` is the revision
 * with the same code and config (live again) or a new one numbered after the highest. Keeps the `keep`
 * most recently live ones, ordered by number.
 */
export function recordLive<C>(revisions: readonly Revision<C>[], live: LiveVersion<C>, now: string, keep: number = REVISIONS_KEPT): Revision<C>[] {
  const same = (r: Revision<C>) => r.codeHash === live.codeHash && r.configHash === live.configHash;
  const current = liveRevision(revisions);
  if (current && same(current)) {
    if (current.image === live.image) return [...revisions];
    return revisions.map((r) => (r === current ? { ...r, image: live.image } : r));
  }
  const earlier = revisions.find(same);
  const next: Revision<C> = {
    revision: earlier?.revision ?? Math.max(0, ...revisions.map((r) => r.revision)) + 1,
    codeHash: live.codeHash,
    image: live.image,
    ...(live.commit ?? earlier?.commit ? { commit: live.commit ?? earlier?.commit } : {}),
    liveFrom: now,
    configHash: live.configHash,
    config: live.config,
  };
  const rest = revisions.filter((r) => r !== earlier).map((r) => (r === current ? { ...r, liveUntil: now } : r));
  const byRecency = [...rest].sort((a, b) => (b.liveUntil ?? '').localeCompare(a.liveUntil ?? '') || b.revision - a.revision);
  return [next, ...byRecency.slice(0, Math.max(0, keep - 1))].sort((a, b) => a.revision - b.revision);
}

/** What a rollback asks for: the revision to serve, or why there is none (a one-line message for a 4xx). */
export type RollbackTarget<C> = { readonly ok: true; readonly revision: Revision<C> } | { readonly ok: false; readonly message: string };

/**
 * The revision a rollback serves: `requested` when it is one of the kept revisions; without one, the
 * highest-numbered revision below the live one (the one before it).
 */
export function rollbackTarget<C>(fn: string, revisions: readonly Revision<C>[], requested?: number): RollbackTarget<C> {
  const numbers = revisions.map((r) => r.revision).join(', ');
  if (revisions.length === 0) return { ok: false, message: `function ${fn} has no revisions yet: nothing of it has served` };
  if (requested !== undefined) {
    const found = revisions.find((r) => r.revision === requested);
    if (found) return { ok: true, revision: found };
    return { ok: false, message: `function ${fn} has no revision ${requested}; its kept revisions are ${numbers}` };
  }
  const live = liveRevision(revisions);
  if (!live) return { ok: false, message: `function ${fn} serves no revision now; name one: ${numbers}` };
  const before = revisions.filter((r) => r.revision < live.revision).sort((a, b) => b.revision - a.revision)[0];
  if (!before) return { ok: false, message: `function ${fn} has no revision before the live one (${live.revision}); its kept revisions are ${numbers}` };
  return { ok: true, revision: before };
}

/** The message of condition Pinned=True (and the console's banner). */
export function pinnedMessage(revision: Pick<Revision<unknown>, 'revision' | 'commit'>, gitManaged: boolean): string {
  const at = `serving revision ${revision.revision}${revision.commit ? ` (commit ${shortCommit(revision.commit)})` : ''}`;
  return gitManaged
    ? `${at}; git is ahead: push a fix or undo the rollback`
    : `${at}; newer code and settings wait: upload a fix or undo the rollback`;
}

/** A git commit as people quote it (7 hex digits); a folder's `sha256:` revision keeps 12 after its prefix. */
export function shortCommit(commit: string): string {
  return commit.startsWith('sha256:') ? commit.slice(0, 'sha256:'.length + 12) : commit.slice(0, 7);
}

/** The message when a pin names a revision that is no longer kept (removed by hand, or status lost). */
export function missingPinMessage(pin: Pin): string {
  return `pinned to revision ${pin.revision}, which is not among the kept revisions: undo the rollback or roll back to a kept one`;
}

/** Images (or prepared folders) that pruning must keep: every kept revision's. */
export function keptImages(revisions: readonly Pick<Revision<unknown>, 'image'>[]): Set<string> {
  return new Set(revisions.map((r) => r.image));
}

/** A pin read from outside (an annotation, state.json): a Pin, or why it is not one. */
export function parsePin(text: string): Pin | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return `not JSON: ${JSON.stringify(text.slice(0, 80))}`;
  }
  const v = value as Partial<Pin> | null;
  if (typeof v !== 'object' || v === null) return 'not a JSON object';
  if (typeof v.revision !== 'number' || !Number.isInteger(v.revision) || v.revision < 1) return 'revision must be a whole number >= 1';
  if (typeof v.since !== 'string' || Number.isNaN(Date.parse(v.since))) return 'since must be a time (RFC 3339)';
  return { revision: v.revision, since: v.since };
}

/** A revision as the Platform port shows it: without the platform's config. */
export function revisionRecord<C>(r: Revision<C>): RevisionRecord {
  return {
    revision: r.revision,
    codeHash: r.codeHash,
    image: r.image,
    ...(r.commit ? { commit: r.commit } : {}),
    liveFrom: r.liveFrom,
    ...(r.liveUntil ? { liveUntil: r.liveUntil } : {}),
  };
}
