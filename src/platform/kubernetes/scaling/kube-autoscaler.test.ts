// The leader's autoscaler loop against in-memory caches, a fake clock and fake counts: when it writes the
// scale subresource, and when it must not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import type { FunctionResource } from '../objects/resources.ts';
import type { GatheredCount } from './counts-gatherer.ts';
import { KubeAutoscaler } from './kube-autoscaler.ts';
import { DISABLED_ANNOTATION } from './workload-replicas.ts';

interface World {
  now: number;
  replicas: number;
  ready: number;
  disabled: boolean;
  counts: GatheredCount | undefined;
  writes: number[];
  rv: number;
  /** The resourceVersion the leader's cache shows (lags behind rv when set). */
  cacheRv?: number;
}

function setup(scale: Record<string, unknown>, start: Partial<World> = {}) {
  const w: World = { now: 1_000_000, replicas: 1, ready: 1, disabled: false, counts: undefined, writes: [], rv: 1, ...start };
  const fn: FunctionResource = { metadata: { name: 'f', namespace: 'ns' }, spec: { runtime: 'nodejs20', scale } } as FunctionResource;
  const deployment = (): V1Deployment => ({
    metadata: { name: 'f', namespace: 'ns', resourceVersion: String(w.cacheRv ?? w.rv), ...(w.disabled ? { annotations: { [DISABLED_ANNOTATION]: 'true' } } : {}) },
    spec: { replicas: w.replicas, selector: {}, template: {} },
    status: { availableReplicas: w.ready },
  });
  const logs: string[] = [];
  const a = new KubeAutoscaler({
    caches: { functions: { list: () => [fn] }, deployments: { get: () => deployment() } },
    gather: () => Promise.resolve(new Map(w.counts ? [['ns/f', w.counts]] : [])),
    write: (_ns, _name, replicas, rv) => {
      if (rv !== String(w.rv)) return Promise.resolve('conflict' as const);
      w.writes.push(replicas);
      w.replicas = replicas;
      w.ready = Math.min(w.ready, replicas);
      w.rv++;
      return Promise.resolve('written' as const);
    },
    maxReplicas: 20,
    logger: { info: (m) => logs.push(m), warn: (m) => logs.push(m) },
    now: () => w.now,
  });
  /** Runs ticks every 2 s for `ms` (`each` before every tick). */
  const run = async (ms: number, each?: () => void) => {
    for (let t = 0; t < ms; t += 2000) {
      w.now += 2000;
      each?.();
      await a.tick();
    }
  };
  return { w, a, run, logs };
}

const busy = (inFlight: number): GatheredCount => ({ concurrency: inFlight, inFlight, lastRequestAt: Date.now() });

describe('KubeAutoscaler (the leader loop)', () => {
  it('scales out to ceil(in flight / concurrency) with one write, and writes nothing more while the load is steady', async () => {
    const { w, run } = setup({ min: 1, max: 5, concurrency: 2, idle: '30s' });
    w.counts = { ...busy(6), lastRequestAt: w.now };
    await run(2000);
    assert.deepEqual(w.writes, [3]);
    w.ready = 3;
    for (let i = 0; i < 20; i++) {
      w.counts = { ...busy(6), lastRequestAt: w.now };
      await run(2000);
    }
    assert.deepEqual(w.writes, [3], 'steady traffic: no further write');
  });

  it('goes back to min after the load stops, at most halving per decision while calls still come', async () => {
    const { w, run } = setup({ min: 1, max: 8, concurrency: 1, idle: '5m' });
    // Past the new-leader window first.
    await run(62_000);
    await run(2000, () => (w.counts = { ...busy(8), lastRequestAt: w.now }));
    assert.equal(w.replicas, 8);
    w.ready = 8;
    // A call now and then: never idle, so scaling in goes by the stable window, halving at most.
    await run(240_000, () => (w.counts = { concurrency: 0, inFlight: 0, lastRequestAt: w.now }));
    assert.equal(w.replicas, 1);
    assert.deepEqual(w.writes, [8, 4, 2, 1]);
  });

  it('with min 0, scales to zero after idle with nothing in flight, not before', async () => {
    const { w, run } = setup({ min: 0, idle: '10s' });
    await run(8000);
    assert.equal(w.replicas, 1, 'not idle for 10 s yet (the leader counts from its start)');
    await run(4000);
    assert.equal(w.replicas, 0);
    assert.deepEqual(w.writes, [0]);
  });

  it('never writes a disabled function, at 0 under calls', async () => {
    const { w, run } = setup({ min: 0, idle: '10s' }, { replicas: 0, ready: 0, disabled: true });
    w.counts = busy(5);
    await run(20_000);
    assert.deepEqual(w.writes, []);
    assert.equal(w.replicas, 0);
  });

  it('takes a wake by another replica as a call just now: it does not scale the woken function back to zero', async () => {
    const { w, run } = setup({ min: 0, idle: '10s' }, { replicas: 0, ready: 0 });
    await run(30_000);
    assert.deepEqual(w.writes, []);
    // Another replica woke it; its counts reach the leader only later.
    w.replicas = 1;
    w.rv++;
    await run(8000);
    assert.equal(w.replicas, 1, 'kept while idle has not passed since the wake');
    await run(4000);
    assert.equal(w.replicas, 0);
  });

  it('a new leader starts from the current count and does not scale in before one window of counts', async () => {
    const { w, run } = setup({ min: 1, max: 10, concurrency: 1, idle: '5m' }, { replicas: 4, ready: 4 });
    w.counts = { concurrency: 0, inFlight: 0, lastRequestAt: w.now };
    await run(58_000);
    assert.deepEqual(w.writes, [], 'no scale-in within the first 60 s window');
    await run(4000);
    assert.equal(w.writes[0], 2, 'then in, by half');
  });

  it('a write that lost to a concurrent one (409) is not taken as done: the next tick starts from what the watch shows', async () => {
    const { w, a } = setup({ min: 1, max: 5, concurrency: 1, idle: '30s' });
    w.counts = { ...busy(3), lastRequestAt: w.now };
    w.cacheRv = w.rv - 1; // the cache lags behind the API server
    w.now += 2000;
    await a.tick();
    assert.deepEqual(w.writes, [], 'conflict: nothing written');
    delete w.cacheRv;
    w.now += 2000;
    await a.tick();
    assert.deepEqual(w.writes, [3]);
  });
});
