// /metrics lives on a listener of its own (SLESS_METRICS_PORT): its labels name every tenant's
// functions, so the public port (/fn, /hooks, /v1, /funcs) does not serve it (issue 31 item 12).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { startMetricsServer, type MetricsServer } from '../../src/http/metrics-server.ts';
import { testApp } from '../helpers/http-test-kit.ts';

describe('the metrics listener', () => {
  const registry = new Registry();
  let server: MetricsServer;
  before(async () => {
    createMetrics(registry).invocations.inc({ namespace: 'team-a', function: 'secret-project', status_class: '2xx' });
    server = await startMetricsServer({ registry, host: '127.0.0.1', port: 0 });
  });
  after(() => server.close());

  it('serves the registry in the Prometheus text format at /metrics', async () => {
    const res = await fetch(`${server.url}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(await res.text(), /function="secret-project"/);
  });

  it('answers 404 for anything else, and 405 for other methods', async () => {
    assert.equal((await fetch(`${server.url}/fn/team-a/secret-project`)).status, 404);
    assert.equal((await fetch(`${server.url}/metrics`, { method: 'POST' })).status, 405);
  });

  it('is left out of the public app when the metrics have a listener of their own', async () => {
    const { app } = await testApp({ serveMetrics: false });
    try {
      const res = await app.inject({ url: '/metrics' });
      assert.equal(res.statusCode, 404);
    } finally {
      await app.close();
    }
  });
});
