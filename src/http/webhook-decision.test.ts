import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { WebhookVerdict } from '../webhook/parse-webhook.ts';
import { decideWebhook } from './webhook-decision.ts';

const push = (ref: string, extra: Partial<{ branch: string; deleted: boolean }> = {}): WebhookVerdict => ({
  provider: 'github',
  deliveryId: 'd1',
  status: 'verified',
  signature: 'valid',
  event: { kind: 'push', ref, after: 'a'.repeat(40), deleted: false, cloneUrls: [], ...extra },
});

describe('decideWebhook', () => {
  const cases: Array<[string, WebhookVerdict, string]> = [
    ['a push to the watched branch', push('refs/heads/main', { branch: 'main' }), 'accepted'],
    ['the watched branch deleted (the sync reports it)', push('refs/heads/main', { branch: 'main', deleted: true }), 'accepted'],
    ['a push to another branch', push('refs/heads/dev', { branch: 'dev' }), 'ignored'],
    ['a tag push', push('refs/tags/v1'), 'ignored'],
    ['a ping', { provider: 'github', status: 'verified', signature: 'valid', event: { kind: 'ping' } }, 'ignored'],
    ['another event', { provider: 'gitlab', status: 'verified', signature: 'valid', event: { kind: 'other', name: 'Issue Hook' } }, 'ignored'],
    ['a bad signature', { provider: 'gitea', status: 'rejected', signature: 'invalid', error: 'signature mismatch' }, 'unauthorized'],
    ['no signature', { provider: 'gitea', status: 'rejected', signature: 'missing', error: 'no signature' }, 'unauthorized'],
    ['a signed but unreadable body', { provider: 'github', status: 'malformed', signature: 'valid', error: 'bad JSON' }, 'bad_request'],
  ];
  for (const [what, verdict, outcome] of cases) {
    it(`${outcome} for ${what}`, () => {
      assert.equal(decideWebhook(verdict, 'main').outcome, outcome);
    });
  }
  const gitea = (event: Extract<WebhookVerdict, { status: 'verified' }>['event']): WebhookVerdict => ({
    provider: 'gitea',
    status: 'verified',
    signature: 'valid',
    event,
  });
  const testDelivery = (ref: string) => gitea({ kind: 'push', ref, after: 'a'.repeat(40), before: 'a'.repeat(40), deleted: false, cloneUrls: [] });
  const deletion = (refType: 'branch' | 'tag', name: string) => gitea({ kind: 'delete', refType, name, cloneUrls: [] });
  const giteaCases: Array<[string, WebhookVerdict, string, RegExp]> = [
    ["Gitea's test delivery naming the watched branch unqualified", testDelivery('main'), 'accepted', /test delivery for main/],
    ["Gitea's test delivery naming another branch", testDelivery('dev'), 'ignored', /not a branch push/],
    ['the watched branch deleted (a delete event only)', deletion('branch', 'main'), 'accepted', /watched branch main was deleted/],
    ['another branch deleted', deletion('branch', 'dev'), 'ignored', /branch dev deleted; this repository watches branch main/],
    ['a tag named like the branch deleted', deletion('tag', 'main'), 'ignored', /tag main deleted/],
  ];
  for (const [what, verdict, outcome, message] of giteaCases) {
    it(`${outcome} for ${what}`, () => {
      const decision = decideWebhook(verdict, 'main');
      assert.equal(decision.outcome, outcome);
      assert.match(decision.message, message);
    });
  }

  it("hands an accepted push's new head to the sync as a hint; a deleted branch or a test delivery without a commit id gives none", () => {
    assert.equal(decideWebhook(push('refs/heads/main', { branch: 'main' }), 'main').head, 'a'.repeat(40));
    assert.equal(decideWebhook(push('refs/heads/main', { branch: 'main', deleted: true }), 'main').head, undefined);
    const zeros = gitea({ kind: 'push', ref: 'refs/heads/main', branch: 'main', after: '0'.repeat(40), deleted: false, cloneUrls: [] });
    assert.equal(decideWebhook(zeros, 'main').head, undefined);
    const odd = gitea({ kind: 'push', ref: 'main', after: 'HEAD', deleted: false, cloneUrls: [] });
    assert.equal(decideWebhook(odd, 'main').outcome, 'accepted');
    assert.equal(decideWebhook(odd, 'main').head, undefined);
    assert.equal(decideWebhook(push('refs/heads/dev', { branch: 'dev' }), 'main').head, undefined, 'ignored pushes hint nothing');
  });

  it('names the provider and delivery in the sync reason', () => {
    assert.equal(decideWebhook(push('refs/heads/main', { branch: 'main' }), 'main').reason, 'webhook github delivery d1');
  });

  it('hands a verified pull-request delivery on to the previews, whatever its base (they decide)', () => {
    const event = { kind: 'pull_request', action: 'opened', providerAction: 'opened', number: 3, baseBranch: 'dev', headBranch: 'f', headSha: 'a'.repeat(40), sameRepository: true } as const;
    const d = decideWebhook({ provider: 'gitea', deliveryId: 'd2', status: 'verified', signature: 'valid', event }, 'main');
    assert.equal(d.outcome, 'pull_request');
    assert.equal(d.pullRequest, event);
    assert.equal(d.reason, 'webhook gitea delivery d2');
  });
});
