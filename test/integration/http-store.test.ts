// The Postgres store against a real PostgreSQL: migrations under concurrency, invocations recorded
// through /fn and read through /v1, retention, and a database outage that calls never notice.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { Registry } from 'prom-client';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { migrate } from '../../src/store/migrate.ts';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import { openPgStore, type PgStore } from '../../src/store/pg-store.ts';
import { hs256Token, listen, NS, testApp, upstream } from '../helpers/http-test-kit.ts';
import { freshDatabase, startPostgres } from '../services/postgres.ts';

const serverUrl = process.env.SLESS_TEST_DATABASE_URL;
if (!serverUrl) {
  throw new Error('SLESS_TEST_DATABASE_URL is not set: run through `npm test` (it starts test/services/postgres.ts) or set it to a PostgreSQL server URL');
}

async function eventually(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await sleep(50);
  }
  assert.fail(`not within ${timeoutMs} ms: ${what}`);
}

describe('Postgres migrations', () => {
  it('run once even when two replicas start at the same time, and again are a no-op', async () => {
    const url = await freshDatabase(serverUrl);
    const metrics = createMetrics(new Registry());
    const [a, b] = await Promise.all([openPgStore({ connectionString: url, metrics }), openPgStore({ connectionString: url, metrics })]);
    const pool = new pg.Pool({ connectionString: url });
    try {
      const { rows } = await pool.query<{ version: number }>('SELECT version FROM sless_schema_migrations');
      assert.deepEqual(
        rows.map((r) => r.version),
        MIGRATIONS.map((m) => m.version),
      );
      assert.deepEqual(await migrate(pool), []);
    } finally {
      await Promise.all([a.close(), b.close(), pool.end()]);
    }
  });
});

describe('the invocation and build logs in Postgres', async () => {
  const url = await freshDatabase(serverUrl);
  const registry = new Registry();
  const store = await openPgStore({ connectionString: url, metrics: createMetrics(registry), flushIntervalMs: 20 });
  const { app, platform } = await testApp({ registry, invocationLog: store.invocationLog, buildLog: store.buildLog, storeHealth: store.health });
  const fn = await upstream((_req, res) => res.end('ok'));
  await platform.createFunction(NS, { name: 'hello', runtime: 'nodejs20' });
  platform.serve(NS, 'hello', fn.url);
  const base = await listen(app);
  let auth: Record<string, string> = {};
  before(async () => {
    auth = { authorization: `Bearer ${await hs256Token()}` };
  });
  after(async () => {
    await app.close();
    await store.close();
    await fn.close();
  });

  it('records /fn calls and lists them through /v1, newest first', async () => {
    for (const p of ['/a', '/b', '/c']) assert.equal((await fetch(`${base}/fn/${NS}/hello${p}?x=1`)).status, 200);
    await store.flush();
    const res = await app.inject({ url: `/v1/namespaces/${NS}/functions/hello/invocations?limit=2`, headers: auth });
    assert.equal(res.statusCode, 200);
    const rows = res.json() as Array<{ path: string; status: number; response_bytes: number }>;
    assert.deepEqual(
      rows.map((r) => [r.path, r.status, r.response_bytes]),
      [
        ['/c', 200, 2],
        ['/b', 200, 2],
      ],
    );
  });

  it('keeps the cold start of a call that waited for one, and none for the others', async () => {
    const at = new Date().toISOString();
    const call = { namespace: NS, function: 'cold', method: 'GET', path: '/', status: 200, durationMs: 420, requestBytes: 0, responseBytes: 2 };
    store.invocationLog.record({ ...call, startedAt: at });
    store.invocationLog.record({ ...call, startedAt: new Date(Date.parse(at) + 1000).toISOString(), coldStartMs: 381.5 });
    await store.flush();
    const rows = await store.invocationLog.list(NS, 'cold', 10);
    assert.deepEqual(
      rows.map((r) => r.coldStartMs),
      [381.5, undefined],
    );
  });

  it('records builds and lists them', async () => {
    store.buildLog.record({ namespace: NS, function: 'hello', codeHash: `sha256:${'b'.repeat(64)}`, outcome: 'failed', message: 'npm install failed', startedAt: new Date().toISOString() });
    await store.flush();
    const res = await app.inject({ url: `/v1/namespaces/${NS}/functions/hello/builds`, headers: auth });
    assert.equal(res.json()[0].message, 'npm install failed');
    assert.equal(res.json()[0].outcome, 'failed');
  });

  it('deletes records older than the retention period', async () => {
    const pool = new pg.Pool({ connectionString: url });
    try {
      await pool.query(
        `INSERT INTO sless_invocations (namespace, function, method, path, status, duration_ms, request_bytes, response_bytes, started_at)
         VALUES ($1, 'hello', 'GET', '/old', 200, 1, 0, 0, now() - interval '30 days')`,
        [NS],
      );
      assert.ok((await store.applyRetention()) >= 1);
      const { rows } = await pool.query("SELECT path FROM sless_invocations WHERE path = '/old'");
      assert.equal(rows.length, 0);
      const kept = await pool.query("SELECT count(*)::int AS n FROM sless_invocations WHERE path IN ('/a', '/b', '/c')");
      assert.equal(kept.rows[0].n, 3);
    } finally {
      await pool.end();
    }
  });

  it('reports the database in /healthz and sless_database_up, not in readiness', async () => {
    const health = await app.inject({ url: '/healthz' });
    assert.equal(health.statusCode, 200);
    assert.deepEqual(health.json().database, { ok: true });
    const ready = await app.inject({ url: '/readyz' });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(Object.keys(ready.json().checks), ['platform']);
    assert.match(await registry.metrics(), /^sless_database_up\{store="postgres"\} 1$/m);
  });
});

describe('a database outage', async () => {
  // A server of its own, so stopping it disturbs no other test file.
  const server = await startPostgres();
  const registry = new Registry();
  let store: PgStore | undefined;
  const fn = await upstream((_req, res) => res.end('ok'));
  after(async () => {
    await store?.close().catch(() => undefined);
    await fn.close();
    await server.destroy();
  });

  it('never fails or slows a call; drops are counted; logging resumes after the restart', async () => {
    store = await openPgStore({ connectionString: server.url, metrics: createMetrics(registry), flushIntervalMs: 20 });
    const { app, platform } = await testApp({ registry, invocationLog: store.invocationLog, buildLog: store.buildLog, storeHealth: store.health });
    platform.serve('dev', 'fn', fn.url);
    const base = await listen(app);
    const call = async (path: string) => {
      const t0 = performance.now();
      const res = await fetch(`${base}/fn/dev/fn${path}`);
      await res.text();
      return { status: res.status, ms: performance.now() - t0 };
    };
    const logged = async () => (await store!.invocationLog.list('dev', 'fn', 100)).map((r) => r.path);
    const dropped = async () => {
      const metric = await registry.getSingleMetric('sless_invocation_log_dropped_total')?.get();
      return (metric?.values ?? []).reduce((n, v) => n + v.value, 0);
    };
    try {
      assert.equal((await call('/before')).status, 200);
      await eventually(async () => (await logged()).includes('/before'), 'the first call is stored');

      await server.stop();
      for (let i = 0; i < 20; i++) {
        const { status, ms } = await call(`/during-${i}`);
        assert.equal(status, 200);
        // Well under the pool's 3 s connect timeout: the call never waits on the database.
        assert.ok(ms < 2000, `a call took ${ms.toFixed(0)} ms while the database was down`);
      }
      await eventually(async () => (await dropped()) >= 20, 'the 20 records written during the outage are counted as dropped');
      // Readiness does not depend on the optional store: a 503 would take every replica out of the
      // Service and stop /fn, which never needed the database. The outage shows in /healthz and metrics.
      const ready = await app.inject({ url: '/readyz' });
      assert.equal(ready.statusCode, 200, ready.body);
      const health = await app.inject({ url: '/healthz' });
      assert.equal(health.statusCode, 200);
      assert.equal(health.json().database.ok, false);
      assert.match(health.json().database.detail, /database unreachable/);
      assert.match(await registry.metrics(), /^sless_database_up\{store="postgres"\} 0$/m);

      await server.start();
      await eventually(async () => {
        await call('/after');
        return (await logged().catch((): string[] => [])).includes('/after');
      }, 'logging resumes after the database is back');
      assert.ok(!(await logged()).some((p) => p.startsWith('/during-')), 'records of the outage are dropped, not replayed');
      assert.deepEqual((await app.inject({ url: '/healthz' })).json().database, { ok: true });
      assert.match(await registry.metrics(), /^sless_database_up\{store="postgres"\} 1$/m);
    } finally {
      await app.close();
    }
  });
});
