import { Registry } from 'prom-client';
import { createMetrics, invocationSeries, statusClass } from '../src/metrics/metrics.ts';
import { createMemoryInvocationLog } from '../src/store/memory-log.ts';
const m = createMetrics(new Registry());
const log = createMemoryInvocationLog();
function bench(name: string, f: () => void) {
  for (let i = 0; i < 200_000; i++) f();
  const t = performance.now(); const N = 1_000_000;
  for (let i = 0; i < N; i++) f();
  console.log(name, ((performance.now() - t) * 1000 / N).toFixed(3), 'us');
}
bench('series', () => { invocationSeries(m, 'dev', 'fn', statusClass(200)); });
const s = invocationSeries(m, 'dev', 'fn', '2xx');
bench('inc', () => s.count.inc());
bench('observe', () => s.duration.observe(0.0012));
bench('iso', () => { new Date(Date.now() - 0.001 * 1000).toISOString(); });
bench('record', () => log.record({ namespace: 'dev', function: 'fn', method: 'GET', path: '/hello', status: 200, durationMs: 1.2, requestBytes: 0, responseBytes: 40, startedAt: '2026-12-06T14:00:00.000Z' }));
bench('perfnow', () => { performance.now(); });
