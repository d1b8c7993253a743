// `sless dev` scales functions with processes (issue 29): a function with scale.min 0 goes to zero
// processes after `idle` and the next call wakes it (held, not refused; its wait is recorded); 50
// calls at zero cause one scale-up and all get 200; a load of 3 x concurrency brings 3 processes
// (within max) without a failed call and goes back to min after; a disabled function stays at zero.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeFiles } from '../helpers/git-server.ts';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const scratch = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-scale-'));
const functions = path.join(scratch, 'functions');
const pidHandler = 'exports.handle = async () => ({ pid: process.pid });\n';
const slowHandler = (ms: number) => `exports.handle = async () => { await new Promise((r) => setTimeout(r, ${ms})); return { pid: process.pid }; };\n`;
await writeFiles(functions, {
  'sleepy/function.yaml': 'runtime: nodejs20\nscale:\n  min: 0\n  idle: 10s\n',
  'sleepy/handler.js': pidHandler,
  'crowd/function.yaml': 'runtime: nodejs20\nscale:\n  min: 0\n  idle: 10s\n',
  'crowd/handler.js': slowHandler(300),
  'busy/function.yaml': 'runtime: nodejs20\nscale:\n  min: 1\n  max: 3\n  concurrency: 2\n  idle: 10s\n',
  'busy/handler.js': slowHandler(200),
  'off/function.yaml': 'runtime: nodejs20\nhttp:\n  enabled: false\nscale:\n  min: 0\n  idle: 10s\n',
  'off/handler.js': pidHandler,
});

interface Fn {
  replicas: { desired: number; ready: number };
  phase: string;
}

describe('sless dev scales functions with processes', { timeout: 240_000 }, () => {
  let dev: DevProcess;
  let token = '';
  const fn = async (name: string): Promise<Fn> => {
    const res = await fetch(`${dev.url}/v1/namespaces/dev/functions/${name}`, { headers: { authorization: `Bearer ${token}` } });
    return (await res.json()) as Fn;
  };
  const metric = async (re: RegExp): Promise<number> => {
    const text = await (await fetch(`${dev.url}/metrics`)).text();
    return Number(re.exec(text)?.[1] ?? 0);
  };
  const atZero = (name: string) => eventually(async () => ((await fn(name)).replicas.ready === 0 ? true : undefined), `${name} to idle down to zero`, 40_000);

  before(async () => {
    dev = await startDevProcess({ repo: functions, path: '' });
    token = await dev.adminToken();
    for (const name of ['sleepy', 'crowd', 'busy']) {
      await eventually(async () => ((await callFunction(dev.url, name)).status === 200 ? true : undefined), `${name} to serve:\n${dev.log()}`, 120_000);
    }
  });
  after(async () => {
    await dev?.dispose();
    await rm(scratch, { recursive: true, force: true });
  });

  it('a function with min 0 goes to zero after idle; the next call gets 200 and its wait is recorded', async () => {
    await atZero('sleepy');
    assert.deepEqual((await fn('sleepy')).replicas, { desired: 0, ready: 0 });
    const page = async () => (await fetch(`${dev.url}/funcs/dev/functions/sleepy`, { headers: { authorization: `Bearer ${token}`, accept: 'text/html' } })).text();
    assert.match(await page(), /data-replicas>idle \(scaled to zero\)</);
    const res = await callFunction(dev.url, 'sleepy');
    assert.equal(res.status, 200, res.body);
    assert.equal(await metric(/sless_cold_start_seconds_count\{namespace="dev",function="sleepy"\} (\d+)/), 1);
    const calls = (await (await fetch(`${dev.url}/v1/namespaces/dev/functions/sleepy/invocations?limit=1`, { headers: { authorization: `Bearer ${token}` } })).json()) as Array<{ cold_start_ms?: number }>;
    assert.ok((calls[0]?.cold_start_ms ?? 0) > 0, JSON.stringify(calls));
    assert.equal((await fn('sleepy')).replicas.ready, 1);
    // The console marks the call that waited.
    assert.match(await page(), /data-cold-start>\(cold start \d+ ms\)/);
  });

  it('50 concurrent calls to a function at zero all get 200 and cause one scale-up', async () => {
    await atZero('crowd');
    const upBefore = await metric(/sless_scale_events_total\{namespace="dev",function="crowd",direction="up"\} (\d+)/);
    const results = await Promise.all(Array.from({ length: 50 }, () => callFunction(dev.url, 'crowd')));
    assert.deepEqual(
      results.filter((r) => r.status !== 200),
      [],
    );
    assert.equal(await metric(/sless_scale_events_total\{namespace="dev",function="crowd",direction="up"\} (\d+)/), upBefore + 1);
    assert.equal(await metric(/sless_cold_start_seconds_count\{namespace="dev",function="crowd"\} (\d+)/), 50);
  });

  it('a load of 3 x concurrency brings 3 processes (max 3), no call fails, and it returns to min after', async () => {
    const failures: string[] = [];
    const pids = new Set<number>();
    let stop = false;
    // 6 callers in a loop = 6 calls in flight = 3 x concurrency 2.
    const callers = Array.from({ length: 6 }, async () => {
      while (!stop) {
        const r = await callFunction(dev.url, 'busy');
        if (r.status !== 200) failures.push(`${r.status} ${r.body}`);
        else pids.add((JSON.parse(r.body) as { pid: number }).pid);
      }
    });
    try {
      await eventually(async () => ((await fn('busy')).replicas.ready === 3 ? true : undefined), `busy to run 3 processes:\n${dev.log().slice(-3000)}`, 60_000);
      const seenBefore = pids.size;
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal((await fn('busy')).replicas.desired, 3, 'never above max');
      assert.ok(pids.size >= 3 && seenBefore >= 1, `calls were served by ${pids.size} processes`);
    } finally {
      stop = true;
      await Promise.all(callers);
    }
    assert.deepEqual(failures, []);
    await eventually(async () => ((await fn('busy')).replicas.ready === 1 ? true : undefined), 'busy back to min 1', 60_000);
    assert.deepEqual((await fn('busy')).replicas, { desired: 1, ready: 1 });
  });

  it('a disabled function stays at zero under calls (503)', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await callFunction(dev.url, 'off')).status, 503);
    assert.deepEqual((await fn('off')).replicas, { desired: 0, ready: 0 });
    assert.equal(await metric(/sless_cold_start_seconds_count\{namespace="dev",function="off"\} (\d+)/), 0);
  });
});
