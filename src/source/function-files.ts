// Which files make up a function's code: its own directory plus its `include` paths, minus
// function.yaml, `.git`, `ignore`/.slessignore matches (rules in code-hash.ts). Works on tree
// entries only (modes + blob ids); the only blobs read are symlink targets, to refuse links that
// leave the function folder (or the include path) — such links are problems, never followed.
import path from 'node:path';
import type { ManifestProblem } from '../manifest/types.ts';
import { IGNORE_FILE, isAlwaysExcluded, MANIFEST_FILE } from './code-hash.ts';
import { ignoreMatcher, ignoreProblems } from './ignore-rules.ts';
import type { HashEntry } from './code-hash.ts';
import type { SourceTree, TreeEntry } from './source-tree.ts';
import { joinPath } from './source-tree.ts';
import type { FileMode } from './types.ts';
import { linkLayoutProblems } from './link-layout.ts';
import { lineOfKey } from './yaml-lines.ts';

export interface FunctionFile extends HashEntry {
  /** Repo-relative path, for reading the blob. */
  readonly repoPath: string;
}

export interface FunctionFilesInput {
  /** Repo-relative function directory. */
  readonly dir: string;
  readonly include: readonly string[];
  readonly ignored: (relPath: string) => boolean;
  /** The manifest text, only to give include problems a line number. */
  readonly manifestText: string;
}

export interface FunctionFileList {
  readonly files: readonly FunctionFile[];
  readonly problems: readonly ManifestProblem[];
}

/** A repo-relative include path in normal form, or a reason why it is not acceptable. */
export function normalizeIncludePath(raw: string): { path: string } | { error: string } {
  if (raw.trim() === '') return { error: 'must not be empty' };
  if (raw.startsWith('/') || /^[A-Za-z]:[\\/]/.test(raw) || raw.includes('\\')) {
    return { error: `"${raw}" must be a repository-relative path with forward slashes` };
  }
  const segments = raw.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return { error: `"${raw}" must not contain ".." (paths outside the repository are never followed)` };
  if (segments.length === 0) return { error: `"${raw}" names the whole repository; name a folder or file inside it` };
  return { path: segments.join('/') };
}

/** True when a symlink at `linkRel` (relative to some root) with `target` points inside that root. */
export function symlinkStaysInside(linkRel: string, target: string): boolean {
  if (target === '' || target.startsWith('/') || target.includes('\\') || /^[A-Za-z]:/.test(target)) return false;
  const resolved = path.posix.normalize(path.posix.join(path.posix.dirname(linkRel), target));
  return resolved !== '..' && !resolved.startsWith('../') && resolved !== '.';
}

function isFileMode(mode: TreeEntry['mode']): mode is FileMode {
  return mode === '100644' || mode === '100755' || mode === '120000';
}

interface WalkRoot {
  /** Repo-relative directory walked. */
  readonly repoDir: string;
  /** Maps a path relative to repoDir to the hash path. */
  readonly hashPathOf: (rel: string) => string;
  /** What ignore patterns are matched against. */
  readonly ignorePathOf: (rel: string) => string;
  readonly isFunctionDir: boolean;
  /** What a symlink must stay inside of, for the message. */
  readonly what: string;
}

export async function listFunctionFiles(tree: SourceTree, input: FunctionFilesInput): Promise<FunctionFileList> {
  const files = new Map<string, FunctionFile>();
  const linkTargets = new Map<string, string>();
  const problems: ManifestProblem[] = [];
  const manifestFile = joinPath(input.dir, MANIFEST_FILE);
  const insideFunction = (p: string): boolean => input.dir === '' || p === input.dir || p.startsWith(`${input.dir}/`);

  const walk = async (root: WalkRoot, rel: string, entries: readonly TreeEntry[]): Promise<void> => {
    await Promise.all(
      entries.map(async (e) => {
        const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
        const repoPath = joinPath(root.repoDir, childRel);
        if (isAlwaysExcluded(childRel)) return;
        if (root.isFunctionDir && childRel === MANIFEST_FILE) return;
        // An included folder that contains this function must not count the function's files twice.
        if (!root.isFunctionDir && insideFunction(repoPath)) return;
        if (e.mode === '040000') {
          if (input.ignored(`${root.ignorePathOf(childRel)}/`)) return;
          const sub = await tree.readDir(repoPath);
          if (sub) await walk(root, childRel, sub);
          return;
        }
        if (!isFileMode(e.mode)) return; // submodules (gitlinks) carry no content of their own
        if (input.ignored(root.ignorePathOf(childRel))) return;
        if (e.mode === '120000') {
          const target = (await tree.readBlob(repoPath, e.oid)).toString('utf8');
          if (!symlinkStaysInside(childRel, target)) {
            problems.push({
              file: repoPath,
              line: 0,
              key: '',
              message: `symlink to "${target}" leaves ${root.what}; symlinks are never followed out of it — replace it with a copy or an include path`,
            });
            return;
          }
          linkTargets.set(repoPath, target);
        }
        files.set(repoPath, { hashPath: root.hashPathOf(childRel), repoPath, mode: e.mode, oid: e.oid });
      }),
    );
  };

  const own = await tree.readDir(input.dir);
  if (own) {
    await walk(
      { repoDir: input.dir, hashPathOf: (r) => r, ignorePathOf: (r) => r, isFunctionDir: true, what: `the function folder ${input.dir || '.'}` },
      '',
      own,
    );
  }

  await Promise.all(
    input.include.map(async (raw, i) => {
      const problem = (message: string): void => {
        problems.push({ file: manifestFile, line: lineOfKey(input.manifestText, ['include', i]), key: `include[${i}]`, message });
      };
      const norm = normalizeIncludePath(raw);
      if ('error' in norm) return problem(norm.error);
      const resolved = await resolveInclude(tree, norm.path);
      if ('error' in resolved) return problem(resolved.error);
      const { entry } = resolved;
      if (entry.mode === '040000') {
        const entries = await tree.readDir(norm.path);
        if (entries) {
          await walk(
            {
              repoDir: norm.path,
              hashPathOf: (r) => `/${norm.path}/${r}`,
              ignorePathOf: (r) => `${norm.path}/${r}`,
              isFunctionDir: false,
              what: `the included folder ${norm.path}`,
            },
            '',
            entries,
          );
        }
        return;
      }
      if (entry.mode === '100644' || entry.mode === '100755') {
        if (insideFunction(norm.path)) return;
        if (input.ignored(norm.path)) return;
        files.set(norm.path, { hashPath: `/${norm.path}`, repoPath: norm.path, mode: entry.mode, oid: entry.oid });
        return;
      }
      problem(`"${raw}" is a ${entry.mode === '120000' ? 'symlink' : 'submodule'}; include a real folder or file`);
    }),
  );

  // Each link above stays inside on its own; together (a link through a link, an include written
  // through an own link) they must too, where the build writes them.
  const byPlace = new Map([...files.values()].map((f) => [placeOfHashPath(f.hashPath), f]));
  const layout = linkLayoutProblems(
    [...byPlace].map(([place, f]) => ({ path: place, mode: f.mode, target: linkTargets.get(f.repoPath) })),
  );
  for (const p of layout) problems.push({ file: byPlace.get(p.path)?.repoPath ?? p.path, line: 0, key: '', message: p.message });
  return { files: [...files.values()], problems };
}

/** Where a file lands in the function's build folder: included files at their repository path. */
export function placeOfHashPath(hashPath: string): string {
  return hashPath.startsWith('/') ? hashPath.slice(1) : hashPath;
}

async function resolveInclude(tree: SourceTree, repoPath: string): Promise<{ entry: TreeEntry } | { error: string }> {
  const segments = repoPath.split('/');
  let dir = '';
  for (let i = 0; i < segments.length; i++) {
    const entries = await tree.readDir(dir);
    const entry = entries?.find((e) => e.name === segments[i]);
    if (!entry) return { error: `"${repoPath}" does not exist in the repository` };
    const soFar = joinPath(dir, segments[i] ?? '');
    if (i === segments.length - 1) return { entry };
    if (entry.mode === '120000') return { error: `"${repoPath}" passes through the symlink ${soFar}; symlinks are never followed` };
    if (entry.mode !== '040000') return { error: `"${repoPath}" does not exist in the repository (${soFar} is not a folder)` };
    dir = soFar;
  }
  return { error: `"${repoPath}" does not exist in the repository` };
}

/** The file list of a function with a valid manifest, reading its .slessignore first. */
export async function listManifestFiles(
  tree: SourceTree,
  dir: string,
  manifest: { readonly include: readonly string[]; readonly ignore: readonly string[] },
  manifestText = '',
): Promise<FunctionFileList> {
  const entries = (await tree.readDir(dir)) ?? [];
  const ignoreEntry = entries.find((e) => e.name === IGNORE_FILE && (e.mode === '100644' || e.mode === '100755'));
  const slessignore = ignoreEntry ? (await tree.readBlob(joinPath(dir, IGNORE_FILE), ignoreEntry.oid)).toString('utf8') : undefined;
  // Patterns the matcher refuses are the function's problems, each where it is written.
  const refused = ignoreProblems(manifest.ignore, slessignore);
  if (refused.length > 0) {
    const manifestFile = joinPath(dir, MANIFEST_FILE);
    return {
      files: [],
      problems: refused.map((p) =>
        p.source === 'ignore'
          ? { file: manifestFile, line: lineOfKey(manifestText, ['ignore', p.index]), key: `ignore[${p.index}]`, message: p.message }
          : { file: joinPath(dir, IGNORE_FILE), line: p.index, key: '', message: p.message },
      ),
    };
  }
  return listFunctionFiles(tree, { dir, include: manifest.include, ignored: ignoreMatcher(manifest.ignore, slessignore), manifestText });
}
