// /v1 routes on the memory platform: every route's happy path, strict inputs, error mapping, and
// credentials that go in but never come out.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions } from 'fastify';
import { hs256Token, NS, testApp } from '../helpers/http-test-kit.ts';

describe('/v1', async () => {
  const { app, platform, deps } = await testApp();
  let auth: Record<string, string> = {};
  before(async () => {
    auth = { authorization: `Bearer ${await hs256Token()}` };
  });
  after(() => app.close());
  const call = (method: InjectOptions['method'], path: string, payload?: unknown) =>
    app.inject({ method, url: `/v1/namespaces/${NS}${path}`, headers: auth, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('ensures the namespace', async () => {
    const res = await app.inject({ method: 'POST', url: `/v1/namespaces/${NS}/ensure`, headers: auth });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), { namespace: NS });
    assert.ok(platform.namespaces.has(NS));
  });

  it('creates, lists, gets, replaces and deletes a function in snake_case', async () => {
    const created = await call('POST', '/functions', {
      name: 'hello',
      runtime: 'python3.12',
      memory_mb: 256,
      timeout_sec: 10,
      env_vars: { GREETING: 'hi' },
    });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.json(), {
      name: 'hello',
      namespace: NS,
      runtime: 'python3.12',
      entrypoint: 'handler.handle',
      memory_mb: 256,
      timeout_sec: 10,
      env_vars: { GREETING: 'hi' },
      env_from_secrets: [],
      http_enabled: true,
      scale: { min: 1, max: 10, concurrency: 10, idle: '5m' },
      phase: 'Pending',
      managed_by: 'api',
      pinned: null,
    });
    assert.equal((await call('GET', '/functions')).json().length, 1);
    assert.equal((await call('GET', '/functions/hello')).json().memory_mb, 256);
    const replaced = await call('PUT', '/functions/hello', { runtime: 'python3.12', memory_mb: 512 });
    assert.equal(replaced.statusCode, 200);
    assert.equal(replaced.json().memory_mb, 512);
    assert.equal((await call('POST', '/functions', { name: 'hello', runtime: 'nodejs20' })).statusCode, 409);
    assert.equal((await call('DELETE', '/functions/hello')).statusCode, 204);
    const gone = await call('GET', '/functions/hello');
    assert.equal(gone.statusCode, 404);
    assert.deepEqual(gone.json(), { error: `function ${NS}/hello does not exist`, code: 'not_found' });
  });

  it('takes scale, shows it with its defaults filled in, keeps it on a PUT without it, and refuses bad values with 400', async () => {
    const created = await call('POST', '/functions', { name: 'scaled', runtime: 'nodejs20', scale: { min: 0, idle: '30s' } });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.json().scale, { min: 0, max: 10, concurrency: 50, idle: '30s' });
    const kept = await call('PUT', '/functions/scaled', { memory_mb: 256 });
    assert.deepEqual(kept.json().scale, { min: 0, max: 10, concurrency: 50, idle: '30s' });
    const replaced = await call('PUT', '/functions/scaled', { scale: { max: 3 } });
    assert.deepEqual(replaced.json().scale, { min: 1, max: 3, concurrency: 50, idle: '5m' });
    for (const [scale, pattern] of [
      [{ min: 4, max: 2 }, /scale\.min: min \(4\) is above max \(2\)/],
      [{ concurrency: 0 }, /scale\/concurrency must be >= 1|scale\.concurrency must be >= 1/],
      [{ idle: '5s' }, /scale\.idle: 5s is below the floor of 10s/],
      [{ max: 500 }, /scale\.max: 500 is over this namespace's cap of 20/],
      [{ idle: 'soon' }, /scale\.idle must match pattern/],
      [{ minimum: 1 }, /unknown field "minimum"/],
    ] as const) {
      const res = await call('PUT', '/functions/scaled', { scale });
      assert.equal(res.statusCode, 400, JSON.stringify(scale));
      assert.match(res.json().error, pattern);
    }
    assert.equal((await call('DELETE', '/functions/scaled')).statusCode, 204);
  });

  it('refuses bad bodies with 4xx and an error that names the problem', async () => {
    // The old routes ignore unknown fields (http-old-clients.test.ts); the new ones refuse them.
    const unknown = await call('POST', '/repositories', { name: 'x', url: 'https://git.example/x.git', brnach: 'dev' });
    assert.equal(unknown.statusCode, 400);
    assert.deepEqual(unknown.json(), { error: 'invalid request: unknown field "brnach" in body', code: 'bad_request' });
    const wrongType = await call('POST', '/functions', { name: 'x', runtime: 'nodejs20', memory_mb: '128' });
    assert.equal(wrongType.statusCode, 400);
    assert.match(wrongType.json().error, /body\.memory_mb must be integer/);
    const range = await call('POST', '/functions', { name: 'x', runtime: 'nodejs20', timeout_sec: 901 });
    assert.match(range.json().error, /timeout_sec must be <= 900/);
    const missing = await call('POST', '/functions', { name: 'x' });
    assert.match(missing.json().error, /missing field "runtime"/);
    const badName = await call('POST', '/functions', { name: 'Not_A_Label', runtime: 'nodejs20' });
    assert.equal(badName.statusCode, 400);
    const badJson = await app.inject({
      method: 'POST',
      url: `/v1/namespaces/${NS}/functions`,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"name": "x",',
    });
    assert.equal(badJson.statusCode, 400);
    assert.equal(badJson.json().code, 'invalid_json');
    const huge = await app.inject({
      method: 'POST',
      url: `/v1/namespaces/${NS}/functions`,
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x', runtime: 'nodejs20', env_vars: { BIG: 'x'.repeat(2 * 1024 * 1024) } }),
    });
    assert.equal(huge.statusCode, 413);
    assert.equal(huge.json().code, 'payload_too_large');
    const renamed = await call('POST', '/functions', { name: 'keep', runtime: 'nodejs20' });
    assert.equal(renamed.statusCode, 201);
    const rename = await call('PUT', '/functions/keep', { name: 'other', runtime: 'nodejs20' });
    assert.equal(rename.statusCode, 400);
    assert.match(rename.json().error, /renaming is not supported/);
  });

  it('answers 409 naming the repository for functions git manages', async () => {
    await call('POST', '/functions', { name: 'from-git', runtime: 'nodejs20' });
    platform.manageByGit(NS, 'from-git', 'shop-functions');
    for (const [method, path, payload] of [
      ['PUT', '/functions/from-git', { runtime: 'nodejs20' }],
      ['DELETE', '/functions/from-git', undefined],
    ] as const) {
      const res = await call(method, path, payload);
      assert.equal(res.statusCode, 409, `${method} ${path}`);
      assert.equal(res.json().code, 'managed_by_git');
      assert.match(res.json().error, /managed by git repository shop-functions; change it there instead/);
    }
    assert.equal((await call('GET', '/functions/from-git')).json().managed_by, 'git:shop-functions');
  });

  it('lists invocations and builds of a function, newest first, with a limit', async () => {
    await call('POST', '/functions', { name: 'logged', runtime: 'nodejs20' });
    for (let i = 0; i < 3; i++) {
      deps.invocationLog.record({
        namespace: NS,
        function: 'logged',
        method: 'GET',
        path: `/${i}`,
        status: 200,
        durationMs: 1.5,
        requestBytes: 0,
        responseBytes: 2,
        startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      });
    }
    deps.buildLog.record({ namespace: NS, function: 'logged', codeHash: `sha256:${'a'.repeat(64)}`, outcome: 'succeeded', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 4000 });
    const inv = await call('GET', '/functions/logged/invocations?limit=2');
    assert.equal(inv.statusCode, 200);
    assert.deepEqual(
      inv.json().map((i: { path: string }) => i.path),
      ['/2', '/1'],
    );
    assert.deepEqual(Object.keys(inv.json()[0]).sort(), ['duration_ms', 'method', 'path', 'request_bytes', 'response_bytes', 'started_at', 'status']);
    assert.equal((await call('GET', '/functions/logged/invocations?limit=0')).statusCode, 400);
    assert.equal((await call('GET', '/functions/logged/invocations?limit=abc')).statusCode, 400);
    assert.equal((await call('GET', '/functions/nope/invocations')).statusCode, 404);
    const builds = await call('GET', '/functions/logged/builds');
    assert.deepEqual(builds.json(), [{ code_hash: `sha256:${'a'.repeat(64)}`, outcome: 'succeeded', started_at: '2026-01-01T00:00:00.000Z', duration_ms: 4000 }]);
  });

  it('creates, lists, gets, toggles and deletes triggers', async () => {
    await call('POST', '/functions', { name: 'cron-fn', runtime: 'nodejs20' });
    const created = await call('POST', '/triggers', { name: 'nightly', type: 'cron', function_ref: 'cron-fn', schedule: '0 3 * * *', timezone: 'Europe/Moscow', event_json: '{"kind":"nightly"}' });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.json(), {
      name: 'nightly',
      type: 'cron',
      function_ref: 'cron-fn',
      schedule: '0 3 * * *',
      timezone: 'Europe/Moscow',
      event_json: '{"kind":"nightly"}',
      enabled: true,
      active: true,
      managed_by: 'api',
    });
    assert.equal((await call('GET', '/triggers')).json().length, 1);
    const off = await call('PATCH', '/triggers/nightly', { enabled: false });
    assert.equal(off.json().enabled, false);
    const extra = await call('PATCH', '/triggers/nightly', { enabled: false, schedule: 'x' });
    assert.equal(extra.statusCode, 200, 'a PATCH changes only enabled; other fields are ignored');
    assert.equal(extra.headers.warning, '299 sless "unknown fields ignored: schedule"');
    assert.equal((await call('GET', '/triggers/nightly')).json().schedule, '0 3 * * *');
    assert.equal((await call('PATCH', '/triggers/nightly', {})).statusCode, 400, 'enabled is required');
    assert.equal((await call('GET', '/triggers/nightly')).json().enabled, false);
    assert.equal((await call('DELETE', '/triggers/nightly')).statusCode, 204);
    assert.equal((await call('GET', '/triggers/nightly')).statusCode, 404);
  });

  it('creates, lists, gets and deletes jobs (event as JSON text or as a JSON value)', async () => {
    await call('POST', '/functions', { name: 'job-fn', runtime: 'nodejs20' });
    const created = await call('POST', '/jobs', { name: 'seed', function_ref: 'job-fn', event_json: { input: [1, 2] }, run_id: 3 });
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.json(), { name: 'seed', function_ref: 'job-fn', event_json: '{"input":[1,2]}', run_id: 3, phase: 'Pending', managed_by: 'api' });
    assert.equal((await call('GET', '/jobs/seed')).json().run_id, 3);
    await call('POST', '/jobs', { name: 'other', function_ref: 'job-fn' });
    const listed = await call('GET', '/jobs');
    assert.equal(listed.statusCode, 200, listed.body);
    const byName = new Map((listed.json() as { name: string }[]).map((j) => [j.name, j]));
    assert.deepEqual(byName.get('seed'), created.json(), 'a listed job has the same fields as a job on its own');
    assert.deepEqual([...byName.keys()].sort(), ['other', 'seed']);
    assert.equal((await call('DELETE', '/jobs/seed')).statusCode, 204);
    assert.deepEqual((await call('GET', '/jobs')).json().map((j: { name: string }) => j.name), ['other']);
    assert.equal((await call('DELETE', '/jobs/other')).statusCode, 204);
    assert.equal((await call('POST', '/jobs', { name: 'x', function_ref: 'missing-fn' })).json().code, 'invalid');
  });

  it('keeps repository credentials and webhook secrets in, never out', async () => {
    const created = await call('POST', '/repositories', {
      name: 'shop',
      url: 'https://git.example/shop.git',
      credentials: { username: 'bot', password: 'hunter2' },
      webhook_secret: 'whsec',
    });
    assert.equal(created.statusCode, 201);
    const body = created.body;
    assert.ok(!body.includes('hunter2') && !body.includes('whsec') && !body.includes('"credentials"'), body);
    assert.equal(created.json().webhook_path, `/hooks/${NS}/shop`);
    assert.equal(created.json().branch, 'main');
    assert.equal(platform.secrets.get(`${NS}/shop`)?.password, 'hunter2');
    for (const res of [await call('GET', '/repositories'), await call('GET', '/repositories/shop')]) {
      assert.equal(res.statusCode, 200);
      assert.ok(!res.body.includes('hunter2') && !res.body.includes('whsec'), res.body);
    }
    assert.equal((await call('POST', '/repositories', { name: 'bad', url: 'x', credentials: { ssh_key: 'k' } })).statusCode, 400);
    assert.equal((await call('POST', '/repositories', { name: 'bad', url: 'x', interval: 'soon' })).statusCode, 400);
    const sync = await call('POST', '/repositories/shop/sync');
    assert.equal(sync.statusCode, 202);
    assert.deepEqual(platform.syncRequests.at(-1), { namespace: NS, name: 'shop', reason: 'api' });
    assert.equal((await call('POST', '/repositories/nope/sync')).statusCode, 404);
    assert.equal((await call('DELETE', '/repositories/shop')).statusCode, 204);
    assert.equal((await call('GET', '/repositories/shop')).statusCode, 404);
  });

  it('serves its OpenAPI document with every contract route', async () => {
    const doc = (await app.inject({ url: '/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith('/v1/'))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));
    const p = '/v1/namespaces/{ns}';
    for (const expected of [
      `POST ${p}/ensure`,
      `GET ${p}/functions`,
      `POST ${p}/functions`,
      `GET ${p}/functions/{name}`,
      `PUT ${p}/functions/{name}`,
      `DELETE ${p}/functions/{name}`,
      `POST ${p}/functions/{name}/upload`,
      `GET ${p}/functions/{name}/source`,
      `GET ${p}/functions/{name}/invocations`,
      `GET ${p}/functions/{name}/builds`,
      `GET ${p}/functions/{name}/logs`,
      `GET ${p}/triggers`,
      `POST ${p}/triggers`,
      `GET ${p}/triggers/{name}`,
      `PATCH ${p}/triggers/{name}`,
      `DELETE ${p}/triggers/{name}`,
      `GET ${p}/jobs`,
      `POST ${p}/jobs`,
      `GET ${p}/jobs/{name}`,
      `DELETE ${p}/jobs/{name}`,
      `GET ${p}/repositories`,
      `POST ${p}/repositories`,
      `GET ${p}/repositories/{name}`,
      `DELETE ${p}/repositories/{name}`,
      `POST ${p}/repositories/{name}/sync`,
      `GET ${p}/functions/{name}/revisions`,
      `POST ${p}/functions/{name}/rollback`,
      `DELETE ${p}/functions/{name}/rollback`,
      `GET ${p}/previews`,
    ]) {
      assert.ok(routes.includes(expected), `missing ${expected}`);
    }
    assert.equal(routes.length, 29);
  });

  it('lists revisions, rolls back (pinned), refuses a revision that is not kept with 400, and undoes', async () => {
    assert.equal((await call('POST', '/functions', { name: 'rb', runtime: 'nodejs20' })).statusCode, 201);
    const hash = (c: string) => `sha256:${c.repeat(64)}`;
    platform.revisions.set(`${NS}/rb`, [
      { revision: 1, codeHash: hash('a'), image: 'img@1', commit: 'c1', liveFrom: '2026-12-06T10:00:00.000Z', liveUntil: '2026-12-06T11:00:00.000Z' },
      { revision: 2, codeHash: hash('b'), image: 'img@2', liveFrom: '2026-12-06T11:00:00.000Z' },
    ]);
    const revs = await call('GET', '/functions/rb/revisions');
    assert.equal(revs.statusCode, 200);
    assert.deepEqual(revs.json(), [
      { revision: 1, code_hash: hash('a'), image: 'img@1', commit: 'c1', live_from: '2026-12-06T10:00:00.000Z', live_until: '2026-12-06T11:00:00.000Z' },
      { revision: 2, code_hash: hash('b'), image: 'img@2', live_from: '2026-12-06T11:00:00.000Z', live_until: null },
    ]);
    const rolled = await call('POST', '/functions/rb/rollback', {});
    assert.equal(rolled.statusCode, 200);
    assert.equal(rolled.json().pinned.revision, 1);
    assert.equal((await call('GET', '/functions/rb')).json().pinned.revision, 1);
    const missing = await call('POST', '/functions/rb/rollback', { revision: 7 });
    assert.deepEqual([missing.statusCode, missing.json()], [400, { error: 'function rb has no revision 7; its kept revisions are 1, 2', code: 'invalid' }]);
    assert.equal((await call('POST', '/functions/rb/rollback', { revision: 0 })).statusCode, 400);
    assert.equal((await call('POST', '/functions/rb/rollback', { revision: 1, extra: true })).statusCode, 400);
    assert.equal((await call('POST', '/functions/nope/rollback', {})).statusCode, 404);
    const undone = await call('DELETE', '/functions/rb/rollback');
    assert.equal(undone.statusCode, 200);
    assert.equal(undone.json().pinned, null);
  });

  it('answers unknown routes with the error body, and hands back the request id', async () => {
    const res = await app.inject({ url: '/nowhere', headers: { 'x-request-id': 'req-42' } });
    assert.equal(res.headers['x-request-id'], 'req-42');
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), { error: 'no route GET /nowhere', code: 'route_not_found' });
  });
});

describe('health', async () => {
  let database: { ok: boolean; detail?: string } | 'hangs' | undefined = { ok: true };
  const { app, platform } = await testApp({
    storeHealth: { check: () => (database === 'hangs' ? new Promise<never>(() => undefined) : Promise.resolve(database)) },
  });
  after(() => app.close());
  it('/healthz answers while the process lives, with the database as a detail; /readyz follows the platform only', async () => {
    assert.deepEqual((await app.inject({ url: '/healthz' })).json(), { status: 'ok', database: { ok: true } });
    assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);

    // The database is optional: its outage is reported, and the replica stays in the Service.
    database = { ok: false, detail: 'database unreachable: connect ECONNREFUSED' };
    const health = await app.inject({ url: '/healthz' });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json(), { status: 'ok', database });
    assert.equal((await app.inject({ url: '/readyz' })).statusCode, 200);

    // A hung database answers /healthz within a second, well inside the liveness probe's 3 s.
    database = 'hangs';
    const t0 = performance.now();
    const hung = await app.inject({ url: '/healthz' });
    assert.ok(performance.now() - t0 < 2_000);
    assert.deepEqual(hung.json(), { status: 'ok', database: { ok: false, detail: 'database check did not answer within 1000 ms' } });

    database = undefined;
    assert.deepEqual((await app.inject({ url: '/healthz' })).json(), { status: 'ok' }, 'no database configured: no detail');

    platform.readiness = { ok: false, detail: 'informers not synced' };
    const res = await app.inject({ url: '/readyz' });
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json().checks.platform, { ok: false, detail: 'informers not synced' });
  });
  it('/metrics serves the Prometheus text format', async () => {
    const res = await app.inject({ url: '/metrics' });
    assert.match(String(res.headers['content-type']), /text\/plain/);
    assert.match(res.body, /# TYPE sless_invocations_total counter/);
    assert.match(res.body, /# TYPE sless_build_duration_seconds histogram/);
  });
});
