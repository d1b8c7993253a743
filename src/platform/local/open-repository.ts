// `sless dev --repo` takes three kinds of source; each becomes a RepositoryReader that yields a
// Snapshot built by the same code as the controller (SnapshotBuilder over a SourceTree):
//   - a git URL (http, https): fetched with GitSource into a cache under the data dir;
//   - a local git repository: the committed tree of the branch (default: the checked-out branch, or
//     the checked-out commit when HEAD is detached),
//     read straight from its .git — what is committed is what runs, as with a remote;
//   - a plain folder: its working tree as it is on disk (edit, save, the next poll serves it).
import { existsSync, statSync } from 'node:fs';
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { manifestCapsOf, type ManifestCaps } from '../../manifest/defaults.ts';
import { SnapshotBuilder } from '../../source/build-snapshot.ts';
import { GitSource } from '../../source/git-source.ts';
import { redactUrl } from '../../source/git-source-error.ts';
import { GitTree, TreeMemo } from '../../source/git-tree.ts';
import { TargetPolicy } from '../../source/target-policy.ts';
import type { TreeLimits } from '../../source/tree-limits.ts';
import { WorkTree } from '../../source/work-tree.ts';
import { gitDirsOf, headOf } from '../../source/git-dirs.ts';
import { isGitUrl, readerOver, type RepositoryReader } from '../../source/repository-read.ts';
import type { Logger } from './logger.ts';

/** The caps (ManifestCaps) a function.yaml is checked against. */
export interface OpenRepositoryOptions extends ManifestCaps {
  /** URL, path of a local git repository, or path of a plain folder. */
  readonly repo: string;
  /** Default: `main` for URLs, the checked-out branch for a local repository. */
  readonly branch?: string;
  readonly path: string;
  /** Where a fetched repository is cached. */
  readonly cacheDir: string;
  /** Bounds on a revision's shape (default DEFAULT_TREE_LIMITS): past one, read() throws TreeLimitError. */
  readonly treeLimits?: TreeLimits;
  readonly logger: Logger;
}

export async function openRepository(opts: OpenRepositoryOptions): Promise<RepositoryReader> {
  const snapshots = new SnapshotBuilder(opts.treeLimits);
  if (isGitUrl(opts.repo)) {
    const branch = opts.branch ?? 'main';
    const source = new GitSource({
      url: opts.repo,
      branch,
      cacheDir: opts.cacheDir,
      // A single-user tool on the developer's machine: local git servers are the point.
      targets: TargetPolicy.anyTarget(),
      ...(opts.treeLimits ? { treeLimits: opts.treeLimits } : {}),
      // The sync summary already says what was fetched; only the cache's own trouble is worth a line.
      logger: { info: () => {}, warn: (msg) => opts.logger.warn(`git cache of ${redactUrl(opts.repo)}: ${msg}`) },
    });
    return {
      displayUrl: redactUrl(opts.repo),
      branch,
      path: opts.path,
      async read() {
        const { tree } = await source.sync();
        return readerOver(snapshots, opts.path, tree, manifestCapsOf(opts));
      },
      close: () => source.close(),
    };
  }

  const root = path.resolve(opts.repo);
  if (!existsSync(root) || !statSync(root).isDirectory()) {
    throw new Error(`--repo ${opts.repo}: no such folder and not a git URL; give a git URL, a local git repository or a folder`);
  }
  const dirs = gitDirsOf(root);
  if (dirs) {
    // The refs and objects are in the common dir (a worktree's own .git holds only its HEAD).
    const gitdir = dirs.commonDir;
    // No --branch: the checked-out branch, or the checked-out commit itself (a detached HEAD, as
    // CI checkouts often are).
    const head = opts.branch === undefined ? headOf(dirs) : { branch: opts.branch };
    const branch = 'branch' in head ? head.branch : undefined;
    const refs = branch ? [`refs/heads/${branch}`, `refs/remotes/origin/${branch}`] : [];
    const cache = {};
    const memo = new TreeMemo();
    return {
      displayUrl: root,
      branch: branch ?? 'HEAD',
      path: opts.path,
      async read() {
        // A detached HEAD is re-read each time: a commit in the checkout moves it.
        const now = branch ? undefined : headOf(dirs);
        let commit = now && 'commit' in now ? now.commit : undefined;
        for (const ref of refs) {
          commit = await git.resolveRef({ fs, gitdir, ref }).catch(() => undefined);
          if (commit) break;
        }
        if (!commit) {
          throw new Error(branch ? `${root} has no branch "${branch}"; commit to it or pass --branch` : `the HEAD of ${root} names no commit; check out a branch or pass --branch`);
        }
        memo.rotate();
        return readerOver(snapshots, opts.path, new GitTree({ gitdir, commit, cache, memo }), manifestCapsOf(opts));
      },
    };
  }
  return {
    displayUrl: root,
    branch: opts.branch ?? 'main',
    path: opts.path,
    read: () => readerOver(snapshots, opts.path, new WorkTree(root), manifestCapsOf(opts)),
  };
}
