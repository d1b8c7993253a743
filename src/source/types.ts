// What the source layer hands to everything downstream: one snapshot of a repository's functions
// at one revision. Produced from a git tree, a working tree or an uploaded zip alike.
import type { FunctionManifest, ManifestProblem } from '../manifest/types.ts';

/** Git's file modes: regular, executable, symlink (content = link target). */
export type FileMode = '100644' | '100755' | '120000';

/** A file with its content: taken from an uploaded zip (already checked for zip-slip and size limits) or read from a tree. */
export interface CodeFile {
  readonly path: string;
  readonly mode: FileMode;
  readonly content: Buffer;
}

export interface FileEntry {
  /** Posix path relative to the repository root (or the zip root). */
  readonly path: string;
  readonly mode: FileMode;
  /** Git blob id (sha1 hex of `blob <len>\0<content>`), so git trees need no blob reads. */
  readonly oid: string;
}

export interface FunctionEntry {
  readonly name: string;
  /** Repo-relative directory holding function.yaml. */
  readonly path: string;
  /** Absent when the manifest is broken (then `problems` says why). */
  readonly manifest?: FunctionManifest;
  /** `sha256:<64 hex>`; absent when it could not be computed. */
  readonly codeHash?: string;
  readonly problems: readonly ManifestProblem[];
}

export interface Snapshot {
  /** Commit SHA for git sources; a content digest for working trees. */
  readonly revision: string;
  readonly functions: readonly FunctionEntry[];
}
