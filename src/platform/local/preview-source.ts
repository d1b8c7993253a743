// What a pull request's preview reads in `sless dev`: the head of its branch and the merge base of that
// head with the watched branch, each as a Snapshot (the same SnapshotBuilder as every sync). The merge
// base needs history, so previews keep their own cache (<data-dir>/previews.git) fetched without
// --depth: both branches, incrementally after the first time. A local git repository is read in place.
// The PR's diff is then planned per folder (src/preview/preview-plan.ts).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { manifestCapsOf, type ManifestCaps } from '../../manifest/defaults.ts';
import { SnapshotBuilder } from '../../source/build-snapshot.ts';
import { splitCredentials, authorizationHeader } from '../../source/git-auth.ts';
import { pinnedResolve, run as runGit } from '../../source/git-cli.ts';
import { redactUrl } from '../../source/git-source-error.ts';
import { GitTree, TreeMemo } from '../../source/git-tree.ts';
import { TargetPolicy } from '../../source/target-policy.ts';
import type { SourceTree } from '../../source/source-tree.ts';
import type { Snapshot } from '../../source/types.ts';
import type { GitAuth } from '../../source/git-auth.ts';
import { gitDirsOf } from './git-dirs.ts';
import { isGitUrl, readerOver } from './open-repository.ts';
import type { RepositoryRead } from './ports.ts';

export interface PreviewRead {
  /** The head of the PR's branch as it is now (newer than the delivery's when pushed to since). */
  readonly head: RepositoryRead;
  readonly mergeBase: Snapshot;
  /** The head's commit id and tree (the Kubernetes previews upload build contexts from it). */
  readonly headCommit: string;
  readonly headTree: SourceTree;
}

export interface PreviewReader {
  read(branch: string): Promise<PreviewRead>;
}

/** The PR's branch is not there (deleted after the delivery was sent): the delivery is ignored. */
export class PreviewBranchMissing extends Error {
  override readonly name = 'PreviewBranchMissing';
}

export interface PreviewReaderOptions extends ManifestCaps {
  readonly repo: string;
  /** The watched branch (the PRs' base). */
  readonly branch: string;
  readonly path: string;
  /** Where a fetched repository's preview cache goes. */
  readonly cacheDir: string;
  /** Where the fetch may connect (default: anywhere, as `sless dev`; the controller passes its syncs' policy). */
  readonly targets?: TargetPolicy;
  /** Credentials beside the URL's own (the controller's spec.secretRef). */
  readonly auth?: GitAuth;
  /** The cache's folder name under cacheDir (default previews.git). */
  readonly cacheName?: string;
}

// A branch name as git allows it in a refspec, and nothing that could read as an option or a range.
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)[A-Za-z0-9._/+-]{1,200}(?<![./])$/;

export function openPreviewReader(opts: PreviewReaderOptions): PreviewReader {
  const snapshots = new SnapshotBuilder();
  const caps = manifestCapsOf(opts);
  const cache = {};
  const memo = new TreeMemo();
  const remote = isGitUrl(opts.repo) ? splitCredentials(opts.repo) : undefined;
  const gitdir = remote ? path.join(path.resolve(opts.cacheDir), opts.cacheName ?? 'previews.git') : gitDirsOf(path.resolve(opts.repo))?.commonDir;
  if (!gitdir) throw new Error(`--previews needs --repo to be a git URL or a local git repository, not the plain folder ${opts.repo}`);
  const headers: Record<string, string> = {};
  const authorization = remote ? authorizationHeader(opts.auth ?? remote.auth) : undefined;
  if (authorization) headers['authorization'] = authorization;
  const git = async (args: string[], config: ReadonlyArray<readonly [string, string]> = []): Promise<string> => {
    const r = await runGit(args, { gitdir, headers, config });
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`);
    return r.stdout.toString('utf8').trim();
  };
  const refOf = (branch: string) => (remote ? `refs/sless/heads/${branch}` : `refs/heads/${branch}`);
  let serial: Promise<unknown> = Promise.resolve();

  const fetchBoth = async (branch: string): Promise<void> => {
    if (!remote) return;
    await mkdir(gitdir, { recursive: true });
    await git(['init', '--bare', '--quiet']);
    const pinned = await pinnedResolve(opts.targets ?? TargetPolicy.anyTarget(), new URL(remote.url));
    const args = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--prune', remote.url, `+refs/heads/${opts.branch}:${refOf(opts.branch)}`, `+refs/heads/${branch}:${refOf(branch)}`];
    const r = await runGit(args, { gitdir, headers, config: pinned });
    if (r.code === 0) return;
    if (/couldn't find remote ref refs\/heads\/(.*)/.test(r.stderr)) {
      const missing = /couldn't find remote ref refs\/heads\/(\S*)/.exec(r.stderr)?.[1];
      throw new PreviewBranchMissing(`branch ${missing ?? branch} does not exist in ${redactUrl(opts.repo)}`);
    }
    throw new Error(`fetching ${branch} and ${opts.branch} from ${redactUrl(opts.repo)} failed: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`);
  };

  const read = async (branch: string): Promise<PreviewRead> => {
    if (!BRANCH.test(branch)) throw new PreviewBranchMissing(`"${branch.slice(0, 80)}" is not a branch name`);
    await fetchBoth(branch);
    const resolve = (b: string) =>
      git(['rev-parse', '--verify', '--quiet', `${refOf(b)}^{commit}`]).catch(() => {
        throw new PreviewBranchMissing(`branch ${b} does not exist in ${remote ? redactUrl(opts.repo) : opts.repo}`);
      });
    const head = await resolve(branch);
    const base = await resolve(opts.branch);
    const mergeBase = await git(['merge-base', head, base]).catch(() => {
      throw new Error(`branch ${branch} shares no history with ${opts.branch}; a preview needs their merge base`);
    });
    memo.rotate();
    const tree = (commit: string) => new GitTree({ gitdir, commit, cache, memo });
    const headTree = tree(head);
    const [headRead, baseRead] = await Promise.all([readerOver(snapshots, opts.path, headTree, caps), readerOver(snapshots, opts.path, tree(mergeBase), caps)]);
    return { head: headRead, mergeBase: baseRead.snapshot, headCommit: head, headTree };
  };

  return {
    // One fetch at a time into the one cache.
    read(branch) {
      const next = serial.then(() => read(branch));
      serial = next.catch(() => undefined);
      return next;
    },
  };
}
