// What `sless dev` remembers between runs, in <data-dir>/state.json: the last synced snapshot (so a
// restart plans against it instead of rebuilding everything), every function with the prepared
// folder it runs from, triggers, and job results with the last run_id per job (a job runs again only
// when its run_id grows). Written atomically (temp file + rename) after every change.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FunctionManifest } from '../../manifest/types.ts';
import type { BaseImages } from '../../plan/plan-changes.ts';
import type { PreviewFunctionPlan } from '../../preview/preview-plan.ts';
import type { Snapshot } from '../../source/types.ts';
import type { TreeLimitReason } from '../../source/tree-limits.ts';
import type { FunctionRecord, JobRecord, PinRecord, RepositoryFunctionStatus, TriggerRecord } from '../types.ts';
import type { LocalRevision } from './local-revisions.ts';

export interface StoredFunction {
  readonly record: FunctionRecord;
  /** The prepared folder's key (builds/<buildKey>); absent until code exists. */
  readonly buildKey?: string;
  /** For git functions: the manifest of the last good version (schedules, jobs, include...). */
  readonly manifest?: FunctionManifest;
  /** For git functions: the folder in the repository. */
  readonly path?: string;
  /** For git functions: the commit the record's version comes from (a revision that goes live names it). */
  readonly commit?: string;
  /** The kept revisions (../revisions.ts): their prepared folders are never pruned. */
  readonly revisions?: readonly LocalRevision[];
  /** Set by a rollback: this revision serves, whatever the record asks for, until the rollback is undone. */
  readonly pinned?: PinRecord;
}

export interface StoredRepository {
  readonly revision?: string;
  readonly lastSyncTime?: string;
  /** `plan.applied` of the last sync: what runs (broken functions keep their last good entry). */
  readonly snapshot?: Snapshot;
  readonly baseImages?: BaseImages;
  readonly lastError?: string;
  /** The reason of lastError when it has its own (TreeTooDeep, PathTooLong, TreeTooLarge); else SyncFailed. */
  readonly lastErrorReason?: TreeLimitReason;
  /** Status per function of the last synced revision, broken ones included. */
  readonly functions?: readonly RepositoryFunctionStatus[];
}

/** A pull request's preview (local-previews.ts): what its last plan said and what its sync applied. */
export interface StoredPreview {
  readonly number: number;
  readonly namespace: string;
  readonly branch: string;
  /** The head commit last read. */
  readonly head: string;
  /** When the head last changed (the ttl counts from here). */
  readonly updatedAt: string;
  readonly functions: readonly PreviewFunctionPlan[];
  /** The preview namespace's own sync slot (what it built). */
  readonly repository: StoredRepository;
}

export interface LocalStateData {
  readonly version: 1;
  repository: StoredRepository;
  functions: Record<string, StoredFunction>;
  triggers: Record<string, TriggerRecord>;
  jobs: Record<string, JobRecord>;
  namespaces: string[];
  /** By PR number. */
  previews?: Record<string, StoredPreview>;
}

export function emptyState(): LocalStateData {
  return { version: 1, repository: {}, functions: {}, triggers: {}, jobs: {}, namespaces: [] };
}

export function stateKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class LocalState {
  readonly #file: string;
  data: LocalStateData = emptyState();
  #writing: Promise<void> = Promise.resolve();

  constructor(dataDir: string) {
    this.#file = path.join(dataDir, 'state.json');
  }

  /**
   * Reads state.json. What cannot be used never stops a start: a file that is not JSON is moved
   * aside (state.json.unreadable-<time>) and the state starts empty; entries of the wrong shape are
   * dropped. Returns one line per problem, for the caller to report.
   */
  async load(): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(this.#file, 'utf8');
    } catch {
      this.data = emptyState();
      return [];
    }
    let parsed: Partial<LocalStateData>;
    try {
      parsed = JSON.parse(text) as Partial<LocalStateData>;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not a JSON object');
    } catch (err) {
      const aside = `${this.#file}.unreadable-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      await rename(this.#file, aside).catch(() => undefined);
      this.data = emptyState();
      return [`${this.#file} is not valid JSON (${(err as Error).message}); moved to ${aside}, starting from an empty state`];
    }
    if (parsed.version !== 1) {
      this.data = emptyState();
      return [`${this.#file} has version ${JSON.stringify(parsed.version)}, not 1; starting from an empty state`];
    }
    const problems: string[] = [];
    const keep = <T>(what: string, entries: unknown, ok: (v: Record<string, unknown>) => string | undefined): Record<string, T> => {
      const out: Record<string, T> = {};
      if (typeof entries !== 'object' || entries === null) return out;
      for (const [key, value] of Object.entries(entries)) {
        const why = typeof value === 'object' && value !== null ? ok(value as Record<string, unknown>) : 'not an object';
        if (why) problems.push(`stored ${what} ${key} skipped: ${why}`);
        else out[key] = value as T;
      }
      return out;
    };
    const named = (v: Record<string, unknown>): string | undefined =>
      typeof v.name === 'string' && typeof v.namespace === 'string' ? undefined : 'no name/namespace';
    this.data = {
      ...emptyState(),
      repository: typeof parsed.repository === 'object' && parsed.repository !== null ? parsed.repository : {},
      namespaces: Array.isArray(parsed.namespaces) ? parsed.namespaces.filter((n): n is string => typeof n === 'string') : [],
      functions: keep<StoredFunction>('function', parsed.functions, (v) => {
        const record = v.record as Record<string, unknown> | undefined;
        if (typeof record !== 'object' || record === null) return 'no record';
        return named(record) ?? (typeof record.runtime === 'string' ? undefined : 'no runtime');
      }),
      triggers: keep<TriggerRecord>('trigger', parsed.triggers, (v) => named(v) ?? (typeof v.type === 'string' ? undefined : 'no type')),
      jobs: keep<JobRecord>('job', parsed.jobs, (v) => named(v) ?? (typeof v.runId === 'number' ? undefined : 'run_id is not a number')),
      previews: keep<StoredPreview>('preview', parsed.previews, (v) =>
        typeof v.number === 'number' && typeof v.namespace === 'string' && typeof v.branch === 'string' && Array.isArray(v.functions) ? undefined : 'no number/namespace/branch/functions',
      ),
    };
    return problems;
  }

  /** Serialised: each save writes the state as it is when its turn comes. */
  save(): Promise<void> {
    const next = this.#writing.then(async () => {
      await mkdir(path.dirname(this.#file), { recursive: true });
      const tmp = `${this.#file}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(this.data, null, 1));
      await rename(tmp, this.#file);
    });
    this.#writing = next.catch(() => undefined);
    return next;
  }
}
