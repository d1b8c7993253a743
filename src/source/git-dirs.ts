// Where a local repository's git data lives, for a plain clone and for a worktree alike. In a
// worktree (`git worktree add`) `.git` is a file `gitdir: <path>`; that folder holds the worktree's
// own HEAD, and its `commondir` file points to the shared folder with the refs and objects.
// isomorphic-git knows neither, so sless reads HEAD itself and gives isomorphic-git the common dir.
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

export interface GitDirs {
  /** The folder with this checkout's HEAD (`.git`, or `.git/worktrees/<name>` of a worktree). */
  readonly headDir: string;
  /** The folder with the refs and objects (the same as headDir outside worktrees). */
  readonly commonDir: string;
}

/** The git folders of a checkout at `root`, or undefined when it has no `.git`. */
export function gitDirsOf(root: string): GitDirs | undefined {
  const dotGit = path.join(root, '.git');
  if (!existsSync(dotGit)) return undefined;
  if (statSync(dotGit).isDirectory()) return { headDir: dotGit, commonDir: dotGit };
  const line = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
  if (!line) throw new Error(`${dotGit} is a file but not a "gitdir: <path>" pointer; is this a git worktree?`);
  const headDir = path.resolve(root, line);
  const common = path.join(headDir, 'commondir');
  const commonDir = existsSync(common) ? path.resolve(headDir, readFileSync(common, 'utf8').trim()) : headDir;
  return { headDir, commonDir };
}

/** What HEAD names: a branch (short name) or, when detached, a commit id. */
export function headOf(dirs: GitDirs): { readonly branch: string } | { readonly commit: string } {
  const head = readFileSync(path.join(dirs.headDir, 'HEAD'), 'utf8').trim();
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (ref) return { branch: ref.replace(/^refs\/heads\//, '') };
  if (/^[0-9a-f]{40,64}$/.test(head)) return { commit: head };
  throw new Error(`${path.join(dirs.headDir, 'HEAD')} holds neither "ref: …" nor a commit id`);
}
