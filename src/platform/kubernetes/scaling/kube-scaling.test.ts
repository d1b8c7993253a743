// Waking on one replica, with fakes for the watches and the scale subresource: one write per zero seen,
// concurrent wakes shared, clear reasons when it cannot.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Endpoint } from '../../types.ts';
import { KubeScaling, type ScaleView } from './kube-scaling.ts';
import { ReplicaCounts } from './replica-counts.ts';
import type { ScaleSubresource } from './scale-subresource.ts';

type WhenServing = (namespace: string, name: string, signal: AbortSignal) => Promise<void>;

function setup(start: { view: ScaleView | undefined; endpoint: Endpoint }, timeoutMs = 2_000, more: { pollMs?: number; whenServing?: WhenServing } = {}) {
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
  let resolves = 0;
  const scaling = new KubeScaling({
    counts: new ReplicaCounts(),
    scale,
    deployment: () => w.view,
    resolveEndpoint: () => {
      resolves++;
      return Promise.resolve(w.endpoint);
    },
    timeoutMs,
    pollMs: more.pollMs ?? 5,
    ...(more.whenServing ? { whenServing: more.whenServing } : {}),
  });
  return { w, scaling, resolves: () => resolves };
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

  it('with pod routing, forwards the held calls the moment a pod enters rotation, not at the next poll', async () => {
    let enterRotation = (): void => undefined;
    const whenServing: WhenServing = (_ns, _name, signal) =>
      new Promise((resolve) => {
        enterRotation = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
    const { w, scaling } = setup({ view: { replicas: 0, resourceVersion: '3' }, endpoint: { kind: 'idle', timeoutSec: 30 } }, 60_000, { pollMs: 10_000, whenServing });
    const wake = scaling.wake('ns', 'f');
    await new Promise((r) => setTimeout(r, 20));
    const started = performance.now();
    w.endpoint = { kind: 'ready', baseUrl: 'http://f', timeoutSec: 30 };
    enterRotation();
    await wake;
    assert.ok(performance.now() - started < 1_000, `woke ${Math.round(performance.now() - started)} ms after the pod entered rotation (the poll is 10 s)`);
    assert.deepEqual(w.writes, [[1, '3']]);
  });

  it('does not spin when a pod serves but the function is not resolved yet: back to the poll', async () => {
    const whenServing: WhenServing = () => Promise.resolve();
    const { w, scaling, resolves } = setup({ view: { replicas: 0, resourceVersion: '3' }, endpoint: { kind: 'idle', timeoutSec: 30 } }, 60_000, { pollMs: 50, whenServing });
    const wake = scaling.wake('ns', 'f');
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(resolves() <= 7, `${resolves()} looks in 200 ms with a 50 ms poll`);
    w.endpoint = { kind: 'ready', baseUrl: 'http://f', timeoutSec: 30 };
    await wake;
  });
});
