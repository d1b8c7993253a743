// Fetches one branch of one repository over HTTP(S) into a persistent bare cache and hands out the
// head commit as a SourceTree. Per sync: ls-remote first (one small request) and no fetch at all
// when the remote head is already cached; otherwise a shallow, single-branch fetch. What makes it
// incremental (measured with test/bench/sync.bench.ts and git http-backend): `relative: true` AND
// a local refs/heads/<branch> that isomorphic-git can offer as "have" — then a one-file push brings
// a ~7 KB pack; without either, every fetch re-downloads the whole tree. Force-pushes need nothing
// special: the new head is fetched like any other. Each incremental fetch adds one small pack; past
// MAX_PACKS the cache is rebuilt from a fresh shallow clone, which bounds disk use and lookup cost.
// Syncs of one cache directory are serialised within the process (not across processes: give each
// process its own cacheDir). Where a `git` binary is installed the fetch, the first listing of every
// tree and blob reads go through it (git-cli.ts: the cold sync is several times faster); isomorphic-git
// does the rest and is the fallback. With git present, a cache that holds an earlier head fetches the
// new one in-process over protocol v2 (git-wire-fetch.ts: one POST, a small pack indexed in process); a
// caller that knows the new head (a webhook names it) passes it as a hint: when that commit is not
// cached yet, the ref advertisement is skipped and the named head is fetched at once, and taken only
// when an ls-refs POST sent beside the fetch says it is the branch tip (the hint saves a round trip,
// never decides what the branch is).
// This file decides which fetch a sync needs; the cache on disk is git-cache-repo.ts, the `git fetch`
// path git-cli-fetch.ts, the in-process one git-wire-fetch.ts, credentials git-auth.ts.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { authorizationHeader, splitCredentials } from './git-auth.ts';
import type { GitAuth } from './git-auth.ts';
import { GitCacheRepo } from './git-cache-repo.ts';
import { fetchWithCli } from './git-cli-fetch.ts';
import { createGitHttp, DEFAULT_MAX_FETCH_BYTES, FetchTooLargeError } from './git-http.ts';
import type { GitHttpOptions } from './git-http.ts';
import { BlobBatcher, gitCliAvailable, listAllTrees } from './git-cli.ts';
import { classifyGitError, GitSourceError, redactUrl } from './git-source-error.ts';
import { FetchedObjects } from './fetched-objects.ts';
import { GitTree, TreeMemo } from './git-tree.ts';
import { WireUnsupportedError } from './git-wire.ts';
import { wireFetch } from './git-wire-fetch.ts';
import type { TargetPolicy } from './target-policy.ts';
import { DEFAULT_TREE_LIMITS, TreeLimitError, type TreeLimits } from './tree-limits.ts';

export { authorizationHeader } from './git-auth.ts';
export type { GitAuth } from './git-auth.ts';

export interface GitSourceLogger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
}

export interface GitSourceOptions {
  /** Clone URL (http or https). Credentials inside it are used when `auth` is not given, and never logged. */
  readonly url: string;
  readonly branch?: string;
  /** Folder for cache repositories; each repository+branch gets its own subfolder. */
  readonly cacheDir: string;
  readonly auth?: GitAuth;
  readonly logger?: GitSourceLogger;
  /** Which hosts may be reached (the controller: public ones plus its allowlist; `sless dev`: any). */
  readonly targets: TargetPolicy;
  readonly http?: GitHttpOptions;
  /** Use the git command line where installed (default true); false forces isomorphic-git throughout. */
  readonly gitCli?: boolean;
  /** Bounds on the revision's shape, held while its tree listing streams (default DEFAULT_TREE_LIMITS). */
  readonly treeLimits?: TreeLimits;
}

export interface SyncOptions {
  /** The head the caller expects (from a push webhook). Skips ls-remote when that commit is not cached yet. */
  readonly head?: string;
}

export interface SyncResult {
  /** Commit SHA of the branch head. */
  readonly revision: string;
  readonly tree: GitTree;
  /**
   * False when the remote head is `revision` and the cache already held it: no fetch happened, and the
   * cache is not read until `tree` is (its first listing is lazy). A caller that last synced `revision`
   * may stop here: all this cost is the ls-remote (or nothing, when a hint named a cached head).
   */
  readonly fetched: boolean;
}

const MAX_PACKS = 200;

/** `fn` run at most once; every call gets the same promise. */
function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => (p ??= fn());
}
const locks = new Map<string, Promise<unknown>>();

/** Runs `fn` after every earlier call with the same key has settled. */
function serialised<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(key) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const tail = next.catch(() => undefined);
  locks.set(key, tail);
  void tail.then(() => {
    if (locks.get(key) === tail) locks.delete(key);
  });
  return next;
}

export class GitSource {
  readonly url: string;
  readonly branch: string;
  readonly gitdir: string;
  private readonly headers: Record<string, string>;
  private readonly http: ReturnType<typeof createGitHttp>;
  private readonly repo: GitCacheRepo;
  private readonly memo = new TreeMemo();
  private logger: GitSourceLogger | undefined;
  private rebuildNext = false;
  private readonly useCli: boolean;
  private readonly blobs: BlobBatcher;
  private readonly targets: TargetPolicy;
  private readonly maxFetchBytes: number;
  private readonly treeLimits: TreeLimits;
  /** Set when the server does not speak protocol v2 to an in-process fetch: `git fetch` from then on. */
  private wireOff = false;
  /** What the last in-process fetch brought (fetched-objects.ts). */
  private lastFetch: FetchedObjects | undefined;

  constructor(options: GitSourceOptions) {
    const split = splitCredentials(options.url);
    this.url = split.url;
    this.branch = options.branch ?? 'main';
    const auth = options.auth ?? split.auth;
    const authorization = authorizationHeader(auth);
    this.headers = authorization ? { authorization } : {};
    const key = createHash('sha256').update(`${this.url}#${this.branch}`).digest('hex').slice(0, 16);
    this.gitdir = path.join(path.resolve(options.cacheDir), `${key}.git`);
    this.repo = new GitCacheRepo(this.gitdir, this.url, this.branch);
    this.http = createGitHttp(options.targets, options.http);
    this.logger = options.logger;
    this.useCli = options.gitCli !== false;
    this.targets = options.targets;
    this.maxFetchBytes = options.http?.maxResponseBytes ?? DEFAULT_MAX_FETCH_BYTES;
    this.treeLimits = options.treeLimits ?? DEFAULT_TREE_LIMITS;
    this.blobs = new BlobBatcher(this.gitdir, async (oid) => {
      const { blob } = await git.readBlob({ fs, gitdir: this.gitdir, oid, cache: this.repo.cache });
      return Buffer.from(blob);
    });
  }

  /** Brings the cache up to the branch head and returns it. Throws GitSourceError. */
  sync(options: SyncOptions = {}): Promise<SyncResult> {
    return serialised(this.gitdir, () => this.syncLocked(options));
  }

  /** Whether this sync uses the git command line. */
  cli(): Promise<boolean> {
    return this.useCli ? gitCliAvailable() : Promise.resolve(false);
  }

  /** Closes idle connections. */
  async close(): Promise<void> {
    await this.http.close();
  }

  private async syncLocked(options: SyncOptions): Promise<SyncResult> {
    // Its blobs served the sync after it only (the trees stay: the next fetch's delta bases).
    this.lastFetch?.dropBlobs();
    if (this.rebuildNext) await this.resetCache();
    await this.repo.ensure();
    const cached = await this.repo.cachedHead();
    const cli = await this.cli();
    // A hint already cached proves nothing (an old delivery): ask the remote as usual.
    const hinted =
      options.head &&
      options.head !== cached &&
      /^[0-9a-f]{40}$/.test(options.head) &&
      !(await this.repo.hasCommit(options.head))
        ? options.head
        : undefined;
    let revision: string | undefined;
    let fetched = false;
    // The webhook named the head: fetch it at once, the branch tip asked beside the fetch.
    if (hinted && cached && cli) revision = await this.fetchIncremental(hinted, cached, true);
    // (A cold cache asks too: isomorphic-git's ls-remote follows and checks redirects, and says so.)
    const remoteHead = revision || hinted ? undefined : await this.remoteHead();
    if (revision) fetched = true;
    else if (remoteHead && cached && cli && cached !== remoteHead) revision = await this.fetchIncremental(remoteHead, cached, false);
    if (revision) fetched = true;
    else if (!remoteHead || cached !== remoteHead || !(await this.repo.hasCommit(remoteHead))) {
      revision = await this.fetch().catch(async (err: unknown) => {
        if (err instanceof GitSourceError && err.reason !== 'fetch-failed') throw err;
        // A cache that isomorphic-git can no longer fetch into (interrupted write, odd shallow state):
        // start over from a fresh shallow clone once before giving up.
        this.logger?.warn('git fetch into the cache failed; rebuilding the cache', {
          url: this.url,
          error: String(err),
        });
        await this.resetCache();
        await this.repo.ensure();
        return this.fetch();
      });
      fetched = true;
    } else revision = remoteHead;
    if (fetched) {
      const packs = await this.repo.packCount();
      if (packs > MAX_PACKS) this.rebuildNext = true;
      this.logger?.info('fetched', { url: redactUrl(this.url), branch: this.branch, revision, packs });
    }
    this.memo.rotate();
    // A cold memo is filled in one listing, when the tree is first read (a caller may not read it).
    const prefill = cli && this.memo.empty ? once(() => this.prefillTrees(revision)) : undefined;
    const fresh = fetched && this.lastFetch?.commit === revision ? this.lastFetch : undefined;
    const blobs = fresh ? new Map(fresh.blobs) : undefined;
    return {
      revision,
      fetched,
      tree: new GitTree({
        gitdir: this.gitdir,
        commit: revision,
        cache: this.repo.cache,
        memo: this.memo,
        ...(prefill ? { prefill } : {}),
        ...(fresh?.rootTree ? { rootTree: fresh.rootTree } : {}),
        ...(cli ? { readBlob: (oid) => (blobs?.has(oid) ? Promise.resolve(blobs.get(oid)!) : this.blobs.read(oid)) } : {}),
      }),
    };
  }

  /**
   * `want` over protocol v2 in this process (git-wire-fetch.ts), the cached head offered as "have";
   * undefined when `git fetch` must do it (the server lacks v2, refused the object, or — with
   * `verifyTip` — the branch tip is not `want`).
   */
  private async fetchIncremental(want: string, have: string, verifyTip: boolean): Promise<string | undefined> {
    if (this.wireOff) return undefined;
    try {
      const result = await wireFetch({
        http: this.http,
        url: this.url,
        headers: this.headers,
        gitdir: this.gitdir,
        branch: this.branch,
        want,
        have,
        verifyTip,
        // A thin pack's delta bases: the trees the last fetch brought or the memo holds, else from the cache.
        readObject: (oid) => {
          const tree = this.lastFetch?.tree(oid) ?? this.memo.object(oid);
          return tree ? Promise.resolve({ type: 'tree' as const, content: tree }) : this.repo.readObject(oid);
        },
      });
      if (!result.fetched) return undefined;
      if (result.packBytes > this.maxFetchBytes) throw new FetchTooLargeError(this.maxFetchBytes);
      this.lastFetch = result.objects ? new FetchedObjects(want, result.objects, this.memo) : undefined;
    } catch (err) {
      if (err instanceof FetchTooLargeError) throw classifyGitError(err, redactUrl(this.url), 'fetch');
      if (err instanceof WireUnsupportedError && err.permanent) this.wireOff = true;
      this.logger?.info('in-process fetch not possible; using git fetch', { url: redactUrl(this.url), error: String(err) });
      return undefined;
    }
    await this.repo.writeHeads(want);
    return want;
  }

  /** A cold memo (first sync of this process, rebuilt cache): every tree from one listing; resolves with the root tree (rejects only with a TreeLimitError). */
  private async prefillTrees(revision: string): Promise<string | undefined> {
    try {
      const { root, trees } = await listAllTrees(this.gitdir, revision, this.treeLimits);
      for (const [oid, entries] of trees) this.memo.set(oid, entries);
      return /^[0-9a-f]{40}$/.test(root) ? root : undefined;
    } catch (err) {
      // A revision past the limits is refused, not read another way.
      if (err instanceof TreeLimitError) throw err;
      // Not fatal: the trees are read one by one instead.
      this.logger?.warn('listing the trees with git failed; reading them one by one', {
        url: redactUrl(this.url),
        error: String(err),
      });
      return undefined;
    }
  }

  private async resetCache(): Promise<void> {
    this.rebuildNext = false;
    this.lastFetch = undefined;
    await this.repo.remove();
  }

  private async remoteHead(): Promise<string> {
    let info;
    try {
      info = await git.getRemoteInfo({ http: this.http, url: this.url, headers: this.headers });
    } catch (err) {
      throw classifyGitError(err, redactUrl(this.url), 'ls-remote');
    }
    const head = (info.refs as { heads?: Record<string, string> } | undefined)?.heads?.[this.branch];
    if (!head) {
      throw new GitSourceError(
        'branch-not-found',
        `branch "${this.branch}" does not exist in ${redactUrl(this.url)} (deleted, or never pushed); push it or fix spec.branch`,
      );
    }
    return head;
  }

  private async fetch(): Promise<string> {
    if (await this.cli()) {
      return fetchWithCli({
        repo: this.repo,
        url: this.url,
        branch: this.branch,
        headers: this.headers,
        targets: this.targets,
        maxFetchBytes: this.maxFetchBytes,
        remoteHead: () => this.remoteHead(),
      });
    }
    let result;
    try {
      result = await git.fetch({
        fs,
        http: this.http,
        gitdir: this.gitdir,
        url: this.url,
        remote: 'origin',
        ref: this.branch,
        singleBranch: true,
        depth: 1,
        relative: true,
        tags: false,
        headers: this.headers,
        cache: this.repo.cache,
      });
    } catch (err) {
      throw classifyGitError(err, redactUrl(this.url), 'fetch');
    }
    if (!result.fetchHead) {
      throw new GitSourceError(
        'branch-not-found',
        `branch "${this.branch}" vanished from ${redactUrl(this.url)} during the fetch; will retry`,
      );
    }
    await this.repo.writeHeads(result.fetchHead, false);
    return result.fetchHead;
  }
}
