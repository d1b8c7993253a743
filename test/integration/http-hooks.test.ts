// /hooks with recorded deliveries from Gitea, GitHub and GitLab (test/fixtures/webhooks, signed
// with openssl, not by the code under test): what starts a sync, what is ignored, what is refused.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { testApp } from '../helpers/http-test-kit.ts';

const dir = new URL('../fixtures/webhooks/', import.meta.url);
const deliveries = JSON.parse(await readFile(new URL('deliveries.json', dir), 'utf8')) as Record<string, unknown> & { secret: string };
const fixture = async (name: string) => ({
  body: await readFile(new URL(name, dir)),
  headers: Object.fromEntries(Object.entries(deliveries[name] as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v])),
});

describe('/hooks', async () => {
  const { app, platform, registry } = await testApp({ limits: { webhookBodyBytes: 64 * 1024 } });
  const post = (repo: string, body: Buffer | string, headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: `/hooks/dev/${repo}`, headers, payload: body });
  before(async () => {
    await platform.createRepository('dev', { name: 'shop', url: 'https://git.example/shop.git', branch: 'main', webhookSecret: deliveries.secret });
    await platform.createRepository('dev', { name: 'staging', url: 'https://git.example/shop.git', branch: 'develop', webhookSecret: deliveries.secret });
    await platform.createRepository('dev', { name: 'nosecret', url: 'https://git.example/shop.git' });
    await platform.createRepository('dev', { name: 'feature', url: 'https://git.example/shop.git', branch: 'feature-x', webhookSecret: deliveries.secret });
  });
  after(() => app.close());

  for (const provider of ['gitea', 'github', 'gitlab']) {
    it(`starts a sync at once for a signed ${provider} push to the watched branch (202)`, async () => {
      const { body, headers } = await fixture(`${provider}-push.json`);
      const before = platform.syncRequests.length;
      const res = await post('shop', body, headers);
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.json().status, 'sync requested');
      assert.equal(platform.syncRequests.length, before + 1);
      assert.equal(platform.syncRequests.at(-1)?.name, 'shop');
      assert.match(platform.syncRequests.at(-1)?.reason ?? '', new RegExp(`webhook ${provider}`));
    });

    it(`refuses a ${provider} push with a bad signature (body changed after signing; GitLab: wrong token) — 401, no sync`, async () => {
      const { body, headers } = await fixture(`${provider}-push.json`);
      const tampered = Buffer.from(body.toString().replace('refs/heads/main', 'refs/heads/mainx'));
      const before = platform.syncRequests.length;
      const res = await post('shop', provider === 'gitlab' ? body : tampered, provider === 'gitlab' ? { ...headers, 'x-gitlab-token': 'wrong' } : headers);
      assert.equal(res.statusCode, 401);
      assert.equal(res.json().code, 'unauthorized');
      assert.equal(platform.syncRequests.length, before);
    });

    it(`refuses a ${provider} push without a signature (401, no sync)`, async () => {
      const { body, headers } = await fixture(`${provider}-push.json`);
      const unsigned = Object.fromEntries(Object.entries(headers).filter(([k]) => !/signature|token/.test(k)));
      const before = platform.syncRequests.length;
      assert.equal((await post('shop', body, unsigned)).statusCode, 401);
      assert.equal(platform.syncRequests.length, before);
    });
  }

  describe('Gitea as it really sends (recorded deliveries)', () => {
    const syncs = async (repo: string, name: string) => {
      const { body, headers } = await fixture(name);
      const before = platform.syncRequests.length;
      const res = await post(repo, body, headers);
      return { res, synced: platform.syncRequests.length - before };
    };

    it('a form-encoded push (signed over the JSON inside) starts a sync like a JSON one', async () => {
      const { res, synced } = await syncs('shop', 'gitea-form-push.txt');
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(synced, 1);
    });

    it('a webhook without a secret: 401 saying so and what to set', async () => {
      const { res, synced } = await syncs('shop', 'gitea-nosecret-push.json');
      assert.equal(res.statusCode, 401);
      assert.match(res.json().error, /the webhook has no secret.*set the webhook's secret to the repository's webhookSecret/);
      assert.equal(synced, 0);
    });

    it('the test delivery ("ref": "main", unqualified) syncs the repository watching main', async () => {
      const { res, synced } = await syncs('shop', 'gitea-test-delivery.json');
      assert.equal(res.statusCode, 202, res.body);
      assert.match(res.json().reason, /test delivery for main/);
      assert.equal(synced, 1);
      const other = await syncs('staging', 'gitea-test-delivery.json');
      assert.equal(other.res.statusCode, 200);
      assert.equal(other.synced, 0);
    });

    it('deleting the watched branch (only a delete event) syncs at once; deleting another branch is ignored', async () => {
      const watched = await syncs('feature', 'gitea-delete-branch.json');
      assert.equal(watched.res.statusCode, 202, watched.res.body);
      assert.equal(watched.synced, 1);
      const other = await syncs('shop', 'gitea-delete-branch.json');
      assert.equal(other.res.statusCode, 200);
      assert.equal(other.synced, 0);
    });
  });

  it('acknowledges and ignores a push to another branch', async () => {
    const { body, headers } = await fixture('github-push.json');
    const before = platform.syncRequests.length;
    const res = await post('staging', body, headers);
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().status, 'ignored');
    assert.match(res.json().reason, /branch main; this repository watches develop/);
    assert.equal(platform.syncRequests.length, before);
  });

  it('acknowledges and ignores tag pushes and pings', async () => {
    for (const name of ['github-tag-push.json', 'gitlab-tag-push.json', 'github-ping.json']) {
      const { body, headers } = await fixture(name);
      const res = await post('shop', body, headers);
      assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
      assert.equal(res.json().status, 'ignored');
    }
  });

  it('acknowledges and ignores a pull-request delivery where the platform builds no previews (no sync)', async () => {
    const body = JSON.stringify({
      action: 'opened',
      number: 2,
      pull_request: { head: { ref: 'f', sha: 'c'.repeat(40), repo: { id: 1 } }, base: { ref: 'main', repo: { id: 1 } } },
    });
    const signature = `sha256=${createHmac('sha256', deliveries.secret).update(body).digest('hex')}`;
    const before = platform.syncRequests.length;
    const res = await post('shop', body, { 'content-type': 'application/json', 'x-github-event': 'pull_request', 'x-hub-signature-256': signature });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { status: 'ignored', reason: 'this server builds no pull-request previews' });
    assert.equal(platform.syncRequests.length, before);
  });

  it('refuses every delivery for a repository without a webhook secret', async () => {
    const { body, headers } = await fixture('github-push.json');
    assert.equal((await post('nosecret', body, headers)).statusCode, 401);
  });

  it('answers 404 for an unknown repository and 413 for an oversized body', async () => {
    const { body, headers } = await fixture('github-push.json');
    const missing = await post('nope', body, headers);
    assert.equal(missing.statusCode, 404);
    assert.deepEqual(missing.json(), { error: 'no repository dev/nope takes webhooks here', code: 'repository_not_found' });
    const huge = await post('shop', Buffer.alloc(100 * 1024, 32), headers);
    assert.equal(huge.statusCode, 413);
  });

  it('counts outcomes per provider in the metrics', async () => {
    const text = await registry.metrics();
    assert.match(text, /sless_webhooks_total\{provider="gitea",outcome="accepted"\} [1-9]\d*\n/);
    assert.match(text, /sless_webhooks_total\{provider="github",outcome="unauthorized"\} \d+/);
    assert.match(text, /sless_webhooks_total\{provider="github",outcome="ignored"\} \d+/);
  });
});
