import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FairLanes, FairPool } from './fair-lanes.ts';

describe('FairLanes', () => {
  it('gives each group a turn: a large group never holds back a small one behind all its items', () => {
    const lanes = new FairLanes<string>();
    for (let i = 0; i < 1000; i++) lanes.push('big', `big-${i}`);
    lanes.push('small', 'small-0');
    lanes.push('small', 'small-1');
    const order = Array.from({ length: 6 }, () => lanes.shift());
    assert.deepEqual(order, ['big-0', 'small-0', 'big-1', 'small-1', 'big-2', 'big-3']);
    assert.equal(lanes.size, 996);
    assert.equal(lanes.groups, 1);
  });

  it('keeps each group in its own order and is empty after the last item', () => {
    const lanes = new FairLanes<number>();
    lanes.push('a', 1);
    lanes.push('a', 2);
    assert.equal(lanes.shift(), 1);
    assert.equal(lanes.shift(), 2);
    assert.equal(lanes.shift(), undefined);
    assert.equal(lanes.size, 0);
  });
});

describe('FairLanes.remove', () => {
  it('takes one item out of its lane, the others keeping their turns', () => {
    const lanes = new FairLanes<string>();
    lanes.push('a/x', 'x1');
    lanes.push('a/x', 'x2');
    lanes.push('b/y', 'y1');
    assert.equal(lanes.remove('a/x', 'x1'), true);
    assert.equal(lanes.remove('a/x', 'x1'), false, 'not there any more');
    assert.equal(lanes.remove('b/y', 'y1'), true);
    assert.equal(lanes.size, 1);
    assert.equal(lanes.groups, 1);
    assert.equal(lanes.shift(), 'x2');
    assert.equal(lanes.shift(), undefined);
  });
});

describe('FairLanes between namespaces', () => {
  it('gives each namespace a turn, whatever the number of its repositories', () => {
    const lanes = new FairLanes<string>();
    for (let r = 0; r < 40; r++) for (let i = 0; i < 25; i++) lanes.push(`abuser/repo-${r}`, `abuser/repo-${r}#${i}`);
    lanes.push('victim/app', 'victim/app#0');
    lanes.push('victim/app', 'victim/app#1');
    const order = Array.from({ length: 5 }, () => lanes.shift());
    // The abuser's forty repositories share its one turn in every round; inside it they take turns.
    assert.deepEqual(order, ['abuser/repo-0#0', 'victim/app#0', 'abuser/repo-1#0', 'victim/app#1', 'abuser/repo-2#0']);
    assert.equal(lanes.groups, 40);
  });

  it('serves first the namespace running the fewest, and none that may not run', () => {
    const lanes = new FairLanes<string>();
    lanes.push('a/x', 'a1');
    lanes.push('a/y', 'a2');
    lanes.push('b/x', 'b1');
    const running: Record<string, number> = { a: 0, b: 3 };
    const busy = (ns: string) => running[ns] ?? 0;
    assert.equal(lanes.shift(busy), 'a1');
    running.a = 3;
    assert.equal(lanes.shift(busy), 'b1', 'a tie goes by turn: a took the last one');
    assert.equal(lanes.shift(busy, (ns) => ns !== 'a'), undefined, 'only a waits, and a may not run');
    assert.equal(lanes.size, 1);
    assert.equal(lanes.shift(busy), 'a2');
  });
});

describe('FairPool', () => {
  it('starts a quiet namespace’s task before more of a busy one’s', async () => {
    const pool = new FairPool(2);
    const started: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const task = (name: string) => async () => {
      started.push(name);
      await gate;
    };
    const all = [pool.add('a/r1', task('a1')), pool.add('a/r2', task('a2')), pool.add('a/r3', task('a3')), pool.add('b/r1', task('b1'))];
    // a1 and a2 took both slots; when one ends, b (running none) goes before a3.
    assert.deepEqual(started, ['a1', 'a2']);
    open();
    await Promise.all(all);
    assert.deepEqual(started, ['a1', 'a2', 'b1', 'a3']);
  });

  it('runs at most `concurrency` tasks and serves a small group while a large one is queued', async () => {
    const pool = new FairPool(2);
    const started: string[] = [];
    let running = 0;
    let peak = 0;
    const task = (name: string) => async () => {
      started.push(name);
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 1));
      running--;
      return name;
    };
    const big = Array.from({ length: 50 }, (_, i) => pool.add('big', task(`big-${i}`)));
    const small = pool.add('small', task('small-0'));
    assert.equal(await small, 'small-0');
    await Promise.all(big);
    await pool.onIdle();
    assert.equal(peak, 2);
    assert.ok(started.indexOf('small-0') <= 3, `small-0 started as task ${started.indexOf('small-0')}: ${started.slice(0, 5).join(', ')}`);
  });

  it('leaves a slot free for another namespace: one namespace runs at most maxPerTenant tasks at once', async () => {
    const pool = new FairPool(4, { maxPerTenant: 2 });
    const started: string[] = [];
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const task = (name: string) => async () => {
      started.push(name);
      await gate;
    };
    const busy = Array.from({ length: 6 }, (_, i) => pool.add(`a/r${i}`, task(`a${i}`)));
    // The flooding namespace holds 2 of the 4 slots; a task of another starts at once, not after one of its ends.
    assert.deepEqual(started, ['a0', 'a1']);
    const other = pool.add('b/r1', task('b1'));
    assert.deepEqual(started, ['a0', 'a1', 'b1']);
    open();
    await Promise.all([...busy, other]);
    assert.equal(started.length, 7);
    await pool.onIdle();
    assert.equal(pool.size, 0);
  });

  it('passes a task failure to its caller and keeps going', async () => {
    const pool = new FairPool(1);
    await assert.rejects(pool.add('a', async () => Promise.reject(new Error('boom'))), /boom/);
    assert.equal(await pool.add('a', async () => 7), 7);
    await pool.onIdle();
    assert.equal(pool.size, 0);
  });
});
