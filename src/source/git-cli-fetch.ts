// A shallow `git fetch` of one branch into the cache with the git command line (the cold sync, and
// any fetch the in-process v2 path cannot do). Held to the TargetPolicy: the URL is checked, the host
// resolved through the policy and pinned (http.curloptResolve), redirects are not followed (git-cli.ts).
// fetch.unpackLimit=1 keeps every fetch as one pack (never loose objects), like isomorphic-git: packs are
// counted (MAX_PACKS) and measured (the size limit).
import { classifyGitCliError, pinnedResolve, run as runGit } from './git-cli.ts';
import type { GitCacheRepo } from './git-cache-repo.ts';
import { FetchTooLargeError } from './git-http.ts';
import { classifyGitError, GitSourceError, redactUrl } from './git-source-error.ts';
import type { TargetPolicy } from './target-policy.ts';

export interface CliFetchInput {
  readonly repo: GitCacheRepo;
  readonly url: string;
  readonly branch: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly targets: TargetPolicy;
  readonly maxFetchBytes: number;
  /** ls-remote, to tell "not git" from "no such branch" after a failed fetch (throws the exact error). */
  readonly remoteHead: () => Promise<string>;
}

/** Fetches the branch head into the cache and returns its commit. Throws GitSourceError. */
export async function fetchWithCli(input: CliFetchInput): Promise<string> {
  const { repo } = input;
  const ref = repo.remoteRef;
  let pinned;
  try {
    pinned = await pinnedResolve(input.targets, new URL(input.url));
  } catch (err) {
    throw classifyGitError(err, redactUrl(input.url), 'fetch');
  }
  const packBytesBefore = await repo.packBytes();
  const args = ['fetch', '--quiet', '--depth=1', '--no-tags', '--no-write-fetch-head', input.url, `+refs/heads/${input.branch}:${ref}`];
  const result = await runGit(args, {
    gitdir: repo.gitdir,
    headers: input.headers,
    config: [...pinned, ['fetch.unpackLimit', '1']],
  });
  // git streams the pack to disk (not into memory): the limit is checked on what it wrote.
  if ((await repo.packBytes()) - packBytesBefore > input.maxFetchBytes) {
    await repo.remove();
    throw classifyGitError(new FetchTooLargeError(input.maxFetchBytes), redactUrl(input.url), 'fetch');
  }
  if (result.code !== 0) {
    const err = classifyGitCliError(result.stderr, redactUrl(input.url), 'fetch');
    // git falls back to the dumb protocol on a server that is not a smart-HTTP git server and then reports a
    // missing ref: ls-remote tells "not git" from "no such branch" exactly.
    if (err.reason === 'branch-not-found' || err.reason === 'not-git') await input.remoteHead();
    throw err;
  }
  // The ref git fetch wrote, read as a file (no `git rev-parse` process).
  const oid = await repo.cachedHead();
  if (!oid) throw new GitSourceError('fetch-failed', `git fetch of ${redactUrl(input.url)} left no ${ref}: it is not in the cache`);
  await repo.writeHeads(oid, false);
  return oid;
}
