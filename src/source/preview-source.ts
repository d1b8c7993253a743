// What a pull request's preview reads in `sless dev`: the head of its branch and the merge base of that
// head with the watched branch, each as a Snapshot (the same SnapshotBuilder as every sync). The merge
// base needs history, so previews keep their own cache (<data-dir>/previews.git) with whole history. A
// local git repository is read in place. The PR's diff is then planned per folder (src/preview/preview-plan.ts).
//
// Fetching (a git URL): the first time `git fetch` of both branches (a clone's worth; git is fastest at
// it). After that, in process over protocol v2 as the watched branch's sync fetches (git-wire-fetch.ts):
// one ls-refs POST for both tips and, beside it, one fetch POST of the commits the delivery and the
// last sync named (hints: they save the round trip, the tips from ls-refs decide); a tip still missing
// after that is fetched then. Any trouble with the in-process path falls back to `git fetch`.
// The head's snapshot is read while git finds the merge base, and merge bases' snapshots are kept by
// commit: pushes to a PR whose base did not move read only the head.
import { mkdir, readdir, readFile, rename, writeFile } from 'node:fs/promises';
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { manifestCapsOf, type ManifestCaps } from '../manifest/defaults.ts';
import { SnapshotBuilder } from './build-snapshot.ts';
import { splitCredentials, authorizationHeader } from './git-auth.ts';
import { pinnedResolve, run as runGit } from './git-cli.ts';
import { createGitHttp } from './git-http.ts';
import { redactUrl } from './git-source-error.ts';
import { GitTree, TreeMemo } from './git-tree.ts';
import { WireUnsupportedError } from './git-wire.ts';
import { branchTips, fetchHistory } from './git-wire-fetch.ts';
import type { PackBase } from './pack-index.ts';
import { TargetPolicy } from './target-policy.ts';
import type { SourceTree } from './source-tree.ts';
import type { Snapshot } from './types.ts';
import type { GitAuth } from './git-auth.ts';
import { gitDirsOf } from './git-dirs.ts';
import { isGitUrl, readerOver, type RepositoryRead } from './repository-read.ts';

export interface PreviewRead {
  /** The head of the PR's branch as it is now (newer than the delivery's when pushed to since). */
  readonly head: RepositoryRead;
  readonly mergeBase: Snapshot;
  /** The head's commit id and tree (the Kubernetes previews upload build contexts from it). */
  readonly headCommit: string;
  readonly headTree: SourceTree;
}

/** Commits the caller expects (never trusted: the branch tips the server lists decide). */
export interface PreviewReadHints {
  /** The PR's head as the delivery named it. */
  readonly head?: string | undefined;
  /** The watched branch's head as its last sync read it. */
  readonly base?: string | undefined;
}

export interface PreviewReader {
  read(branch: string, hints?: PreviewReadHints): Promise<PreviewRead>;
  /**
   * The PR's preview is gone: its branch's ref leaves the previews' cache (the next repack drops what only it
   * kept). Never the watched branch; nothing for a local repository, whose branches are the user's own.
   */
  forget(branch: string): Promise<void>;
  /** Releases connections. */
  close?(): Promise<void>;
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
const OID = /^[0-9a-f]{40}$/;
/** Merge bases' snapshots kept (by commit). */
const BASE_SNAPSHOTS = 8;
/** Past this many packs (one per in-process fetch) the cache is repacked into one. */
const MAX_PACKS = 50;

export function openPreviewReader(opts: PreviewReaderOptions): PreviewReader {
  const snapshots = new SnapshotBuilder();
  const caps = manifestCapsOf(opts);
  const cache = {};
  const memo = new TreeMemo();
  const baseSnapshots = new Map<string, Snapshot>();
  const remote = isGitUrl(opts.repo) ? splitCredentials(opts.repo) : undefined;
  const gitdir = remote ? path.join(path.resolve(opts.cacheDir), opts.cacheName ?? 'previews.git') : gitDirsOf(path.resolve(opts.repo))?.commonDir;
  if (!gitdir) throw new Error(`--previews needs --repo to be a git URL or a local git repository, not the plain folder ${opts.repo}`);
  const headers: Record<string, string> = {};
  const authorization = remote ? authorizationHeader(opts.auth ?? remote.auth) : undefined;
  if (authorization) headers['authorization'] = authorization;
  const http = remote ? createGitHttp(opts.targets ?? TargetPolicy.anyTarget()) : undefined;
  let wireOff = false;
  const gitCli = async (args: string[], config: ReadonlyArray<readonly [string, string]> = []): Promise<string> => {
    const r = await runGit(args, { gitdir, headers, config });
    if (r.code !== 0) throw new Error(`git ${args[0]} failed: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`);
    return r.stdout.toString('utf8').trim();
  };
  const refOf = (branch: string) => (remote ? `refs/sless/heads/${branch}` : `refs/heads/${branch}`);
  const missing = (branch: string) => new PreviewBranchMissing(`branch ${branch} does not exist in ${remote ? redactUrl(opts.repo) : opts.repo}`);
  let serial: Promise<unknown> = Promise.resolve();

  const fetchBoth = async (url: string, branch: string): Promise<void> => {
    await mkdir(gitdir, { recursive: true });
    await gitCli(['init', '--bare', '--quiet']);
    const pinned = await pinnedResolve(opts.targets ?? TargetPolicy.anyTarget(), new URL(url));
    const args = [
      'fetch',
      '--quiet',
      '--no-tags',
      '--no-write-fetch-head',
      '--prune',
      url,
      `+refs/heads/${opts.branch}:${refOf(opts.branch)}`,
      `+refs/heads/${branch}:${refOf(branch)}`,
    ];
    const r = await runGit(args, { gitdir, headers, config: pinned });
    if (r.code === 0) return;
    if (/couldn't find remote ref refs\/heads\/(.*)/.test(r.stderr)) {
      const gone = /couldn't find remote ref refs\/heads\/(\S*)/.exec(r.stderr)?.[1];
      throw new PreviewBranchMissing(`branch ${gone ?? branch} does not exist in ${redactUrl(opts.repo)}`);
    }
    throw new Error(`fetching ${branch} and ${opts.branch} from ${redactUrl(opts.repo)} failed: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`);
  };

  const resolveBoth = async (branch: string): Promise<{ head: string; base: string }> => {
    const resolve = (b: string) =>
      gitCli(['rev-parse', '--verify', '--quiet', `${refOf(b)}^{commit}`]).catch(() => {
        throw missing(b);
      });
    return { head: await resolve(branch), base: await resolve(opts.branch) };
  };

  const looseRef = async (ref: string): Promise<string | undefined> => {
    const text = await readFile(path.join(gitdir, ref), 'utf8').catch(() => '');
    return OID.test(text.trim()) ? text.trim() : undefined;
  };
  const writeRef = async (ref: string, oid: string): Promise<void> => {
    const file = path.join(gitdir, ref);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(`${file}.lock`, `${oid}\n`);
    await rename(`${file}.lock`, file);
  };
  const hasCommit = (oid: string): Promise<boolean> =>
    git.readCommit({ fs, gitdir, oid, cache }).then(
      () => true,
      () => false,
    );
  const readObject = async (oid: string): Promise<PackBase> => {
    const { type, object } = await git.readObject({ fs, gitdir, oid, format: 'content', cache });
    if (type === 'deflated' || type === 'wrapped') throw new Error(`git object ${oid} was not inflated`);
    return { type, content: Buffer.from(object as Uint8Array) };
  };

  /** The in-process fetch into a cache that already holds the watched branch: the two tips, fetched when missing. */
  const fetchInProcess = async (url: string, branch: string, hints: PreviewReadHints): Promise<{ head: string; base: string }> => {
    const client = http as NonNullable<typeof http>;
    const dir = path.join(gitdir, 'refs', 'sless', 'heads');
    const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
    const haves = [...new Set((await Promise.all(names.map((n) => looseRef(path.join('refs', 'sless', 'heads', n))))).filter((o): o is string => !!o))];
    const tipsAsked = branchTips(client, url, headers, [opts.branch, branch]);
    tipsAsked.catch(() => undefined);
    const hinted: string[] = [];
    for (const h of [hints.head, hints.base]) if (h && OID.test(h) && !hinted.includes(h) && !(await hasCommit(h))) hinted.push(h);
    const [first, ...rest] = hinted;
    // A hint that is no tip any more (pushed to since) fails this fetch; the tips below then come.
    const early = first
      ? fetchHistory({ http: client, url, headers, gitdir, wants: [first, ...rest], haves, readObject }).then(
          () => true,
          () => false,
        )
      : Promise.resolve(false);
    const tips = await tipsAsked;
    const head = tips.get(branch);
    if (!head) throw missing(branch);
    const base = tips.get(opts.branch);
    if (!base) throw new Error(`branch ${opts.branch} does not exist in ${redactUrl(opts.repo)}`);
    const fetchedEarly = await early;
    const wanted = [...new Set([head, base])];
    const lacking: string[] = [];
    for (const oid of wanted) if (!(await hasCommit(oid))) lacking.push(oid);
    const [want, ...alsoWant] = lacking;
    if (want)
      await fetchHistory({
        http: client,
        url,
        headers,
        gitdir,
        wants: [want, ...alsoWant],
        haves: fetchedEarly ? [...haves, ...hinted] : haves,
        readObject,
      });
    await Promise.all([writeRef(refOf(branch), head), writeRef(refOf(opts.branch), base)]);
    const packs = (await readdir(path.join(gitdir, 'objects', 'pack')).catch(() => [] as string[])).filter((f) => f.endsWith('.pack')).length;
    if (packs > MAX_PACKS) await gitCli(['repack', '-a', '-d', '-q']);
    return { head, base };
  };

  const fetchAndResolve = async (branch: string, hints: PreviewReadHints): Promise<{ head: string; base: string }> => {
    if (!remote) return resolveBoth(branch);
    if (!wireOff && (await looseRef(refOf(opts.branch)))) {
      try {
        return await fetchInProcess(remote.url, branch, hints);
      } catch (err) {
        if (err instanceof PreviewBranchMissing) throw err;
        if (err instanceof WireUnsupportedError && err.permanent) wireOff = true;
        // Otherwise as the first time: `git fetch` (it says what went wrong, if anything still does).
      }
    }
    await fetchBoth(remote.url, branch);
    return resolveBoth(branch);
  };

  const snapshotOf = (commit: string): Promise<Snapshot> => readerOver(snapshots, opts.path, new GitTree({ gitdir, commit, cache, memo }), caps).then((r) => r.snapshot);

  const read = async (branch: string, hints: PreviewReadHints = {}): Promise<PreviewRead> => {
    if (!BRANCH.test(branch)) throw new PreviewBranchMissing(`"${branch.slice(0, 80)}" is not a branch name`);
    const { head, base } = await fetchAndResolve(branch, hints);
    memo.rotate();
    const mergeBase = async (): Promise<Snapshot> => {
      const commit = await gitCli(['merge-base', head, base]).catch(() => {
        throw new Error(`branch ${branch} shares no history with ${opts.branch}; a preview needs their merge base`);
      });
      const kept = baseSnapshots.get(commit);
      if (kept) return kept;
      const snapshot = await snapshotOf(commit);
      baseSnapshots.set(commit, snapshot);
      if (baseSnapshots.size > BASE_SNAPSHOTS) baseSnapshots.delete(baseSnapshots.keys().next().value as string);
      return snapshot;
    };
    const headTree = new GitTree({ gitdir, commit: head, cache, memo });
    const [headRead, baseSnapshot] = await Promise.all([readerOver(snapshots, opts.path, headTree, caps), mergeBase()]);
    return { head: headRead, mergeBase: baseSnapshot, headCommit: head, headTree };
  };

  return {
    // One fetch at a time into the one cache.
    read(branch, hints = {}) {
      const next = serial.then(() => read(branch, hints));
      serial = next.catch(() => undefined);
      return next;
    },
    forget(branch) {
      if (!remote || branch === opts.branch || !BRANCH.test(branch)) return Promise.resolve();
      const next = serial.then(() => gitCli(['update-ref', '-d', refOf(branch)])).then(() => undefined);
      serial = next.catch(() => undefined);
      return next;
    },
    close: async () => {
      await http?.close();
    },
  };
}
