import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import { Counter, Histogram, Registry } from 'prom-client';
import { createMetrics, dropFunctionSeries, invocationSeries } from './metrics.ts';

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

describe('the /fn series (sless_invocations_total, sless_invocation_duration_seconds)', () => {
  it('print as prom-client prints a counter and a histogram of the same names, labels and buckets, through the held series and after a drop', async () => {
    const ours = new Registry();
    const metrics = createMetrics(ours);
    const theirs = new Registry();
    const labelNames = ['namespace', 'function', 'status_class'] as const;
    const count = new Counter({ name: 'sless_invocations_total', help: 'Calls through /fn, by function and status class', labelNames, registers: [theirs] });
    const duration = new Histogram({
      name: 'sless_invocation_duration_seconds',
      help: 'Time from request to the end of the response through /fn',
      labelNames,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [theirs],
    });
    const calls: Array<[string, string, string, number]> = [
      ['a', 'f', '2xx', 0.0004],
      ['a', 'f', '2xx', 0.003],
      ['a', 'f', '5xx', 61],
      ['a', 'g', '2xx', 0.001],
      ['', '', '4xx', 0.0001],
      ['b', 'f', '2xx', 0.2],
    ];
    for (const [namespace, fn, status, seconds] of calls) {
      const series = invocationSeries(metrics, namespace, fn, status);
      series.count.inc();
      series.duration.observe(seconds);
      count.inc({ namespace, function: fn, status_class: status });
      duration.observe({ namespace, function: fn, status_class: status }, seconds);
    }
    const text = async (r: Registry) => `${await r.getSingleMetricAsString('sless_invocations_total')}\n${await r.getSingleMetricAsString('sless_invocation_duration_seconds')}`;
    assert.equal(await text(ours), await text(theirs));
    dropFunctionSeries(metrics, 'a', 'f');
    for (const status_class of ['2xx', '5xx']) {
      count.remove({ namespace: 'a', function: 'f', status_class });
      duration.remove({ namespace: 'a', function: 'f', status_class });
    }
    assert.equal(await text(ours), await text(theirs));
    // A call after the drop starts the series again from zero, as prom-client's would.
    invocationSeries(metrics, 'a', 'f', '2xx').count.inc();
    count.inc({ namespace: 'a', function: 'f', status_class: '2xx' });
    assert.match(await text(ours), /sless_invocations_total\{namespace="a",function="f",status_class="2xx"\} 1\n/);
    assert.throws(() => metrics.invocations.inc({ namespace: 'a', function: 'f', status_class: '2xx' }, -1), /only grows/);
  });
});
