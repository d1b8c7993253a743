// One revision of a repository as both platforms read it: its snapshot and, per function, its files.
// `sless dev` reads the watched branch through a RepositoryReader; previews read a PR's head the same way.
import type { ManifestCaps } from '../manifest/defaults.ts';
import type { SnapshotBuilder } from './build-snapshot.ts';
import { readFunctionFiles } from './read-function-files.ts';
import type { SourceTree } from './source-tree.ts';
import type { CodeFile, FunctionEntry, Snapshot } from './types.ts';

export interface RepositoryRead {
  readonly snapshot: Snapshot;
  /** The code of one function of this snapshot (own files relative, included files "/"-prefixed). */
  files(entry: FunctionEntry): AsyncIterable<CodeFile>;
}

export interface RepositoryReader {
  /** For status and logs; never contains credentials. */
  readonly displayUrl: string;
  readonly branch: string;
  readonly path: string;
  read(): Promise<RepositoryRead>;
  /** Releases connections (a fetched repository's HTTP agent). */
  close?(): Promise<void>;
}

/** A git URL, as opposed to a path on disk. */
export function isGitUrl(repo: string): boolean {
  return /^(https?|git|ssh|file):\/\//i.test(repo) || /^[\w.-]+@[\w.-]+:/.test(repo);
}

/** A revision's snapshot and its files, read from a source tree. */
export function readerOver(snapshots: SnapshotBuilder, watched: string, tree: SourceTree, caps: ManifestCaps): Promise<RepositoryRead> {
  return snapshots.build(tree, { path: watched, pathSetting: '--path', ...caps }).then((snapshot) => ({
    snapshot,
    files: (entry) => readFunctionFiles(tree, entry),
  }));
}
