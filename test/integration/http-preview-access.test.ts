// /v1 in a pull request's preview namespace `<namespace>-pr-<N>` (docs/previews.md "Who may open a
// preview"), with real HS256 JWTs: a token that may use namespace X reads X's previews (the
// `sless/preview` status links reviewers there) but changes nothing in them, since a preview is
// managed from its pull request; it never reaches another namespace's previews nor a name that only
// looks like one of its own; an admin token keeps full access.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { hs256Token, NS, testApp } from '../helpers/http-test-kit.ts';
import type { MemoryPlatform } from '../helpers/memory-platform.ts';

const PREVIEW = `${NS}-pr-3`;
const MANAGED = /^namespace sless-[0-9a-f]{16}-pr-3 is the preview of pull request #3 of sless-[0-9a-f]{16}: this token may read it, but a preview is managed from its pull request \(push to its branch, close it\); only an admin token changes it here$/;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let app: FastifyInstance;
let platform: MemoryPlatform;
let tenant: string;
let admin: string;

before(async () => {
  ({ app, platform } = await testApp());
  tenant = await hs256Token();
  admin = await hs256Token({ sless_admin: true });
  for (const ns of [NS, PREVIEW]) {
    await platform.createFunction(ns, { name: 'hello', runtime: 'nodejs20' });
    await platform.createTrigger(ns, { name: 'hello-http', type: 'http', functionRef: 'hello' });
  }
  platform.revisions.set(`${PREVIEW}/hello`, [
    { revision: 2, codeHash: `sha256:${'2'.repeat(64)}`, image: 'local:b2', liveFrom: '2026-12-06T11:00:00Z' },
    { revision: 1, codeHash: `sha256:${'1'.repeat(64)}`, image: 'local:b1', liveFrom: '2026-12-06T10:00:00Z', liveUntil: '2026-12-06T11:00:00Z' },
  ]);
  platform.logs.write(PREVIEW, 'hello', 'p1', 'stdout', 'hello from the preview\n');
});
after(() => app.close());

describe("a tenant's token for namespace X in X's preview X-pr-<N>", () => {
  const reads = [
    '/functions',
    '/functions/hello',
    '/functions/hello/logs',
    '/functions/hello/revisions',
    '/functions/hello/source',
    '/functions/hello/invocations',
    '/functions/hello/builds',
    '/triggers',
    '/triggers/hello-http',
    '/jobs',
    '/repositories',
  ];
  for (const path of reads) {
    it(`reads GET ${path}`, async () => {
      const res = await app.inject({ url: `/v1/namespaces/${PREVIEW}${path}`, headers: bearer(tenant) });
      assert.equal(res.statusCode, 200, res.body);
    });
  }

  it('lists the preview’s functions and shows its logs', async () => {
    const list = await app.inject({ url: `/v1/namespaces/${PREVIEW}/functions`, headers: bearer(tenant) });
    assert.deepEqual(list.json().map((f: { name: string; namespace: string }) => [f.namespace, f.name]), [[PREVIEW, 'hello']]);
    const logs = await app.inject({ url: `/v1/namespaces/${PREVIEW}/functions/hello/logs`, headers: bearer(tenant) });
    assert.match(logs.body, /hello from the preview/);
  });

  const writes: Array<[string, string, object?]> = [
    ['POST', '/ensure'],
    ['POST', '/functions', { name: 'added', runtime: 'nodejs20' }],
    ['PUT', '/functions/hello', { timeout_sec: 5 }],
    ['DELETE', '/functions/hello'],
    ['POST', '/functions/hello/rollback', { revision: 1 }],
    ['DELETE', '/functions/hello/rollback'],
    ['POST', '/triggers', { name: 'every-minute', type: 'cron', function_ref: 'hello', schedule: '* * * * *' }],
    ['PATCH', '/triggers/hello-http', { enabled: false }],
    ['DELETE', '/triggers/hello-http'],
    ['POST', '/jobs', { name: 'once', function_ref: 'hello' }],
    ['POST', '/repositories', { name: 'r', url: 'https://git.example/r.git' }],
    ['POST', '/repositories/r/sync'],
  ];
  for (const [method, path, body] of writes) {
    it(`is refused ${method} ${path} with 403, saying previews are managed from the pull request`, async () => {
      const res = await app.inject({
        method: method as 'POST',
        url: `/v1/namespaces/${PREVIEW}${path}`,
        headers: bearer(tenant),
        ...(body ? { payload: body } : {}),
      });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().code, 'forbidden');
      assert.match(res.json().error, MANAGED);
    });
  }

  it('is refused an upload into the preview before its body is read', async () => {
    const res = await app.inject({
      method: 'POST',
      url: `/v1/namespaces/${PREVIEW}/functions/hello/upload`,
      headers: { ...bearer(tenant), 'content-type': 'application/zip' },
      payload: Buffer.from('PK\x05\x06' + '\0'.repeat(18), 'binary'),
    });
    assert.equal(res.statusCode, 403, res.body);
    assert.match(res.json().error, MANAGED);
  });

  it('changed nothing and created no namespace named like a preview', async () => {
    for (const n of [3, 9]) {
      await app.inject({ method: 'POST', url: `/v1/namespaces/${NS}-pr-${n}/ensure`, headers: bearer(tenant) });
      await app.inject({ method: 'POST', url: `/v1/namespaces/${NS}-pr-${n}/functions`, headers: bearer(tenant), payload: { name: 'x', runtime: 'nodejs20' } });
    }
    assert.deepEqual([...platform.namespaces], []);
    assert.deepEqual([...platform.functions.keys()].sort(), [`${PREVIEW}/hello`, `${NS}/hello`]);
    assert.equal(platform.functions.get(`${PREVIEW}/hello`)?.pinned, undefined);
    assert.deepEqual([...platform.triggers.keys()].sort(), [`${PREVIEW}/hello-http`, `${NS}/hello-http`]);
    assert.deepEqual(platform.syncRequests, []);
  });
});

describe("a tenant's token outside its own previews", () => {
  const others: Array<[string, string]> = [
    ['another namespace’s preview', 'sless-0000000000000000-pr-3'],
    ['a preview of its own preview (X-pr-3-pr-4)', `${NS}-pr-3-pr-4`],
    ['a namespace that starts with X (Xother-pr-3)', `${NS}0-pr-3`],
    ['a number with a leading zero (X-pr-03)', `${NS}-pr-03`],
    ['pull request 0 (X-pr-0)', `${NS}-pr-0`],
    ['a suffix that is not a number (X-pr-x)', `${NS}-pr-x`],
  ];
  for (const [what, ns] of others) {
    it(`is refused ${what} with 403, as any namespace not its own`, async () => {
      const res = await app.inject({ url: `/v1/namespaces/${ns}/functions`, headers: bearer(tenant) });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().error, `this token owns namespace ${NS}, not ${ns}`);
    });
  }
});

describe('an admin token in a preview namespace', () => {
  it('reads and changes it, as any namespace', async () => {
    assert.equal((await app.inject({ url: `/v1/namespaces/${PREVIEW}/functions/hello`, headers: bearer(admin) })).statusCode, 200);
    const put = await app.inject({ method: 'PUT', url: `/v1/namespaces/${PREVIEW}/functions/hello`, headers: bearer(admin), payload: { timeout_sec: 7 } });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().timeout_sec, 7);
  });
});
