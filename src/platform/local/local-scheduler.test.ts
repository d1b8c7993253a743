import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LocalScheduler } from './local-scheduler.ts';

test('a schedule runs on time, in its time zone, and stops when deleted', async () => {
  const s = new LocalScheduler();
  let runs = 0;
  s.set({ key: 'dev/every-second', cron: '* * * * * *', timezone: 'Europe/Moscow', run: async () => void runs++ });
  const next = s.nextRun('dev/every-second');
  assert.ok(next && next.getTime() - Date.now() <= 1000);
  await new Promise((r) => setTimeout(r, 2300));
  assert.ok(runs >= 2, `ran ${runs} times`);
  s.delete('dev/every-second');
  const after = runs;
  await new Promise((r) => setTimeout(r, 1200));
  assert.equal(runs, after);
  assert.deepEqual(s.keys(), []);
});

test('a tick while the previous run is still going is skipped', async () => {
  const s = new LocalScheduler();
  let started = 0;
  s.set({
    key: 'dev/slow',
    cron: '* * * * * *',
    run: async () => {
      started++;
      await new Promise((r) => setTimeout(r, 2500));
    },
  });
  await new Promise((r) => setTimeout(r, 3200));
  s.stopAll();
  assert.ok(started <= 2, `started ${started} overlapping runs`);
});

test('replacing a schedule keeps one timer under the key', async () => {
  const s = new LocalScheduler();
  s.set({ key: 'k', cron: '0 3 * * *', run: async () => {} });
  s.set({ key: 'k', cron: '0 4 * * *', timezone: 'Asia/Tokyo', run: async () => {} });
  assert.deepEqual(s.keys(), ['k']);
  assert.equal(s.nextRun('k')?.getUTCHours(), 19);
  s.stopAll();
});
