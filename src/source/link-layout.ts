// The one rule for symlinks in a function's files, whatever they come from (a git tree, a folder, an
// uploaded zip, a build context): writing the files into a folder must never follow a link out of
// it. Each link checked on its own is not enough: `a -> .` then `a/b -> ..` looks harmless path by
// path, yet on disk `a/b` is the folder's parent, and a file written at `a/b/x` lands outside. So:
//
//   1. no entry sits under a symlink (nothing is ever written *through* a link), and
//   2. every link, resolved the way the kernel will resolve it (through the other links of the set,
//      component by component), ends strictly inside the folder (not at the folder itself).
//
// Pure: the caller gives paths, modes and link targets; problems come back, nothing is thrown.

export interface LayoutEntry {
  /** Posix path relative to the folder, without `.`/`..`/empty segments. */
  readonly path: string;
  /** `120000` for a symlink; anything else is a file. */
  readonly mode: string;
  /** For a symlink: its target. */
  readonly target?: string;
}

export interface LinkProblem {
  readonly path: string;
  readonly message: string;
}

/** Links deeper than this are a loop (Linux gives ELOOP after 40). */
const MAX_LINK_DEPTH = 40;

type Resolved = { readonly parts: readonly string[] } | { readonly error: string };

/** Everything in `entries` that would make writing them follow a link out of their folder. */
export function linkLayoutProblems(entries: Iterable<LayoutEntry>): LinkProblem[] {
  const links = new Map<string, string>();
  const all: LayoutEntry[] = [];
  for (const e of entries) {
    all.push(e);
    if (e.mode === '120000') links.set(e.path, e.target ?? '');
  }
  const problems: LinkProblem[] = [];
  if (links.size === 0) return problems;

  for (const e of all) {
    const parts = e.path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const ancestor = parts.slice(0, i).join('/');
      if (links.has(ancestor)) {
        problems.push({
          path: e.path,
          message: `"${e.path}" would be written through the symlink "${ancestor}"; nothing may sit under a symlink (make "${ancestor}" a real folder)`,
        });
        break;
      }
    }
  }

  const resolve = (base: readonly string[], target: string, depth: number): Resolved => {
    if (target === '' || target.startsWith('/') || target.includes('\\') || target.includes('\0') || /^[A-Za-z]:/.test(target)) {
      return { error: target.startsWith('/') ? 'points to the absolute path' : 'is empty or not a relative posix path' };
    }
    let parts = [...base];
    for (const seg of target.split('/')) {
      if (seg === '' || seg === '.') continue;
      if (seg === '..') {
        if (parts.length === 0) return { error: 'points outside the folder' };
        parts.pop();
        continue;
      }
      parts.push(seg);
      const next = links.get(parts.join('/'));
      if (next === undefined) continue;
      if (depth >= MAX_LINK_DEPTH) return { error: 'is part of a loop of symlinks' };
      const inner = resolve(parts.slice(0, -1), next, depth + 1);
      if ('error' in inner) return inner;
      parts = [...inner.parts];
    }
    return { parts };
  };

  for (const [linkPath, target] of links) {
    const r = resolve(linkPath.split('/').slice(0, -1), target, 0);
    const why = 'error' in r ? r.error : r.parts.length === 0 ? 'points at the folder itself' : undefined;
    if (why) {
      problems.push({
        path: linkPath,
        message: `the symlink "${linkPath}" -> "${target}" ${why} (following the other symlinks too); links must resolve inside the folder`,
      });
    }
  }
  return problems;
}
