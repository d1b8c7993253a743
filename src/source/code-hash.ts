// code_hash (docs/contract.md §1): one digest over a function's code that depends only on relative
// paths, file modes and contents, so a git tree, a working tree and an uploaded zip agree.
//
// Exact definition (keep it stable: every deployed Function's spec.codeHash depends on it):
//   code_hash = "sha256:" + hex(sha256(concat(sorted(lines))))
//   line      = "<mode> <blob-oid> <hash-path>\n"
//   mode      = 100644 (regular) | 100755 (executable) | 120000 (symlink; content = link target)
//   blob-oid  = git's blob id: hex(sha1("blob " + byteLength + "\0" + content))
//   hash-path = the path relative to the function directory for the function's own files, or
//               "/" + the repository-relative path for files that come from an `include` path
//               (a relative path never starts with "/", so the two can never collide).
// Lines are sorted by their UTF-8 bytes (plain string order on the hash paths' code units would
// differ for non-BMP characters). function.yaml (top level of the function directory), `.git`
// directories and files matched by `ignore`/.slessignore are left out before hashing
// (see function-files.ts); .slessignore itself counts, like any other file. The ignore patterns
// (gitignore semantics) are matched against the function-relative path of own files and against
// the repository-relative path of included files, so `*.test.js` or `fixtures/` drop such files
// from included folders too; they are matched in linear time (ignore-rules.ts), and patterns it
// refuses (too long, too many) make hashing throw IgnorePatternError.
import { createHash } from 'node:crypto';
import type { CodeFile } from './types.ts';
import { ignoreMatcher } from './ignore-rules.ts';
import type { FileMode } from './types.ts';

/** One file as it enters code_hash. */
export interface HashEntry {
  /** Relative to the function directory, or "/" + repo-relative path for included files. */
  readonly hashPath: string;
  readonly mode: FileMode;
  readonly oid: string;
}

export const MANIFEST_FILE = 'function.yaml';
export const IGNORE_FILE = '.slessignore';

/** Git's blob id of some content: sha1 over `blob <len>\0<content>`. */
export function blobOid(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** The code_hash of a list of files (order does not matter). */
export function codeHash(entries: readonly HashEntry[]): string {
  const lines = entries.map((e) => Buffer.from(`${e.mode} ${e.oid} ${e.hashPath}\n`, 'utf8'));
  lines.sort(Buffer.compare);
  const h = createHash('sha256');
  for (const line of lines) h.update(line);
  return `sha256:${h.digest('hex')}`;
}

/** True for paths that are never part of a function's code wherever they come from. */
export function isAlwaysExcluded(relPath: string): boolean {
  return relPath.split('/').includes('.git');
}

/**
 * code_hash of files given with their contents (an uploaded zip, or code a platform stored).
 * Paths are relative to the function directory; paths starting with "/" are included files, as in
 * `HashEntry.hashPath`. The same exclusions as for git trees apply: function.yaml at the top,
 * `.git`, the top-level .slessignore's patterns and the given `ignore` globs.
 */
export function hashFiles(files: readonly CodeFile[], globs: readonly string[] = []): string {
  const slessignore = files.find((f) => f.path === IGNORE_FILE);
  return hashOids(
    files.map((f) => ({ path: f.path, mode: f.mode, oid: blobOid(f.content) })),
    globs,
    slessignore?.content.toString('utf8'),
  );
}

/** code_hash of files whose blob ids are known (code unpacked on disk), with the same exclusions as hashFiles. Throws IgnorePatternError. */
export function hashOids(files: readonly { readonly path: string; readonly mode: FileMode; readonly oid: string }[], globs: readonly string[], slessignore?: string): string {
  const ignored = ignoreMatcher(globs, slessignore);
  const entries: HashEntry[] = [];
  for (const f of files) {
    const included = f.path.startsWith('/');
    const rel = included ? f.path.slice(1) : f.path;
    if (!included && f.path === MANIFEST_FILE) continue;
    if (isAlwaysExcluded(rel)) continue;
    if (ignored(rel)) continue;
    entries.push({ hashPath: f.path, mode: f.mode, oid: f.oid });
  }
  return codeHash(entries);
}
