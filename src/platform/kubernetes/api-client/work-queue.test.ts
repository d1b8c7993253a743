import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import PQueue from 'p-queue';
import { FakeTimers } from './fake-timers.ts';
import { backoffDelay } from './timers.ts';
import { WorkQueue, type HandlerResult } from './work-queue.ts';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function setup(handler: (key: string) => Promise<HandlerResult | void>, concurrency = 4) {
  const timers = new FakeTimers();
  const pool = new PQueue({ concurrency });
  const errors: Array<[string, number]> = [];
  const q = new WorkQueue({
    name: 't',
    handler,
    pool,
    timers,
    backoff: { baseMs: 100, maxMs: 1000 },
    onError: (key, _err, retry) => errors.push([key, retry]),
  });
  return { q, timers, pool, errors };
}

describe('WorkQueue', () => {
  it('never runs the same key twice at once; adds during a run give exactly one more run', async () => {
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const gate = deferred();
    const { q, pool } = setup(async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      runs++;
      if (runs === 1) await gate.promise;
      running--;
    });
    q.add('repo/a');
    await new Promise((r) => setImmediate(r));
    q.add('repo/a');
    q.add('repo/a');
    q.add('repo/a');
    gate.resolve();
    await pool.onIdle();
    await new Promise((r) => setImmediate(r));
    await pool.onIdle();
    assert.equal(maxRunning, 1);
    assert.equal(runs, 2);
  });

  it('coalesces adds of a key that is still waiting', async () => {
    const seen: string[] = [];
    const gate = deferred();
    const { q, pool } = setup(async (k) => {
      seen.push(k);
      if (k === 'busy') await gate.promise;
    }, 1);
    q.add('busy');
    q.add('a');
    q.add('a');
    q.add('b');
    q.add('a');
    gate.resolve();
    await pool.onIdle();
    assert.deepEqual(seen, ['busy', 'a', 'b']);
  });

  it('takes waiting keys round robin by group: one large repository does not delay another', async () => {
    const seen: string[] = [];
    const timers = new FakeTimers();
    const pool = new PQueue({ concurrency: 1 });
    const q = new WorkQueue({
      name: 'fair',
      pool,
      timers,
      groupOf: (key) => key.split(':')[0]!,
      handler: async (key) => {
        seen.push(key);
      },
    });
    for (let i = 0; i < 100; i++) q.add(`big:${i}`);
    q.add('small:0');
    q.add('other:0');
    await pool.onIdle();
    assert.equal(seen.length, 102);
    // big:0 started at once (the pool was free); then the groups take turns.
    assert.deepEqual(seen.slice(0, 5), ['big:0', 'big:1', 'small:0', 'other:0', 'big:2']);
  });

  it('takes turns by namespace first: a namespace of many repositories gets one turn per round', async () => {
    const seen: string[] = [];
    const pool = new PQueue({ concurrency: 1 });
    const q = new WorkQueue({ name: 'fair', pool, timers: new FakeTimers(), groupOf: (key) => key.split('#')[0]!, handler: async (key) => void seen.push(key) });
    for (let r = 0; r < 20; r++) for (let i = 0; i < 5; i++) q.add(`abuser/repo-${r}#${i}`);
    q.add('victim/app#0');
    await pool.onIdle();
    assert.equal(seen.length, 101);
    assert.ok(seen.indexOf('victim/app#0') <= 2, `the victim ran as key ${seen.indexOf('victim/app#0')}: ${seen.slice(0, 4).join(', ')}`);
  });

  it('runs at most maxRunningPerNamespace keys of one namespace, leaving the other slots to other namespaces', async () => {
    const gates = new Map<string, () => void>();
    const started: string[] = [];
    let running = 0;
    let peak = 0;
    const pool = new PQueue({ concurrency: 2 });
    const q = new WorkQueue({
      name: 'capped',
      pool,
      timers: new FakeTimers(),
      maxRunningPerNamespace: 1,
      handler: async (key) => {
        started.push(key);
        running++;
        peak = Math.max(peak, running);
        await new Promise<void>((r) => gates.set(key, r));
        running--;
      },
    });
    for (let i = 0; i < 5; i++) q.add(`abuser/r${i}`);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, ['abuser/r0'], 'the abuser holds one slot of two');
    q.add('victim/app');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(started, ['abuser/r0', 'victim/app'], 'the victim starts at once in the slot left free');
    // Everything still runs, one abuser key at a time.
    const drain = async () => {
      while (q.depth() > 0) {
        for (const [k, open] of gates) {
          gates.delete(k);
          open();
        }
        await new Promise((r) => setImmediate(r));
      }
    };
    await drain();
    await pool.onIdle();
    assert.equal(started.length, 6);
    assert.equal(peak, 2);
  });

  it('runs an urgent key (a webhook naming a new head) before every routine key waiting, the namespace cap still holding', async () => {
    const urgent = new Set<string>();
    const seen: string[] = [];
    const gates: Array<() => void> = [];
    const pool = new PQueue({ concurrency: 4 });
    const q = new WorkQueue({
      name: 'urgent',
      pool,
      timers: new FakeTimers(),
      maxRunningPerNamespace: 2,
      urgentOf: (key) => urgent.has(key),
      handler: async (key) => {
        seen.push(key);
        await new Promise<void>((r) => gates.push(r));
      },
    });
    const tick = () => new Promise((r) => setImmediate(r));
    for (let i = 0; i < 100; i++) q.add(`busy/r${i}`);
    urgent.add('busy/pushed');
    q.add('busy/pushed');
    await tick();
    assert.deepEqual(seen, ['busy/r0', 'busy/r1'], 'two of the namespace run (its cap), the pushed one waits for a slot of its namespace');
    gates.shift()?.();
    await tick();
    assert.equal(seen[2], 'busy/pushed', `the pushed repository ran next, not after 98 resyncs: ${seen.slice(0, 4).join(', ')}`);
    while (q.depth() > 0) {
      for (const open of gates.splice(0)) open();
      await tick();
    }
    assert.equal(seen.length, 101);
  });

  it('moves a routine key still waiting to the urgent lanes when it is added again as urgent', async () => {
    const urgent = new Set<string>();
    const seen: string[] = [];
    let open!: () => void;
    const pool = new PQueue({ concurrency: 1 });
    const q = new WorkQueue({
      name: 'promote',
      pool,
      timers: new FakeTimers(),
      urgentOf: (key) => urgent.has(key),
      handler: async (key) => {
        seen.push(key);
        if (key === 'a/first') await new Promise<void>((r) => (open = r));
      },
    });
    q.add('a/first');
    await new Promise((r) => setImmediate(r));
    for (let i = 0; i < 10; i++) q.add(`a/r${i}`);
    // An interval resync queued it; then its webhook arrived.
    urgent.add('a/r9');
    q.add('a/r9');
    open();
    await pool.onIdle();
    assert.deepEqual(seen.slice(0, 3), ['a/first', 'a/r9', 'a/r0']);
    assert.equal(seen.length, 11, 'it ran once, not twice');
  });

  it('keeps namespaces taking turns among urgent keys: one tenant’s flood of webhooks does not hold back another’s', async () => {
    const seen: string[] = [];
    const pool = new PQueue({ concurrency: 1 });
    const q = new WorkQueue({ name: 'urgent-fair', pool, timers: new FakeTimers(), urgentOf: () => true, handler: async (key) => void seen.push(key) });
    for (let i = 0; i < 50; i++) q.add(`abuser/r${i}`);
    q.add('victim/app');
    await pool.onIdle();
    assert.ok(seen.indexOf('victim/app') <= 2, `the victim ran as key ${seen.indexOf('victim/app')}`);
  });

  it('retries failures with exponential backoff and forgets failures after a success', async () => {
    let calls = 0;
    const { q, pool, timers, errors } = setup(async () => {
      calls++;
      if (calls <= 3) throw new Error('boom');
    });
    q.add('k');
    await pool.onIdle();
    for (const step of [100, 200, 400]) {
      assert.deepEqual(timers.scheduled(), [step]);
      timers.advance(step);
      await pool.onIdle();
    }
    assert.equal(calls, 4);
    assert.deepEqual(errors.map(([, r]) => r), [100, 200, 400]);
    assert.deepEqual(timers.scheduled(), []);
  });

  it('runs again after the delay a handler asks for, keeping the earliest of several delays', async () => {
    let calls = 0;
    const { q, pool, timers } = setup(async () => {
      calls++;
      return calls === 1 ? { requeueAfterMs: 60_000 } : undefined;
    });
    q.add('k');
    await pool.onIdle();
    q.add('k', 90_000);
    q.add('k', 5_000);
    assert.deepEqual(timers.scheduled(), [5_000]);
    timers.advance(5_000);
    await pool.onIdle();
    assert.equal(calls, 2);
  });

  it('reports depth and stops taking work after stop()', async () => {
    const { q, pool } = setup(async () => undefined);
    q.stop();
    q.add('x');
    await pool.onIdle();
    assert.equal(q.depth(), 0);
  });
});

describe('backoffDelay', () => {
  it('doubles from the base and caps at the maximum', () => {
    assert.deepEqual([1, 2, 3, 4, 10].map((a) => backoffDelay(a, 100, 1000)), [100, 200, 400, 800, 1000]);
  });
});
