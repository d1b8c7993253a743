// Issue 11 item 4 on /v1 and the console: no token, admin or not, acts in the platform's own namespaces
// (the controller's, the builds', kube-system, kube-public, kube-node-lease), where a function could read the platform's Secrets.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { hs256Token, NS, testApp } from '../helpers/http-test-kit.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('/v1 keeps every token out of the platform namespaces', async () => {
  const { app } = await testApp({ platformNamespaces: { system: 'sless-system', build: 'sless-builds' } });
  after(() => app.close());
  const admin = await hs256Token({ sless_admin: true });
  const tenant = await hs256Token();

  for (const ns of ['sless-system', 'sless-builds', 'kube-system', 'kube-public']) {
    it(`answers 403 to an admin token in ${ns}, saying why`, async () => {
      const list = await app.inject({ url: `/v1/namespaces/${ns}/functions`, headers: bearer(admin) });
      assert.equal(list.statusCode, 403, list.body);
      assert.equal(list.json().code, 'forbidden');
      assert.match(list.json().error, new RegExp(`namespace ${ns} (is where|belongs to).*not even an admin token`));
      const create = await app.inject({
        method: 'POST',
        url: `/v1/namespaces/${ns}/functions`,
        headers: bearer(admin),
        payload: { name: 'steal', runtime: 'nodejs20', env_from_secrets: ['sless-controller-secrets'] },
      });
      assert.equal(create.statusCode, 403, create.body);
      assert.equal((await app.inject({ method: 'POST', url: `/v1/namespaces/${ns}/ensure`, headers: bearer(admin) })).statusCode, 403);
      assert.equal((await app.inject({ url: `/funcs/${ns}`, headers: bearer(admin) })).statusCode, 403);
    });
  }

  it('still lets an admin token into tenant namespaces, and a tenant into its own', async () => {
    assert.equal((await app.inject({ url: '/v1/namespaces/team-a/functions', headers: bearer(admin) })).statusCode, 200);
    assert.equal((await app.inject({ url: `/v1/namespaces/${NS}/functions`, headers: bearer(tenant) })).statusCode, 200);
    assert.equal((await app.inject({ url: '/v1/namespaces/kube-system/functions', headers: bearer(tenant) })).statusCode, 403);
  });
});
