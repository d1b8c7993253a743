// A sless app in its own process, for measurements that must not mix with the test's own memory
// (RSS while streaming) and for the benchmark. argv: upstream base URL, optional body limit,
// optional database URL (then invocations go to Postgres, else to the in-memory log).
// Logging is on at info level (to /dev/null), metrics are on, and every call is counted in flight for the
// autoscaler (the Kubernetes platform's ReplicaCounts), as in production.
// Prints {"port": N} once listening; answers "rss" on stdin with {"baseline","peak"} in bytes,
// and "reset" starts a new baseline. SLESS_BENCH_PICKER=1: the endpoint picks a pod per call (pod routing).
import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { Registry } from 'prom-client';
import { createMetrics } from '../../src/metrics/metrics.ts';
import { openPgStore } from '../../src/store/pg-store.ts';
import { realTimers } from '../../src/platform/kubernetes/api-client/timers.ts';
import { PodTable } from '../../src/platform/kubernetes/pod-routing/pod-table.ts';
import { ReplicaCounts } from '../../src/platform/kubernetes/scaling/replica-counts.ts';
import type { FunctionScaling } from '../../src/platform/types.ts';
import { listen, testApp } from './http-test-kit.ts';
import { MemoryPlatform } from './memory-platform.ts';

const [upstreamUrl, limit, databaseUrl] = process.argv.slice(2);
if (!upstreamUrl) throw new Error('usage: proxy-child.ts <upstream-url> [body-limit-bytes] [database-url]');
const registry = new Registry();
const store = databaseUrl ? await openPgStore({ connectionString: databaseUrl, metrics: createMetrics(registry) }) : undefined;
const counts = new ReplicaCounts();
const scaling: FunctionScaling = { requestBegan: (namespace, name) => counts.begin(namespace, name), wake: () => Promise.resolve() };
const { app, platform } = await testApp({
  platform: Object.assign(new MemoryPlatform(), { scaling }),
  registry,
  limits: { proxyBodyBytes: Number(limit || 100 * 1024 * 1024) },
  logger: { level: 'info', stream: createWriteStream('/dev/null') },
  ...(store ? { invocationLog: store.invocationLog, buildLog: store.buildLog, storeHealth: store.health } : {}),
});
platform.serve('dev', 'fn', upstreamUrl);
if (process.env.SLESS_BENCH_PICKER === '1') {
  // The Kubernetes pod-routing path (docs/pod-routing.md): the endpoint carries a replica picker over
  // one ready pod (the upstream), as KubernetesPlatform's does with SLESS_ROUTE_TO_PODS.
  const table = new PodTable({ probe: async () => true, timers: realTimers });
  const upstream = new URL(upstreamUrl);
  table.apply('add', {
    addressType: 'IPv4',
    metadata: { name: 'fn-pods', namespace: 'dev', labels: { 'kubernetes.io/service-name': 'fn' } },
    ports: [{ name: 'http', port: Number(upstream.port) }],
    endpoints: [{ addresses: [upstream.hostname], conditions: { ready: true } }],
  });
  const pods = table.pods('dev', 'fn');
  const resolve = platform.resolveEndpoint.bind(platform);
  platform.resolveEndpoint = async (namespace, name) => {
    const endpoint = await resolve(namespace, name);
    return endpoint.kind === 'ready' && pods ? { ...endpoint, replicas: pods } : endpoint;
  };
}
const base = await listen(app);
let baseline = process.memoryUsage.rss();
let peak = baseline;
setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 50).unref();
process.stdout.write(`${JSON.stringify({ port: Number(new URL(base).port) })}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'reset') {
    baseline = peak = process.memoryUsage.rss();
    process.stdout.write('{"ok":true}\n');
  } else if (line === 'rss') {
    process.stdout.write(`${JSON.stringify({ baseline, peak })}\n`);
  }
}
await app.close();
await store?.close();
