import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SyncCoalescer } from './sync-coalescer.ts';

function recorder(runMs: number) {
  const runs: string[][] = [];
  const c = new SyncCoalescer(
    async (reasons) => {
      runs.push(reasons);
      await new Promise((r) => setTimeout(r, runMs));
    },
    () => {},
  );
  return { runs, c };
}

test('a burst of requests while idle becomes one sync', async () => {
  const { runs, c } = recorder(20);
  for (let i = 0; i < 10; i++) c.request(`hook ${i}`);
  await c.idle();
  assert.equal(runs.length, 1);
  assert.equal(runs[0]?.length, 10);
});

test('requests during a running sync produce exactly one more sync after it', async () => {
  const { runs, c } = recorder(50);
  c.request('first');
  await new Promise((r) => setTimeout(r, 10));
  c.request('during 1');
  c.request('during 2');
  c.request('during 3');
  await c.idle();
  assert.deepEqual(runs, [['first'], ['during 1', 'during 2', 'during 3']]);
});

test('a failing sync is reported and does not stop later ones', async () => {
  const errors: unknown[] = [];
  let n = 0;
  const c = new SyncCoalescer(
    async () => {
      if (n++ === 0) throw new Error('boom');
    },
    (e) => errors.push(e),
  );
  c.request('a');
  await c.idle();
  c.request('b');
  await c.idle();
  assert.equal(n, 2);
  assert.equal(errors.length, 1);
});

test('after close, requests are ignored', async () => {
  const { runs, c } = recorder(5);
  await c.close();
  c.request('late');
  await c.idle();
  assert.equal(runs.length, 0);
});
