// Discovery + manifests + code_hash for one revision: the Snapshot everything downstream plans from.
// A directory holding function.yaml is one function and is not searched further; `.git` and
// `node_modules` are never searched. Every problem stays with its own function: one broken folder
// never blocks the others. A SnapshotBuilder remembers each function's result by its directory's
// tree oid (and its include paths' oids), so a sync after a one-file push parses one manifest.
import { createHash } from 'node:crypto';
import { findDuplicateNames } from './find-duplicate-names.ts';
import { manifestCapsOf, type ManifestCaps } from '../manifest/defaults.ts';
import { parseManifest } from '../manifest/parse-manifest.ts';
import type { ManifestProblem } from '../manifest/types.ts';
import { codeHash, MANIFEST_FILE } from './code-hash.ts';
import { listManifestFiles, normalizeIncludePath } from './function-files.ts';
import type { SourceTree, TreeEntry } from './source-tree.ts';
import { joinPath, lookupEntry } from './source-tree.ts';
import { boundedTree, DEFAULT_TREE_LIMITS, type TreeLimits } from './tree-limits.ts';
import type { FunctionEntry, Snapshot } from './types.ts';

const NEVER_SEARCHED = new Set(['.git', 'node_modules']);

/** The caps (ManifestCaps): a function.yaml over one has a problem. */
export interface SnapshotOptions extends ManifestCaps {
  /** Repo-relative folder to search (docs/contract.md §2: FunctionRepository spec.path); '' or '.' = the root. */
  readonly path?: string;
  /** Where the user sets `path`, named in errors: `spec.path` (default) or `--path` (sless dev). */
  readonly pathSetting?: string;
}

interface Memo {
  readonly dirOid: string;
  /** Oids of the include paths the result depended on. */
  readonly includeKey: string;
  readonly entry: FunctionEntry;
}

/** Normalises a watched path: '', '.', './functions/', '/functions' all name repo-relative folders. */
export function normalizeWatchedPath(p: string | undefined): string {
  return (p ?? '')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

export class SnapshotBuilder {
  private memo = new Map<string, Memo>();

  /** `limits` bound the revision's shape while it is walked (tree-limits.ts): past one, build() throws TreeLimitError. */
  constructor(private readonly limits: TreeLimits = DEFAULT_TREE_LIMITS) {}

  async build(source: SourceTree, options: SnapshotOptions = {}): Promise<Snapshot> {
    const tree = boundedTree(source, this.limits);
    const root = normalizeWatchedPath(options.path);
    const setting = options.pathSetting ?? 'spec.path';
    if (root.split('/').includes('..')) throw new Error(`watched path "${options.path}" must stay inside the repository; remove ".." from ${setting}`);
    const rootEntries = await tree.readDir(root);
    if (!rootEntries) {
      throw new Error(
        `the watched path "${root || '.'}" is not a folder in the repository${tree.revision ? ` at ${tree.revision}` : ''}; fix ${setting} or push that folder`,
      );
    }
    const found: Found[] = [];
    // A folder whose tree oid a remembered function had is that function still: not even listed again.
    await discover(tree, root, rootEntries, '', found, (dir, oid) => this.memo.get(dir)?.dirOid === oid);

    const nextMemo = new Map<string, Memo>();
    const entries: FunctionEntry[] = [];
    const rest: Found[] = [];
    // Most functions have no include paths: a remembered result for the same folder oid holds as it is.
    for (const f of found) {
      const old = this.memo.get(f.dir);
      if (old && f.dirOid !== '' && old.dirOid === f.dirOid && old.includeKey === '' && !old.entry.manifest?.include?.length) {
        nextMemo.set(f.dir, old);
        entries.push(old.entry);
      } else rest.push(f);
    }
    const read = await Promise.all(
      rest.map(async (f) => {
        const old = this.memo.get(f.dir);
        if (old && f.dirOid !== '' && old.dirOid === f.dirOid && old.includeKey === (await includeKey(tree, old.entry))) {
          nextMemo.set(f.dir, old);
          return old.entry;
        }
        const entry = await readFunction(tree, f.dir, f.entries ?? (await tree.readDir(f.dir)) ?? [], manifestCapsOf(options));
        if (f.dirOid !== '') nextMemo.set(f.dir, { dirOid: f.dirOid, includeKey: await includeKey(tree, entry), entry });
        return entry;
      }),
    );
    entries.push(...read);
    this.memo = nextMemo;
    const functions = findDuplicateNames(entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)));
    return { revision: tree.revision ?? contentDigest(functions), functions };
  }
}

/** One-off snapshot (CLI, tests); long-lived callers keep a SnapshotBuilder for its memo. */
export function buildSnapshot(tree: SourceTree, options: SnapshotOptions = {}): Promise<Snapshot> {
  return new SnapshotBuilder().build(tree, options);
}

/** A function folder found; `entries` undefined when it was known by its oid and not listed. */
interface Found {
  readonly dir: string;
  readonly dirOid: string;
  readonly entries?: readonly TreeEntry[];
}

async function discover(
  tree: SourceTree,
  dir: string,
  entries: readonly TreeEntry[],
  dirOid: string,
  out: Found[],
  knownFunction: (dir: string, oid: string) => boolean,
): Promise<void> {
  if (entries.some((e) => e.name === MANIFEST_FILE && e.mode !== '040000')) {
    out.push({ dir, dirOid, entries });
    return;
  }
  await Promise.all(
    entries
      .filter((e) => e.mode === '040000' && !NEVER_SEARCHED.has(e.name))
      .map(async (e) => {
        const child = joinPath(dir, e.name);
        if (e.oid !== '' && knownFunction(child, e.oid)) {
          out.push({ dir: child, dirOid: e.oid });
          return;
        }
        const sub = await tree.readDir(child);
        if (sub) await discover(tree, child, sub, e.oid, out, knownFunction);
      }),
  );
}

async function readFunction(tree: SourceTree, dir: string, entries: readonly TreeEntry[], caps: ManifestCaps): Promise<FunctionEntry> {
  const file = joinPath(dir, MANIFEST_FILE);
  const dirName = dir === '' ? 'root' : dir.slice(dir.lastIndexOf('/') + 1);
  const manifestEntry = entries.find((e) => e.name === MANIFEST_FILE);
  if (manifestEntry?.mode === '120000') {
    return { name: dirName, path: dir, problems: [{ file, line: 0, key: '', message: 'function.yaml is a symlink; make it a regular file' }] };
  }
  const text = (await tree.readBlob(file, manifestEntry?.oid ?? '')).toString('utf8');
  const parsed = parseManifest(text, { file, dirName, ...caps });
  const manifest = parsed.manifest;
  // The parser's own reading of the name (a valid `name:`, else the folder's): one rule for it.
  if (!manifest) return { name: parsed.name, path: dir, problems: parsed.problems };

  const listed = await listManifestFiles(tree, dir, manifest, text);
  const problems: ManifestProblem[] = [...parsed.problems, ...listed.problems];
  if (problems.length > 0) return { name: manifest.name, path: dir, problems };
  return { name: manifest.name, path: dir, manifest, codeHash: codeHash(listed.files), problems };
}

/** What a function's result depends on outside its own folder: the ids of its include paths. */
async function includeKey(tree: SourceTree, entry: FunctionEntry): Promise<string> {
  const include = entry.manifest?.include ?? [];
  const parts = await Promise.all(
    include.map(async (raw) => {
      const norm = normalizeIncludePath(raw);
      if ('error' in norm) return '!';
      const e = await lookupEntry(tree, norm.path);
      return e ? `${e.mode}:${e.oid}` : '-';
    }),
  );
  return parts.join(',');
}

function contentDigest(functions: readonly FunctionEntry[]): string {
  const h = createHash('sha256');
  for (const f of functions) h.update(`${f.path}\0${f.name}\0${f.codeHash ?? ''}\0${JSON.stringify(f.manifest ?? null)}\0${f.problems.length}\n`);
  return `sha256:${h.digest('hex')}`;
}
