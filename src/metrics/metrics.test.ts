import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Histogram, Registry } from 'prom-client';
import { createMetrics, dropFunctionSeries } from './metrics.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const heapUsed = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

describe('per-function build durations (sless_build_duration_seconds)', () => {
  it("keep 1,000 functions' series in under 3 MB (prom-client's Histogram took ~15 KB a series: integer bounds up to 1200 made V8 back each with a 1,201-slot array)", () => {
    const registry = new Registry();
    const metrics = createMetrics(registry);
    const before = heapUsed();
    for (let i = 0; i < 1000; i++) metrics.buildDuration.observe({ namespace: 'ns', function: `fn-${String(i).padStart(4, '0')}`, outcome: 'succeeded' }, 7);
    const grown = heapUsed() - before;
    assert.ok(grown < 3e6, `${(grown / 1e6).toFixed(1)} MB for 1,000 series`);
  });

  it('print as prom-client prints a histogram of the same name, labels and buckets', async () => {
    const ours = new Registry();
    const metrics = createMetrics(ours);
    const theirs = new Registry();
    const reference = new Histogram({
      name: 'sless_build_duration_seconds',
      help: 'Duration of one function image build',
      labelNames: ['namespace', 'function', 'outcome'],
      buckets: [1, 5, 10, 30, 60, 120, 300, 600, 1200],
      registers: [theirs],
    });
    const observations: Array<[Record<'namespace' | 'function' | 'outcome', string>, number]> = [
      [{ namespace: 'a', function: 'f', outcome: 'succeeded' }, 3.5],
      [{ namespace: 'a', function: 'f', outcome: 'succeeded' }, 700],
      [{ namespace: 'a', function: 'g"x', outcome: 'failed' }, 5000],
      [{ namespace: 'b', function: 'f', outcome: 'succeeded' }, 1],
    ];
    for (const [labels, v] of observations) {
      metrics.buildDuration.observe(labels, v);
      reference.observe(labels, v);
    }
    const text = async (r: Registry) => (await r.getSingleMetricAsString('sless_build_duration_seconds'));
    assert.equal(await text(ours), await text(theirs));
    dropFunctionSeries(metrics, 'a', 'f');
    reference.remove({ namespace: 'a', function: 'f', outcome: 'succeeded' });
    assert.equal(await text(ours), await text(theirs));
    assert.doesNotMatch(await text(ours), /function="f",namespace="a"/);
  });
});
