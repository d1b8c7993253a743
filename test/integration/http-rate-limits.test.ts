// Issue 11 item 5 on the HTTP surface: /v1 is rate-limited per token subject and /hooks per repository
// (@fastify/rate-limit), so a tenant's flood gets 429 + Retry-After and nobody else notices.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { namespaceForSubject } from '../../src/auth/namespace-for-subject.ts';
import { hs256Token, testApp } from '../helpers/http-test-kit.ts';

const SECRET = 'webhook-secret-0123456789';

function push(): { body: string; headers: Record<string, string> } {
  const body = JSON.stringify({ ref: 'refs/heads/main', before: '0'.repeat(40), after: '1'.repeat(40), commits: [] });
  const sig = createHmac('sha256', SECRET).update(body).digest('hex');
  return { body, headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': 'd', 'x-hub-signature-256': `sha256=${sig}` } };
}

describe('rate limits on /v1 and /hooks', async () => {
  const { app, platform } = await testApp({ rateLimits: { v1PerMinute: 5, hooksPerMinute: 3 } });
  after(() => app.close());
  const abuser = await hs256Token({}, { sub: 'abuser@example.com' });
  const other = await hs256Token({}, { sub: 'other@example.com' });
  const admin = await hs256Token({ sless_admin: true }, { sub: 'ops@example.com' });
  const list = (token: string, sub: string) => app.inject({ url: `/v1/namespaces/${namespaceForSubject(sub)}/functions`, headers: { authorization: `Bearer ${token}` } });
  before(async () => {
    for (const name of ['flooded', 'quiet']) await platform.createRepository('team', { name, url: 'https://git.example/x.git', branch: 'main', webhookSecret: SECRET });
  });

  it('answers 429 with Retry-After to the subject over its limit, and only to it', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await list(abuser, 'abuser@example.com')).statusCode, 200);
    const refused = await list(abuser, 'abuser@example.com');
    assert.equal(refused.statusCode, 429, refused.body);
    assert.equal(refused.json().code, 'too_many_requests');
    // One token: refused as that token (before it is verified again); its subject's limit is the same.
    assert.match(refused.json().error, /at most 5 \/v1 requests per minute for this token/);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${refused.headers['retry-after']}`);
    // Another tenant, and an admin, have their own allowance.
    assert.equal((await list(other, 'other@example.com')).statusCode, 200);
    assert.equal((await app.inject({ url: '/v1/namespaces/team-a/functions', headers: { authorization: `Bearer ${admin}` } })).statusCode, 200);
  });

  it('counts webhook deliveries per repository', async () => {
    const post = (repo: string) => {
      const { body, headers } = push();
      return app.inject({ method: 'POST', url: `/hooks/team/${repo}`, headers, payload: body });
    };
    for (let i = 0; i < 3; i++) assert.equal((await post('flooded')).statusCode, 202);
    const refused = await post('flooded');
    assert.equal(refused.statusCode, 429, refused.body);
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.match(refused.json().error, /at most 3 webhook deliveries per minute for team\/flooded/);
    assert.equal((await post('quiet')).statusCode, 202, 'another repository is not slowed down');
  });

  it('leaves /fn and health alone', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await app.inject({ url: '/healthz' })).statusCode, 200);
  });
});

describe('a /v1 flood with one token', async () => {
  const { app, registry } = await testApp({ rateLimits: { v1PerMinute: 5, hooksPerMinute: 3 } });
  after(() => app.close());
  const failures = async () => (await registry.getSingleMetric('sless_auth_failures_total')?.get())?.values.reduce((a, v) => a + v.value, 0) ?? 0;

  it('is refused past the limit before the token is verified: a forged token is checked (401) only up to the limit, then 429', async () => {
    const forged = await hs256Token({}, { sub: 'abuser@example.com', secret: 'not-the-secret-but-long-enough-0123456789' });
    const send = () => app.inject({ url: `/v1/namespaces/${namespaceForSubject('abuser@example.com')}/functions`, headers: { authorization: `Bearer ${forged}` } });
    const before = await failures();
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await send()).statusCode);
    assert.deepEqual(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
    // Each verification of a refused token is counted (and logged): the flood past the limit cost none.
    assert.equal((await failures()) - before, 5);
  });

  it('does not touch another token of the same subject until the subject’s own limit', async () => {
    const first = await hs256Token({ n: 1 }, { sub: 'busy@example.com' });
    const second = await hs256Token({ n: 2 }, { sub: 'busy@example.com' });
    const list = (token: string) => app.inject({ url: `/v1/namespaces/${namespaceForSubject('busy@example.com')}/functions`, headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < 3; i++) assert.equal((await list(first)).statusCode, 200);
    for (let i = 0; i < 2; i++) assert.equal((await list(second)).statusCode, 200);
    // The subject's limit (5) holds across its tokens.
    const refused = await list(second);
    assert.equal(refused.statusCode, 429, refused.body);
    assert.match(refused.json().error, /for sless-[0-9a-f]{16}/);
  });
});
