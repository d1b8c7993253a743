// A pull-request delivery (Gitea/Forgejo `pull_request`, GitHub `pull_request`, GitLab `Merge Request
// Hook`) read into one shape, for previews (src/preview/). Pure, never throws: a body that does not
// carry what a preview needs says which field is missing. Only fields every provider sends are read;
// the PR's own diff is worked out in git (merge base of head and base), never from the payload.

/** What happened to the pull request, in one vocabulary for the three providers. */
export type PullRequestAction = 'opened' | 'reopened' | 'synchronized' | 'edited' | 'closed' | 'merged' | 'other';

export interface PullRequestEvent {
  readonly kind: 'pull_request';
  readonly action: PullRequestAction;
  /** The provider's own action name, for log lines (`synchronize`, `update`, `approved`...). */
  readonly providerAction: string;
  /** The PR number (GitLab: the merge request's iid); not checked here: see decidePreview. */
  readonly number: unknown;
  readonly baseBranch: string;
  readonly headBranch: string;
  /** The head commit as the provider saw it (40 hex digits when well formed). */
  readonly headSha: string;
  /** Head and base are the same repository; false for a fork. */
  readonly sameRepository: boolean;
  /** `owner/name` of the base repository, for logs. */
  readonly repository?: string;
}

type Body = Record<string, unknown>;

const isRecord = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);
const rec = (v: unknown): Body => (isRecord(v) ? v : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

const GITEA_GITHUB_ACTIONS: Readonly<Record<string, PullRequestAction>> = {
  opened: 'opened',
  reopened: 'reopened',
  // Gitea says synchronized, GitHub synchronize.
  synchronized: 'synchronized',
  synchronize: 'synchronized',
  edited: 'edited',
  closed: 'closed',
};

const GITLAB_ACTIONS: Readonly<Record<string, PullRequestAction>> = {
  open: 'opened',
  reopen: 'reopened',
  update: 'synchronized',
  close: 'closed',
  merge: 'merged',
};

export function readPullRequest(provider: 'gitea' | 'github' | 'gitlab', body: unknown): PullRequestEvent | { error: string } {
  if (!isRecord(body)) return { error: `the ${provider} pull request payload is not a JSON object` };
  return provider === 'gitlab' ? readGitlab(body) : readGiteaOrGithub(provider, body);
}

function readGiteaOrGithub(provider: 'gitea' | 'github', body: Body): PullRequestEvent | { error: string } {
  const pr = rec(body['pull_request']);
  const head = rec(pr['head']);
  const base = rec(pr['base']);
  const providerAction = str(body['action']);
  const baseBranch = str(base['ref']);
  const headBranch = str(head['ref']);
  const headSha = str(head['sha']);
  if (!providerAction) return { error: `the ${provider} pull request payload has no "action"` };
  if (!baseBranch || !headBranch || !headSha) {
    return { error: `the ${provider} pull request payload has no pull_request.base.ref, pull_request.head.ref or pull_request.head.sha` };
  }
  let action = GITEA_GITHUB_ACTIONS[providerAction] ?? 'other';
  if (action === 'closed' && pr['merged'] === true) action = 'merged';
  const baseRepo = rec(base['repo']);
  const headRepo = rec(head['repo']);
  // A head repository that is gone (a deleted fork) is sent as null: not the base, so a fork.
  const sameRepository = repoKey(headRepo) !== undefined && repoKey(headRepo) === repoKey(baseRepo);
  const repository = str(rec(body['repository'])['full_name']) ?? str(baseRepo['full_name']);
  return {
    kind: 'pull_request',
    action,
    providerAction,
    number: body['number'] ?? pr['number'],
    baseBranch,
    headBranch,
    headSha,
    sameRepository,
    ...(repository ? { repository } : {}),
  };
}

/** The repository's id when sent, else its full name. */
function repoKey(repo: Body): string | undefined {
  const id = repo['id'];
  if (typeof id === 'number' || (typeof id === 'string' && id !== '')) return `id:${id}`;
  const name = str(repo['full_name']);
  return name ? `name:${name}` : undefined;
}

function readGitlab(body: Body): PullRequestEvent | { error: string } {
  const mr = rec(body['object_attributes']);
  const providerAction = str(mr['action']);
  const baseBranch = str(mr['target_branch']);
  const headBranch = str(mr['source_branch']);
  const headSha = str(rec(mr['last_commit'])['id']);
  if (!providerAction) return { error: 'the gitlab merge request payload has no object_attributes.action' };
  if (!baseBranch || !headBranch || !headSha) {
    return { error: 'the gitlab merge request payload has no object_attributes.target_branch, source_branch or last_commit.id' };
  }
  let action = GITLAB_ACTIONS[providerAction] ?? 'other';
  // An update without new commits (title, labels, reviewers) carries no oldrev: nothing to build.
  if (action === 'synchronized' && str(mr['oldrev']) === undefined) action = 'edited';
  const source = mr['source_project_id'];
  const target = mr['target_project_id'];
  const repository = str(rec(body['project'])['path_with_namespace']);
  return {
    kind: 'pull_request',
    action,
    providerAction,
    number: mr['iid'],
    baseBranch,
    headBranch,
    headSha,
    sameRepository: source !== undefined && source === target,
    ...(repository ? { repository } : {}),
  };
}
