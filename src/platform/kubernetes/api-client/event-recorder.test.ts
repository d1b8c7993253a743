import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import { EventRecorder, type EventSink } from './event-recorder.ts';

function fakeSink() {
  const created: CoreV1Event[] = [];
  const updates: Array<{ name: string; count: number; message?: string }> = [];
  const sink: EventSink = {
    create: async (_ns, body) => {
      created.push(body);
      return { name: `ev-${created.length}` };
    },
    update: async (_ns, name, count, _at, message) => {
      updates.push({ name, count, ...(message !== undefined ? { message } : {}) });
    },
  };
  return { sink, created, updates };
}

const fn = (uid: string) => ({ apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'Function', metadata: { name: 'f', namespace: 'ns', uid } });

describe('EventRecorder', () => {
  it('creates one Event per outcome and object; repeats only count, with one series update a minute at most', async () => {
    let now = 0;
    const { sink, created, updates } = fakeSink();
    const rec = new EventRecorder({ sink, now: () => new Date(now) });
    const results = [];
    for (let i = 0; i < 20; i++) {
      results.push(await rec.record(fn('u1'), 'Warning', 'SyncFailed', 'git: connection refused'));
      now += 1_000;
    }
    assert.equal(created.length, 1);
    assert.equal(results.filter((r) => r === 'counted').length, 19);
    now += 60_000;
    assert.equal(await rec.record(fn('u1'), 'Warning', 'SyncFailed', 'git: connection refused'), 'updated');
    assert.deepEqual(updates, [{ name: 'ev-1', count: 21 }]);
  });

  it('keeps outcomes apart: another reason, message or object is an Event of its own', async () => {
    const { sink, created } = fakeSink();
    const rec = new EventRecorder({ sink });
    await rec.record(fn('u1'), 'Normal', 'BuildStarted', 'building a');
    await rec.record(fn('u1'), 'Normal', 'BuildSucceeded', 'built a');
    await rec.record(fn('u1'), 'Normal', 'BuildStarted', 'building b');
    await rec.record(fn('u2'), 'Normal', 'BuildStarted', 'building a');
    assert.deepEqual(
      created.map((e) => `${e.involvedObject.uid} ${e.reason}`),
      ['u1 BuildStarted', 'u1 BuildSucceeded', 'u1 BuildStarted', 'u2 BuildStarted'],
    );
  });

  it('starts a new Event after the window and forgets a deleted object; what it remembers is bounded', async () => {
    let now = 0;
    const { sink, created } = fakeSink();
    const rec = new EventRecorder({ sink, now: () => new Date(now), maxEntries: 3 });
    await rec.record(fn('u1'), 'Normal', 'Deployed', 'x');
    now += 11 * 60_000;
    await rec.record(fn('u1'), 'Normal', 'Deployed', 'x');
    assert.equal(created.length, 2);
    rec.forget('u1');
    assert.equal(rec.size, 0);
    for (let i = 0; i < 10; i++) await rec.record(fn(`u${i}`), 'Normal', 'Deployed', 'x');
    assert.equal(rec.size, 3);
  });

  it('never fails the caller when the API server refuses the Event', async () => {
    const rec = new EventRecorder({ sink: { create: () => Promise.reject(new Error('403')), update: () => Promise.reject(new Error('403')) } });
    assert.equal(await rec.record(fn('u1'), 'Normal', 'Deployed', 'x'), 'created');
  });

  it("aggregates a repository's routine outcomes into one Event per reason on it, counting and naming the latest; a trailing update sends the last count", async () => {
    let now = 0;
    const pending: Array<{ fn: () => void; ms: number }> = [];
    const { sink, created, updates } = fakeSink();
    const rec = new EventRecorder({ sink, now: () => new Date(now), later: (f, ms) => pending.push({ fn: f, ms }) });
    const repo = { apiVersion: 'sless.kube5s.ru/v1alpha1', kind: 'FunctionRepository', metadata: { name: 'r', namespace: 'ns', uid: 'r1' } };
    const results = [];
    for (let i = 0; i < 100; i++) {
      results.push(await rec.aggregate(repo, 'BuildSucceeded', `fn-${i}`, `built image-${i}`));
      now += 100;
    }
    await rec.aggregate(repo, 'BuildStarted', 'fn-0', 'building');
    assert.deepEqual(
      created.map((e) => `${e.involvedObject.kind}/${e.involvedObject.name} ${e.reason}: ${e.message}`),
      ['FunctionRepository/r BuildSucceeded: 1 Function(s) of this repository; latest fn-0: built image-0', 'FunctionRepository/r BuildStarted: 1 Function(s) of this repository; latest fn-0: building'],
    );
    assert.equal(results.filter((r) => r === 'counted').length, 99);
    assert.equal(pending.length, 1, 'one trailing update scheduled, not one per occurrence');
    assert.equal(pending[0]!.ms, 59_900, 'a minute after the create');
    assert.deepEqual(updates, []);
    now = 60_000;
    pending[0]!.fn();
    await Promise.resolve();
    assert.deepEqual(updates, [{ name: 'ev-1', count: 100, message: '100 Function(s) of this repository; latest fn-99: built image-99' }]);
  });
});
