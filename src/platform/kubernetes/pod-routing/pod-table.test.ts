import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { FakeTimers } from '../api-client/fake-timers.ts';
import { PodTable } from './pod-table.ts';

type Conditions = { ready?: boolean; terminating?: boolean };

function slice(name: string, pods: Record<string, Conditions>, service = 'hello'): V1EndpointSlice {
  return {
    addressType: 'IPv4',
    metadata: { name, namespace: 'team', labels: { 'kubernetes.io/service-name': service } },
    ports: [{ name: 'http', port: 8080 }],
    endpoints: Object.entries(pods).map(([ip, conditions]) => ({ addresses: [ip], conditions })),
  };
}

const tick = () => new Promise((r) => setImmediate(r));

function harness() {
  const timers = new FakeTimers();
  const probes: string[] = [];
  const answering = new Set<string>();
  const rotation: string[] = [];
  const table = new PodTable({
    timers,
    policy: { intervalMs: 50, timeoutMs: 500, windowMs: 1_000 },
    probe: async (baseUrl) => {
      probes.push(`${timers.now()} ${baseUrl}`);
      return answering.has(baseUrl);
    },
    onRotation: (key, pod, entered) => rotation.push(`${key} ${pod} ${entered ? 'in' : 'out'}`),
  });
  /** Fires the due probe timers, then lets their answers land. */
  const step = async (ms: number) => {
    timers.advance(ms);
    await tick();
  };
  return { table, timers, probes, answering, rotation, step };
}

describe('the pod table (slices in, a picker per function out; fake clock)', () => {
  it('knows nothing of a function without slices (then /fn calls its Service)', () => {
    const { table } = harness();
    assert.equal(table.pods('team', 'hello'), undefined);
  });

  it('picks ready pods by fewest calls in flight, in turn when equal, and counts a call until it is released', () => {
    const { table } = harness();
    table.apply('add', slice('hello-a', { '10.0.0.2': { ready: true }, '10.0.0.3': { ready: true } }));
    const pods = table.pods('team', 'hello');
    assert.ok(pods?.serving);
    const a = pods.pick();
    const b = pods.pick();
    assert.deepEqual([a?.baseUrl, b?.baseUrl].sort(), ['http://10.0.0.2:8080', 'http://10.0.0.3:8080']);
    a?.release('done');
    assert.equal(pods.pick()?.baseUrl, a?.baseUrl, 'the pod with nothing in flight');
    a?.release('done');
    a?.release('done');
  });

  it('probes a new pod every interval from first sight and routes to it from its first answer, before the kubelet says ready', async () => {
    const { table, probes, answering, rotation, step } = harness();
    table.apply('add', slice('hello-a', { '10.0.0.2': { ready: true } }));
    table.apply('update', slice('hello-a', { '10.0.0.2': { ready: true }, '10.0.0.7': { ready: false } }));
    await step(0);
    await step(50);
    assert.deepEqual(probes, ['0 http://10.0.0.7:8080', '50 http://10.0.0.7:8080'], 'only the new pod is probed, every 50 ms');
    assert.deepEqual(table.pods('team', 'hello')?.rotation(), ['10.0.0.2:8080']);
    answering.add('http://10.0.0.7:8080');
    await step(50);
    assert.deepEqual(table.pods('team', 'hello')?.rotation(), ['10.0.0.2:8080', '10.0.0.7:8080']);
    assert.deepEqual(rotation, ['team/hello 10.0.0.2:8080 in', 'team/hello 10.0.0.7:8080 in']);
    await step(500);
    assert.equal(probes.length, 3, 'no probe after the answer');
  });

  it('a terminating pod leaves rotation with the event that says so; the old pod of a rollout gets no new call', async () => {
    const { table, rotation } = harness();
    table.apply('add', slice('hello-a', { '10.0.0.2': { ready: true }, '10.0.0.7': { ready: true } }));
    table.apply('update', slice('hello-a', { '10.0.0.2': { ready: false, terminating: true }, '10.0.0.7': { ready: true } }));
    const pods = table.pods('team', 'hello');
    assert.deepEqual(pods?.rotation(), ['10.0.0.7:8080']);
    assert.deepEqual(
      Array.from({ length: 5 }, () => pods?.pick()?.baseUrl),
      Array.from({ length: 5 }, () => 'http://10.0.0.7:8080'),
    );
    assert.ok(rotation.includes('team/hello 10.0.0.2:8080 out'));
  });

  it('gives up probing after the window; a removed pod or slice stops its probes', async () => {
    const { table, probes, step } = harness();
    table.apply('add', slice('hello-a', { '10.0.0.7': { ready: false } }));
    for (let i = 0; i < 30; i++) await step(50);
    const count = probes.length;
    assert.ok(count >= 19 && count <= 22, `about 1 s / 50 ms probes, saw ${count}`);
    await step(1_000);
    assert.equal(probes.length, count, 'none after the window');
    table.apply('add', slice('hello-b', { '10.0.0.8': { ready: false } }));
    await step(0);
    table.apply('delete', slice('hello-b', {}));
    await step(200);
    assert.equal(probes.filter((p) => p.includes('10.0.0.8')).length, 1);
    assert.equal(table.pods('team', 'hello')?.serving, false);
  });

  it('a probed-only pod that refuses a call leaves rotation and is probed until it answers again', async () => {
    const { table, answering, probes, step } = harness();
    answering.add('http://10.0.0.7:8080');
    table.apply('add', slice('hello-a', { '10.0.0.7': { ready: false } }));
    await step(0);
    const pods = table.pods('team', 'hello');
    const picked = pods?.pick();
    assert.equal(picked?.baseUrl, 'http://10.0.0.7:8080');
    answering.clear();
    picked?.release('refused');
    assert.equal(pods?.serving, false);
    await step(0);
    answering.add('http://10.0.0.7:8080');
    await step(50);
    assert.equal(pods?.serving, true);
    assert.equal(probes.length, 3);
  });

  it('forgets a function when its last slice goes; other functions are untouched', () => {
    const { table } = harness();
    table.apply('add', slice('hello-a', { '10.0.0.2': { ready: true } }));
    table.apply('add', slice('other-a', { '10.0.0.3': { ready: true } }, 'other'));
    table.apply('delete', { addressType: 'IPv4', endpoints: [], metadata: { name: 'hello-a', namespace: 'team' } });
    assert.equal(table.pods('team', 'hello'), undefined);
    assert.deepEqual(table.pods('team', 'other')?.rotation(), ['10.0.0.3:8080']);
  });
});
