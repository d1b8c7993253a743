// The files of one function with their contents, exactly the set its code_hash covers, for building
// its context (the build packs them) or for serving its source. Paths are hash paths: relative to
// the function folder, or "/" + repo-relative for included files, so `hashFiles(collected)` gives
// back the entry's code_hash.
import type { CodeFile } from './types.ts';
import { listManifestFiles } from './function-files.ts';
import type { SourceTree } from './source-tree.ts';
import type { FunctionEntry } from './types.ts';

export interface FunctionFileContent extends CodeFile {
  /** Repo-relative path of the file. */
  readonly repoPath: string;
}

export async function* readFunctionFiles(tree: SourceTree, entry: FunctionEntry): AsyncGenerator<FunctionFileContent> {
  const manifest = entry.manifest;
  if (!manifest) throw new Error(`function ${entry.name} (${entry.path || '.'}) has a broken manifest; fix its problems before reading its files`);
  const listed = await listManifestFiles(tree, entry.path, manifest);
  if (listed.problems.length > 0) {
    throw new Error(`function ${entry.name} (${entry.path || '.'}): ${listed.problems.map((p) => p.message).join('; ')}`);
  }
  const files = [...listed.files].sort((a, b) => (a.hashPath < b.hashPath ? -1 : a.hashPath > b.hashPath ? 1 : 0));
  for (const f of files) {
    yield { path: f.hashPath, repoPath: f.repoPath, mode: f.mode, content: await tree.readBlob(f.repoPath, f.oid) };
  }
}
