import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { parseWebhook } from './parse-webhook.ts';
import { readPullRequest, type PullRequestEvent } from './pull-request.ts';

const SHA = 'c'.repeat(40);

/** Gitea 1.27 and GitHub send the same shape for what previews read. */
function giteaLike(action: string, opts: { merged?: boolean; fork?: boolean; number?: unknown } = {}) {
  return {
    action,
    number: opts.number ?? 7,
    pull_request: {
      number: 7,
      merged: opts.merged ?? false,
      merge_base: 'b'.repeat(40),
      head: { ref: 'feature', sha: SHA, repo: { id: opts.fork ? 99 : 1, full_name: opts.fork ? 'eve/functions' : 'acme/functions' } },
      base: { ref: 'main', sha: 'a'.repeat(40), repo: { id: 1, full_name: 'acme/functions' } },
    },
    repository: { id: 1, full_name: 'acme/functions' },
  };
}

function gitlab(action: string, opts: { fork?: boolean; oldrev?: string } = {}) {
  return {
    object_kind: 'merge_request',
    project: { id: 1, path_with_namespace: 'acme/functions' },
    object_attributes: {
      iid: 3,
      action,
      source_branch: 'feature',
      target_branch: 'main',
      source_project_id: opts.fork ? 99 : 1,
      target_project_id: 1,
      last_commit: { id: SHA },
      ...(opts.oldrev ? { oldrev: opts.oldrev } : {}),
    },
  };
}

const ok = (r: PullRequestEvent | { error: string }): PullRequestEvent => {
  assert.ok(!('error' in r), 'error' in r ? r.error : '');
  return r;
};

describe('reading pull-request deliveries (Gitea, GitHub, GitLab) into one shape', () => {
  it('Gitea opened: number, branches, head commit, same repository', () => {
    const e = ok(readPullRequest('gitea', giteaLike('opened')));
    assert.deepEqual(
      { action: e.action, number: e.number, base: e.baseBranch, head: e.headBranch, sha: e.headSha, same: e.sameRepository },
      { action: 'opened', number: 7, base: 'main', head: 'feature', sha: SHA, same: true },
    );
  });

  it("Gitea's synchronized and GitHub's synchronize are the same action", () => {
    assert.equal(ok(readPullRequest('gitea', giteaLike('synchronized'))).action, 'synchronized');
    assert.equal(ok(readPullRequest('github', giteaLike('synchronize'))).action, 'synchronized');
  });

  it('closed with merged: true is a merge; without it a close', () => {
    assert.equal(ok(readPullRequest('github', giteaLike('closed', { merged: true }))).action, 'merged');
    assert.equal(ok(readPullRequest('gitea', giteaLike('closed'))).action, 'closed');
  });

  it('a head in another repository is a fork; a head repository sent as null (deleted fork) too', () => {
    assert.equal(ok(readPullRequest('github', giteaLike('opened', { fork: true }))).sameRepository, false);
    const gone = giteaLike('opened');
    (gone.pull_request.head as { repo: unknown }).repo = null;
    assert.equal(ok(readPullRequest('gitea', gone)).sameRepository, false);
  });

  it('an action previews do not act on is "other", with the provider\'s word kept for the log', () => {
    const e = ok(readPullRequest('github', giteaLike('labeled')));
    assert.equal(e.action, 'other');
    assert.equal(e.providerAction, 'labeled');
  });

  it('the number is passed on as sent (the decision refuses a bad one)', () => {
    assert.equal(ok(readPullRequest('gitea', giteaLike('opened', { number: '7; rm' }))).number, '7; rm');
  });

  it('GitLab Merge Request Hook: open, update with new commits, update without, merge, close; forks by project id', () => {
    const open = ok(readPullRequest('gitlab', gitlab('open')));
    assert.deepEqual([open.action, open.number, open.baseBranch, open.headBranch, open.headSha, open.sameRepository], ['opened', 3, 'main', 'feature', SHA, true]);
    assert.equal(ok(readPullRequest('gitlab', gitlab('update', { oldrev: 'd'.repeat(40) }))).action, 'synchronized');
    assert.equal(ok(readPullRequest('gitlab', gitlab('update'))).action, 'edited');
    assert.equal(ok(readPullRequest('gitlab', gitlab('merge'))).action, 'merged');
    assert.equal(ok(readPullRequest('gitlab', gitlab('close'))).action, 'closed');
    assert.equal(ok(readPullRequest('gitlab', gitlab('open', { fork: true }))).sameRepository, false);
  });

  it('a payload without the branches or head says which fields are missing', () => {
    const r = readPullRequest('gitea', { action: 'opened', number: 1, pull_request: { head: {}, base: { ref: 'main' } } });
    assert.ok('error' in r);
    assert.match(r.error, /pull_request\.head\.ref/);
    assert.match((readPullRequest('gitlab', { object_attributes: {} }) as { error: string }).error, /object_attributes\.action/);
    assert.match((readPullRequest('github', [1]) as { error: string }).error, /not a JSON object/);
  });

  it('parseWebhook hands a signed Gitea pull_request delivery over as a pull_request event', () => {
    const body = Buffer.from(JSON.stringify(giteaLike('opened')));
    const signature = createHmac('sha256', 's3cret').update(body).digest('hex');
    const v = parseWebhook({ headers: { 'x-gitea-event': 'pull_request', 'x-gitea-signature': signature }, rawBody: body, secret: 's3cret' });
    assert.equal(v.status, 'verified');
    assert.equal(v.status === 'verified' && v.event.kind, 'pull_request');
    const forged = parseWebhook({ headers: { 'x-gitea-event': 'pull_request', 'x-gitea-signature': '0'.repeat(64) }, rawBody: body, secret: 's3cret' });
    assert.equal(forged.status, 'rejected');
  });

  it('parseWebhook reads a GitLab Merge Request Hook with its token', () => {
    const v = parseWebhook({ headers: { 'x-gitlab-event': 'Merge Request Hook', 'x-gitlab-token': 't' }, rawBody: Buffer.from(JSON.stringify(gitlab('open'))), secret: 't' });
    assert.equal(v.status === 'verified' && v.event.kind, 'pull_request');
  });
});
