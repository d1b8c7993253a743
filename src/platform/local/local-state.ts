// What `sless dev` remembers between runs, in <data-dir>/state.json: the last synced snapshot (so a
// restart plans against it instead of rebuilding everything), every function with the prepared
// folder it runs from, triggers, and job results with the last run_id per job (a job runs again only
// when its run_id grows). Written atomically (temp file + rename) after every change.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FunctionManifest } from '../../manifest/types.ts';
import type { BaseImages } from '../../plan/plan-changes.ts';
import type { Snapshot } from '../../source/types.ts';
import type { FunctionRecord, JobRecord, RepositoryFunctionStatus, TriggerRecord } from '../types.ts';

export interface StoredFunction {
  readonly record: FunctionRecord;
  /** The prepared folder's key (builds/<buildKey>); absent until code exists. */
  readonly buildKey?: string;
  /** For git functions: the manifest of the last good version (schedules, jobs, include...). */
  readonly manifest?: FunctionManifest;
  /** For git functions: the folder in the repository. */
  readonly path?: string;
}

export interface StoredRepository {
  readonly revision?: string;
  readonly lastSyncTime?: string;
  /** `plan.applied` of the last sync: what runs (broken functions keep their last good entry). */
  readonly snapshot?: Snapshot;
  readonly baseImages?: BaseImages;
  readonly lastError?: string;
  /** Status per function of the last synced revision, broken ones included. */
  readonly functions?: readonly RepositoryFunctionStatus[];
}

export interface LocalStateData {
  readonly version: 1;
  repository: StoredRepository;
  functions: Record<string, StoredFunction>;
  triggers: Record<string, TriggerRecord>;
  jobs: Record<string, JobRecord>;
  namespaces: string[];
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

  async load(): Promise<void> {
    let text: string;
    try {
      text = await readFile(this.#file, 'utf8');
    } catch {
      this.data = emptyState();
      return;
    }
    try {
      const parsed = JSON.parse(text) as Partial<LocalStateData>;
      this.data = parsed.version === 1 ? { ...emptyState(), ...parsed, version: 1 } : emptyState();
    } catch (err) {
      throw new Error(`${this.#file} is not valid JSON; delete it (sless dev then rebuilds what it needs)`, { cause: err });
    }
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
