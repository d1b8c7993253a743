// The sync slot kept for urgent keys (work-queue.ts urgentPool): a webhook's push starts at once even
// while routine syncs hold every slot of the pool and of its namespace (the lanes alone only order the
// queue: the push still waited for one of them to end, test/bench/repos.bench.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import PQueue from 'p-queue';
import { FakeTimers } from './fake-timers.ts';
import { WorkQueue } from './work-queue.ts';

const tick = () => new Promise((r) => setImmediate(r));

function setup(opts: { concurrency: number; cap?: number; urgentSlots: number }) {
  const urgent = new Set<string>();
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  let running = 0;
  let peak = 0;
  const pool = new PQueue({ concurrency: opts.concurrency });
  const urgentPool = new PQueue({ concurrency: opts.urgentSlots });
  const q = new WorkQueue({
    name: 'urgent-slot',
    pool,
    urgentPool,
    timers: new FakeTimers(),
    ...(opts.cap === undefined ? {} : { maxRunningPerNamespace: opts.cap }),
    urgentOf: (key) => urgent.has(key),
    handler: async (key) => {
      started.push(key);
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((r) => gates.set(key, r));
      running--;
    },
  });
  const finish = async (key: string) => {
    const open = gates.get(key);
    assert.ok(open, `${key} is not running (running: ${[...gates.keys()].join(', ')})`);
    gates.delete(key);
    open();
    await tick();
  };
  const drain = async () => {
    while (q.depth() > 0) {
      for (const key of [...gates.keys()]) await finish(key);
      await tick();
    }
    await Promise.all([pool.onIdle(), urgentPool.onIdle()]);
  };
  return { q, urgent, started, gates, finish, drain, peak: () => peak, running: () => running };
}

describe('WorkQueue: the slot kept for urgent keys', () => {
  it('starts an urgent key at once while routine keys hold every slot of the pool and of its namespace', async () => {
    const t = setup({ concurrency: 4, cap: 2, urgentSlots: 1 });
    for (let i = 0; i < 50; i++) t.q.add(`busy/r${i}`);
    for (let i = 0; i < 50; i++) t.q.add(`other/r${i}`);
    await tick();
    assert.equal(t.running(), 4, 'the pool is full');
    t.urgent.add('busy/pushed');
    t.q.add('busy/pushed');
    await tick();
    assert.equal(
      t.started.at(-1),
      'busy/pushed',
      `the push started without waiting for a routine key to end: ${t.started.join(', ')}`,
    );
    assert.equal(t.running(), 5);
    await t.drain();
    assert.equal(t.started.length, 101);
    assert.equal(t.peak(), 5, 'one beyond the pool, never more');
  });

  it('never gives the kept slot to a routine key, and gives it to the next urgent key when it frees', async () => {
    const t = setup({ concurrency: 2, urgentSlots: 1 });
    for (let i = 0; i < 10; i++) t.q.add(`a/r${i}`);
    await tick();
    t.urgent.add('a/push1');
    t.urgent.add('b/push2');
    t.q.add('a/push1');
    t.q.add('b/push2');
    await tick();
    assert.deepEqual(
      t.started,
      ['a/r0', 'a/r1', 'a/push1'],
      'the second push waits: one slot is kept, not one per push',
    );
    await t.finish('a/push1');
    assert.deepEqual(t.started.slice(3), ['b/push2'], 'the freed slot went to the waiting push');
    await t.finish('b/push2');
    assert.equal(t.running(), 2, 'no routine key took the kept slot');
    assert.deepEqual(t.started.slice(4), []);
    await t.drain();
    assert.equal(t.started.length, 12);
  });

  it('uses the pool, not the kept slot, when the pool has room for the urgent key', async () => {
    const t = setup({ concurrency: 2, urgentSlots: 1 });
    t.q.add('a/r0');
    await tick();
    t.urgent.add('b/push1');
    t.urgent.add('c/push2');
    t.q.add('b/push1');
    t.q.add('c/push2');
    await tick();
    assert.deepEqual(
      t.started,
      ['a/r0', 'b/push1', 'c/push2'],
      'the first push took the free pool slot, the second the kept one',
    );
    await t.drain();
  });

  it('runs a routine key that became urgent (its webhook arrived while it waited) in the kept slot', async () => {
    const t = setup({ concurrency: 1, urgentSlots: 1 });
    for (let i = 0; i < 5; i++) t.q.add(`a/r${i}`);
    await tick();
    t.urgent.add('a/r4');
    t.q.add('a/r4');
    await tick();
    assert.deepEqual(t.started, ['a/r0', 'a/r4']);
    await t.drain();
    assert.equal(t.started.length, 5, 'it ran once, not twice');
  });
});
