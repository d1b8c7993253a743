// A refused webhook leaves a log line a user can act on: provider, delivery id and reason, never the
// secret (the same plugin serves `sless dev` and the controller).
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { testApp } from '../helpers/http-test-kit.ts';

const dir = new URL('../fixtures/webhooks/', import.meta.url);
const deliveries = JSON.parse(await readFile(new URL('deliveries.json', dir), 'utf8')) as Record<string, Record<string, string>> & { secret: string };

describe('refused webhooks are logged', async () => {
  const lines: string[] = [];
  const { app, platform } = await testApp({ logger: { level: 'info', stream: { write: (l: string) => void lines.push(l) } } });
  before(() => platform.createRepository('dev', { name: 'shop', url: 'https://git.example/shop.git', branch: 'main', webhookSecret: deliveries.secret }));
  after(() => app.close());

  for (const provider of ['gitea', 'github', 'gitlab']) {
    it(`logs a ${provider} delivery with a bad signature: provider, delivery id, reason`, async () => {
      const body = await readFile(new URL(`${provider}-push.json`, dir));
      const headers = Object.fromEntries(Object.entries(deliveries[`${provider}-push.json`] ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
      const forged = provider === 'gitlab' ? { ...headers, 'x-gitlab-token': 'wrong-token' } : headers;
      const res = await app.inject({ method: 'POST', url: '/hooks/dev/shop', headers: forged, payload: provider === 'gitlab' ? body : Buffer.concat([body, Buffer.from(' ')]) });
      assert.equal(res.statusCode, 401);
      const line = lines.find((l) => /webhook refused/.test(l) && l.includes(`"provider":"${provider}"`));
      assert.ok(line, lines.join(''));
      const entry = JSON.parse(line) as Record<string, unknown>;
      const delivery = Object.entries(headers).find(([k]) => /delivery|event-uuid/.test(k))?.[1];
      assert.equal(entry.delivery, delivery);
      assert.equal(entry.namespace, 'dev');
      assert.equal(entry.repository, 'shop');
      assert.match(String(entry.reason), /signature|token/i);
      assert.ok(!lines.some((l) => l.includes(deliveries.secret)), 'the secret reached the log');
    });
  }

  it('logs a delivery for a repository that does not exist', async () => {
    const res = await app.inject({ method: 'POST', url: '/hooks/dev/nope', headers: { 'x-github-event': 'push', 'x-github-delivery': 'abc-1' }, payload: '{}' });
    assert.equal(res.statusCode, 404);
    assert.ok(lines.some((l) => /webhook refused/.test(l) && /"repository":"nope"/.test(l) && /"delivery":"abc-1"/.test(l)), lines.join(''));
  });
});
