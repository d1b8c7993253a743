// Where a repository's commit statuses go, worked out from its clone URL (or told by spec), and the
// HTTP request that sets one status: Gitea `POST /api/v1/repos/{owner}/{repo}/statuses/{sha}`,
// GitHub `POST /repos/{owner}/{repo}/statuses/{sha}` (api.github.com, or `<host>/api/v3` for
// GitHub Enterprise Server), GitLab `POST /api/v4/projects/{url-encoded path}/statuses/{sha}`. Pure.
import type { CommitState, CommitStatus } from './decide-commit-status.ts';

export const COMMIT_STATUS_PROVIDERS = ['gitea', 'github', 'gitlab'] as const;
export type CommitStatusProvider = (typeof COMMIT_STATUS_PROVIDERS)[number];

export interface StatusTarget {
  readonly provider: CommitStatusProvider;
  /** The API root, e.g. `http://git.example/api/v1`, `https://api.github.com`. */
  readonly apiUrl: string;
  /** `owner/repo` (GitLab: the project's full path, groups included). */
  readonly repository: string;
  readonly token: string;
}

export interface TargetInput {
  /** The repository's clone URL (credentials, if any, are ignored). */
  readonly url: string;
  /** Overrides the guess from the host. */
  readonly provider?: CommitStatusProvider;
  readonly token: string | undefined;
}

/**
 * github.com → GitHub; gitlab.com or a host named gitlab.* → GitLab; anything else → Gitea (a
 * self-hosted Gitea or Forgejo is the usual case; set the provider for GitHub Enterprise or GitLab
 * elsewhere).
 */
export function guessProvider(host: string): CommitStatusProvider {
  const h = host.toLowerCase();
  if (h === 'github.com' || h === 'www.github.com') return 'github';
  if (h === 'gitlab.com' || h.startsWith('gitlab.')) return 'gitlab';
  return 'gitea';
}

export function statusTarget(input: TargetInput): StatusTarget | { error: string } {
  let u: URL;
  try {
    u = new URL(input.url);
  } catch {
    return { error: `${input.url} is not a URL; commit statuses need an http(s) clone URL` };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return { error: `commit statuses need an http(s) clone URL, not ${u.protocol}` };
  if (!input.token) return { error: 'no token to post commit statuses with' };
  const provider = input.provider ?? guessProvider(u.hostname);
  const segments = u.pathname.replace(/\.git\/?$/, '').split('/').filter(Boolean);
  if (provider === 'gitlab') {
    if (segments.length < 2) return { error: `${u.origin}${u.pathname} names no GitLab project (group/project)` };
    return { provider, apiUrl: `${u.origin}/api/v4`, repository: segments.join('/'), token: input.token };
  }
  if (segments.length < 2) return { error: `${u.origin}${u.pathname} names no repository (owner/repo)` };
  const repository = segments.slice(-2).join('/');
  // Anything before owner/repo is where the server is mounted (a Gitea under /git/).
  const prefix = segments.length > 2 ? `/${segments.slice(0, -2).join('/')}` : '';
  if (provider === 'github') {
    const apiUrl = u.hostname === 'github.com' || u.hostname === 'www.github.com' ? 'https://api.github.com' : `${u.origin}${prefix}/api/v3`;
    return { provider, apiUrl, repository, token: input.token };
  }
  return { provider, apiUrl: `${u.origin}${prefix}/api/v1`, repository, token: input.token };
}

/** A short, credential-free name for logs: `gitea acme/functions`. */
export function describeTarget(t: StatusTarget): string {
  return `${t.provider} ${t.repository}`;
}

export interface StatusRequest {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const GITLAB_STATE: Record<CommitState, string> = { pending: 'running', success: 'success', failure: 'failed' };

export function statusRequest(t: StatusTarget, sha: string, status: CommitStatus): StatusRequest {
  const json = { 'content-type': 'application/json', accept: 'application/json', 'user-agent': 'sless' };
  if (t.provider === 'gitlab') {
    return {
      url: `${t.apiUrl}/projects/${encodeURIComponent(t.repository)}/statuses/${sha}`,
      headers: { ...json, 'private-token': t.token },
      body: JSON.stringify({
        state: GITLAB_STATE[status.state],
        name: status.context,
        description: status.description,
        ...(status.targetUrl ? { target_url: status.targetUrl } : {}),
      }),
    };
  }
  const body = JSON.stringify({
    state: status.state,
    context: status.context,
    description: status.description,
    ...(status.targetUrl ? { target_url: status.targetUrl } : {}),
  });
  const [owner, repo] = t.repository.split('/').map(encodeURIComponent);
  const url = `${t.apiUrl}/repos/${owner}/${repo}/statuses/${sha}`;
  if (t.provider === 'github') {
    return {
      url,
      headers: { ...json, accept: 'application/vnd.github+json', authorization: `Bearer ${t.token}`, 'x-github-api-version': '2022-11-28' },
      body,
    };
  }
  return { url, headers: { ...json, authorization: `token ${t.token}` }, body };
}
