// Waking on one replica, with fakes for the watches and the scale subresource: one write per zero seen,
// concurrent wakes shared, clear reasons when it cannot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint } from '../../types.ts';
import { KubeScaling, type ScaleView } from './kube-scaling.ts';
import { ReplicaCounts } from './replica-counts.ts';
import type { ScaleSubresource } from './scale-subresource.ts';

function setup(start: { view: ScaleView | undefined; endpoint: Endpoint }, timeoutMs = 2_000) {
  const w = { ...start, writes: [] as Array<[number, string | undefined]> };
  const scale = {
    writes: 0,
    set: (_ns: string, _name: string, replicas: number, rv: string | undefined) => {
      w.writes.push([replicas, rv]);
      w.view = { replicas, resourceVersion: `${Number(rv ?? 0) + 1}` };
      return Promise.resolve('written' as const);
    },
    read: () => Promise.resolve(w.view),
  } as unknown as ScaleSubresource;
  const scaling = new KubeScaling({
    counts: new ReplicaCounts(),
    scale,
    deployment: () => w.view,
    resolveEndpoint: () => Promise.resolve(w.endpoint),
    timeoutMs,
    pollMs: 5,
  });
  return { w, scaling };
}

describe('KubeScaling.wake', () => {
  it('writes 1 once against the version it saw at 0, and resolves when a replica serves; concurrent wakes share it', async () => {
    const { w, scaling } = setup({ view: { replicas: 0, resourceVersion: '7' }, endpoint: { kind: 'idle', timeoutSec: 30 } });
    const wakes = [scaling.wake('ns', 'f'), scaling.wake('ns', 'f'), scaling.wake('ns', 'f')];
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(w.writes, [[1, '7']]);
    w.endpoint = { kind: 'ready', baseUrl: 'http://f', timeoutSec: 30 };
    await Promise.all(wakes);
    assert.deepEqual(w.writes, [[1, '7']]);
  });

  it('writes nothing while a replica is already asked for (another replica woke it)', async () => {
    const { w, scaling } = setup({ view: { replicas: 1, resourceVersion: '8' }, endpoint: { kind: 'idle', timeoutSec: 30 } });
    const wake = scaling.wake('ns', 'f');
    await new Promise((r) => setTimeout(r, 30));
    w.endpoint = { kind: 'ready', baseUrl: 'http://f', timeoutSec: 30 };
    await wake;
    assert.deepEqual(w.writes, []);
  });

  it('fails with the reason: disabled, removed, or no replica in time', async () => {
    await assert.rejects(setup({ view: { replicas: 0, resourceVersion: '1' }, endpoint: { kind: 'disabled' } }).scaling.wake('ns', 'f'), /disabled/);
    await assert.rejects(setup({ view: undefined, endpoint: { kind: 'not-found' } }).scaling.wake('ns', 'f'), /removed/);
    await assert.rejects(setup({ view: { replicas: 0, resourceVersion: '1' }, endpoint: { kind: 'idle', timeoutSec: 30 } }, 100).scaling.wake('ns', 'f'), /no replica became ready within 0.1 s/);
  });
});
