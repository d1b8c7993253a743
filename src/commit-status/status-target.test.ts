import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { statusRequest, statusTarget, type StatusTarget } from './status-target.ts';

const SHA = 'a'.repeat(40);
const target = (url: string, provider?: 'gitea' | 'github' | 'gitlab') => {
  const t = statusTarget({ url, token: 'tok', ...(provider ? { provider } : {}) });
  assert.ok(!('error' in t), 'error' in t ? t.error : '');
  return t as StatusTarget;
};

describe('statusTarget: where statuses go, from the clone URL', () => {
  const cases: Array<[string, 'gitea' | 'github' | 'gitlab' | undefined, string]> = [
    ['http://127.0.0.1:3000/acme/functions.git', undefined, 'http://127.0.0.1:3000/api/v1/repos/acme/functions/statuses/'],
    ['https://git.example.com/gitea/acme/functions', undefined, 'https://git.example.com/gitea/api/v1/repos/acme/functions/statuses/'],
    ['https://x-access-token:secret@github.com/acme/functions.git', undefined, 'https://api.github.com/repos/acme/functions/statuses/'],
    ['https://ghe.example.com/acme/functions.git', 'github', 'https://ghe.example.com/api/v3/repos/acme/functions/statuses/'],
    ['https://gitlab.com/acme/team/functions.git', undefined, 'https://gitlab.com/api/v4/projects/acme%2Fteam%2Ffunctions/statuses/'],
    ['https://code.example.com/acme/functions.git', 'gitlab', 'https://code.example.com/api/v4/projects/acme%2Ffunctions/statuses/'],
  ];
  for (const [url, provider, endpoint] of cases) {
    it(`${url}${provider ? ` (provider ${provider})` : ''} → ${endpoint}<sha>`, () => {
      const req = statusRequest(target(url, provider), SHA, { context: 'sless', state: 'success', description: 'ok' });
      assert.equal(req.url, endpoint + SHA);
      assert.ok(!req.url.includes('secret'));
    });
  }

  it('refuses what cannot work, saying why', () => {
    assert.match((statusTarget({ url: 'http://git.example/acme/functions.git', token: undefined }) as { error: string }).error, /no token/);
    assert.match((statusTarget({ url: 'git@github.com:acme/functions.git', token: 't' }) as { error: string }).error, /not a URL/);
    assert.match((statusTarget({ url: 'https://git.example/functions', token: 't' }) as { error: string }).error, /owner\/repo/);
  });
});

describe('statusRequest: the body and auth each API documents', () => {
  const status = { context: 'sless/hello', state: 'failure' as const, description: 'build failed', targetUrl: 'https://fn.example.com/funcs/a/source/hello' };

  it('Gitea: {state, context, description, target_url}, Authorization: token', () => {
    const req = statusRequest(target('http://git.example/acme/functions.git'), SHA, status);
    assert.equal(req.headers.authorization, 'token tok');
    assert.deepEqual(JSON.parse(req.body), { state: 'failure', context: 'sless/hello', description: 'build failed', target_url: status.targetUrl });
  });

  it('GitHub: the same body, Bearer token, the versioned media type', () => {
    const req = statusRequest(target('https://github.com/acme/functions'), SHA, status);
    assert.equal(req.headers.authorization, 'Bearer tok');
    assert.equal(req.headers.accept, 'application/vnd.github+json');
    assert.equal(req.headers['x-github-api-version'], '2022-11-28');
    assert.deepEqual(JSON.parse(req.body), { state: 'failure', context: 'sless/hello', description: 'build failed', target_url: status.targetUrl });
  });

  it('GitLab: name instead of context, failed/running/success states, PRIVATE-TOKEN', () => {
    const t = target('https://gitlab.com/acme/functions.git');
    const req = statusRequest(t, SHA, status);
    assert.equal(req.headers['private-token'], 'tok');
    assert.deepEqual(JSON.parse(req.body), { state: 'failed', name: 'sless/hello', description: 'build failed', target_url: status.targetUrl });
    assert.equal(JSON.parse(statusRequest(t, SHA, { ...status, state: 'pending' }).body).state, 'running');
    assert.equal(JSON.parse(statusRequest(t, SHA, { ...status, state: 'success' }).body).state, 'success');
  });
});
