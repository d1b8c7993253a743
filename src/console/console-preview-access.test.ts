// The console (/funcs) in a pull request's preview namespace `<namespace>-pr-<N>` through app.inject()
// with real HS256 JWTs (docs/previews.md "Who may open a preview"): the `sless/preview` status links a
// reviewer to /funcs/<namespace>-pr-<N>, and a token of <namespace> opens it, its function pages and
// logs, and calls its functions from the Invoke tab; its switches, rollback and sync are not shown
// and are refused with 403 (a preview is managed from its pull request); another namespace's
// preview stays refused; an admin token keeps its controls.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import type { PlatformPreviews, PreviewRecord } from '../platform/types.ts';
import { csrfTokenOf } from './session.ts';
import { hs256Token, NS, testApp } from '../../test/helpers/http-test-kit.ts';
import { MemoryPlatform } from '../../test/helpers/memory-platform.ts';

const PREVIEW = `${NS}-pr-3`;
const MANAGED = new RegExp(`namespace ${PREVIEW} is the preview of pull request #3 of ${NS}: this token may read it, but a preview is managed from its pull request`);
const browser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
const cookie = (token: string) => ({ cookie: `sless_console=${token}` });
const form = { 'content-type': 'application/x-www-form-urlencoded' };

/** The memory platform with one open preview: pull request #3 of repository `team` in NS. */
class PreviewingPlatform extends MemoryPlatform {
  readonly previews: PlatformPreviews = {
    pullRequest: async () => ({ outcome: 'ignored', message: 'not in this test' }),
    list: async (ns): Promise<PreviewRecord[]> =>
      ns !== NS
        ? []
        : [
            {
              number: 3,
              namespace: PREVIEW,
              repository: 'team',
              branch: 'feature-x',
              head: 'a'.repeat(40),
              url: `http://localhost/fn/${PREVIEW}/`,
              expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
              functions: [{ name: 'hello', state: 'built', phase: 'Ready', url: `http://localhost/fn/${PREVIEW}/hello` }],
            },
          ],
  };
}

let app: FastifyInstance;
let platform: PreviewingPlatform;
let upstream: Server;
let tenant: string;
let admin: string;

before(async () => {
  platform = new PreviewingPlatform();
  ({ app } = await testApp({ platform }));
  tenant = await hs256Token();
  admin = await hs256Token({ sless_admin: true }, { sub: 'root' });
  upstream = createServer((_req, res) => res.end('hello from the preview'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  for (const ns of [NS, PREVIEW]) {
    await platform.createFunction(ns, { name: 'hello', runtime: 'nodejs20' });
    await platform.createTrigger(ns, { name: 'hello-http', type: 'http', functionRef: 'hello' });
    platform.serve(ns, 'hello', base);
  }
  const hash = (c: string) => `sha256:${c.repeat(64)}`;
  platform.revisions.set(`${PREVIEW}/hello`, [
    { revision: 1, codeHash: hash('a'), image: 'img@1', liveFrom: '2026-12-06T10:00:00.000Z', liveUntil: '2026-12-06T11:00:00.000Z' },
    { revision: 2, codeHash: hash('b'), image: 'img@2', liveFrom: '2026-12-06T11:00:00.000Z' },
  ]);
  platform.logs.write(PREVIEW, 'hello', 'pid-1', 'stdout', 'a line from the preview\n');
});
after(async () => {
  await app.close();
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
});

describe("a tenant's token for namespace X in the console of its preview X-pr-<N>", () => {
  it('opens /funcs/X-pr-<N> (where the sless/preview status links), with the preview banner and a read-only note', async () => {
    const res = await app.inject({ url: `/funcs/${PREVIEW}`, headers: { ...cookie(tenant), ...browser } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /<tr data-fn="hello"/);
    assert.match(res.body, /class="preview-banner"[\s\S]*You may read it and call its functions; it changes through its pull request only/);
  });

  it('opens a function’s page with its switches and rollback not offered', async () => {
    const res = await app.inject({ url: `/funcs/${PREVIEW}/functions/hello`, headers: { ...cookie(tenant), ...browser } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /role="switch" aria-checked="true" aria-disabled="true"/);
    assert.match(res.body, /The pull request owns this switch/);
    assert.doesNotMatch(res.body, /class="switch-form"/);
    assert.doesNotMatch(res.body, /Roll back to this/);
    assert.match(res.body, /Not here: a preview changes through its pull request only/);
  });

  it('opens the logs and source pages and the JSON of a function', async () => {
    const logs = await app.inject({ url: `/funcs/${PREVIEW}/functions/hello/logs`, headers: { ...cookie(tenant), ...browser } });
    assert.equal(logs.statusCode, 200, logs.body);
    assert.match(logs.body, /a line from the preview/);
    assert.equal((await app.inject({ url: `/funcs/${PREVIEW}/source/hello`, headers: { ...cookie(tenant), ...browser } })).statusCode, 200);
    const json = await app.inject({ url: `/funcs/${PREVIEW}/functions/hello`, headers: { ...cookie(tenant), accept: 'application/json' } });
    assert.equal(json.json().function.namespace, PREVIEW);
  });

  it('calls a preview function from the Invoke tab (a read-like action: /fn needs no token anyway)', async () => {
    const res = await app.inject({
      method: 'POST',
      url: `/funcs/${PREVIEW}/functions/hello/invoke`,
      headers: { ...cookie(tenant), ...form, accept: 'application/json' },
      payload: `method=GET&path=%2F&_csrf=${csrfTokenOf(tenant)}`,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 200);
    assert.equal(res.json().body, 'hello from the preview');
    const forged = await app.inject({ method: 'POST', url: `/funcs/${PREVIEW}/functions/hello/invoke`, headers: { ...cookie(tenant), ...form }, payload: 'method=GET&_csrf=forged' });
    assert.equal(forged.statusCode, 403, 'still CSRF-checked');
  });

  const writes: Array<[string, string, string]> = [
    ['a trigger switch', '/triggers/hello-http', 'enabled=false'],
    ['a rollback', '/functions/hello/rollback', 'revision=1'],
    ['the undo of a rollback', '/functions/hello/rollback/undo', ''],
    ['a sync', '/repositories/team/sync', ''],
  ];
  for (const [what, path, fields] of writes) {
    it(`is refused ${what} with 403, saying previews are managed from the pull request`, async () => {
      const res = await app.inject({
        method: 'POST',
        url: `/funcs/${PREVIEW}${path}`,
        headers: { ...cookie(tenant), ...form, ...browser },
        payload: `${fields}&_csrf=${csrfTokenOf(tenant)}`,
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.match(res.body, /<h1[^>]*>Refused<\/h1>/);
      assert.match(res.body.replace(/&#39;|&#x27;/g, "'"), MANAGED);
    });
  }

  it('changed nothing in the preview', async () => {
    assert.equal((await platform.getTrigger(PREVIEW, 'hello-http')).enabled, true);
    assert.equal((await platform.getFunction(PREVIEW, 'hello')).pinned, undefined);
    assert.deepEqual(platform.syncRequests, []);
  });

  it('is refused another namespace’s preview and a look-alike, as any namespace not its own', async () => {
    for (const ns of ['sless-0000000000000000-pr-3', `${PREVIEW}-pr-4`, `${NS}0-pr-3`]) {
      const res = await app.inject({ url: `/funcs/${ns}`, headers: { ...cookie(tenant), ...browser } });
      assert.equal(res.statusCode, 403, ns);
      assert.match(res.body, /Not your namespace/);
      assert.match(res.body, new RegExp(`this token owns namespace ${NS}, not ${ns}`));
    }
  });
});

describe('an admin token in the console of a preview', () => {
  it('keeps the switches and rollback, and may use them', async () => {
    const page = await app.inject({ url: `/funcs/${PREVIEW}/functions/hello`, headers: { ...cookie(admin), ...browser } });
    assert.match(page.body, /class="switch-form"/);
    assert.match(page.body, /Roll back to this \(revision 1\)/);
    assert.doesNotMatch(page.body, /You may read it and call its functions/);
    const res = await app.inject({
      method: 'POST',
      url: `/funcs/${PREVIEW}/triggers/hello-http`,
      headers: { ...cookie(admin), ...form },
      payload: `enabled=false&_csrf=${csrfTokenOf(admin)}`,
    });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal((await platform.getTrigger(PREVIEW, 'hello-http')).enabled, false);
  });
});
