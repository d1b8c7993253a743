// A read-only view of one repository revision, the same for a git commit and a folder on disk,
// so discovery, manifests and code_hash are computed by one piece of code for both.
import type { FileMode } from './types.ts';

export type TreeEntryMode = FileMode | '040000' | '160000';

export interface TreeEntry {
  readonly name: string;
  readonly mode: TreeEntryMode;
  /** Git object id (blob or tree). Directories of a working tree have no id: ''. */
  readonly oid: string;
}

export interface SourceTree {
  /** Commit SHA for git; undefined for a working tree (the snapshot derives a content digest). */
  readonly revision?: string;
  /** Entries of the directory at a repo-relative posix path ('' = root); undefined when that path is not a directory. */
  readDir(dirPath: string): Promise<readonly TreeEntry[] | undefined>;
  /** Contents of the file at `filePath` whose entry has id `oid`. */
  readBlob(filePath: string, oid: string): Promise<Buffer>;
}

/** Joins repo-relative posix paths, '' being the root. */
export function joinPath(dir: string, name: string): string {
  return dir === '' ? name : `${dir}/${name}`;
}

/** Walks `path` one segment at a time from the root; undefined when a segment is missing. */
export async function lookupEntry(tree: SourceTree, path: string): Promise<TreeEntry | undefined> {
  const segments = path.split('/');
  let dir = '';
  let found: TreeEntry | undefined;
  for (const seg of segments) {
    if (found && found.mode !== '040000') return undefined;
    const entries = await tree.readDir(dir);
    found = entries?.find((e) => e.name === seg);
    if (!found) return undefined;
    dir = joinPath(dir, seg);
  }
  return found;
}
