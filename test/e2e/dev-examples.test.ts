// `npm start` (= sless dev --repo . --path examples) serves every example, as examples/README.md
// promises: the same calls as its curl lines, against the project's own committed examples/.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let dev: DevProcess;

async function json(name: string, init?: RequestInit): Promise<Record<string, unknown>> {
  const r = await callFunction(dev.url, name, init);
  assert.equal(r.status, 200, `${name} answered ${r.status}: ${r.body}`);
  return JSON.parse(r.body) as Record<string, unknown>;
}

const post = (body: unknown): RequestInit => ({ method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

before(async () => {
  dev = await startDevProcess({ repo: root, path: 'examples' });
  // pip install (hello-python) and go build (hello-go) on a cold machine take a while.
  await dev.waitForLog(/synced rev/, { timeoutMs: 240_000 });
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
});

test('every example was built and is ready', async () => {
  const res = await fetch(`${dev.url}/v1/namespaces/dev/functions`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } });
  const fns = (await res.json()) as Array<{ name: string; phase: string; message?: string }>;
  assert.deepEqual(
    fns.map((f) => [f.name, f.phase, f.message ?? '']),
    ['clock-cron', 'greet-en', 'greet-ru', 'hello-go', 'hello-node', 'hello-python', 'sum-job'].map((n) => [n, 'Ready', '']),
  );
});

test('hello-node, hello-python and hello-go greet', async () => {
  assert.equal((await json('hello-node', post({ name: 'Ada' }))).message, 'Hello, Ada!');
  const py = await json('hello-python', post({ name: 'Ada' }));
  assert.equal(py.message, 'Hello, Ada!');
  assert.match(String(py.event_size), /Bytes/, 'humanize from requirements.txt is installed');
  assert.equal((await json('hello-go', post({ name: 'Ada' }))).message, 'Hello, Ada!');
});

test('hello-go asks for go1.23: on another Go one warning names the version found, as for Node and Python', () => {
  const goVersion = /go(\d+\.\d+(?:\.\d+)?)/.exec(spawnSync('go', ['version'], { encoding: 'utf8' }).stdout)?.[1] ?? '';
  const warnings = dev.log().split('\n').filter((l) => l.includes('hello-go: asks for go1.23'));
  if (goVersion === '1.23' || goVersion.startsWith('1.23.')) return assert.deepEqual(warnings, []);
  assert.equal(warnings.length, 1, dev.log());
  assert.match(warnings[0] as string, new RegExp(` warn hello-go: asks for go1\\.23 but runs on Go ${goVersion.replace(/\./g, '\\.')} \\(go\\)`));
});

test('greet-en and greet-ru share examples/lib/common through include', async () => {
  assert.equal((await callFunction(dev.url, 'greet-en?name=Ada')).body, 'Hello, Ada!');
  assert.equal((await callFunction(dev.url, 'greet-ru?name=Ada')).body, 'Привет, Ada!');
});

test('sum-job ran its job once: 100 + 200 + 300', async () => {
  const job = await eventually(async () => {
    const res = await fetch(`${dev.url}/v1/namespaces/dev/jobs/sum-job-sum`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } });
    const j = (await res.json()) as { phase: string; message?: string };
    return j.phase === 'Succeeded' ? j : undefined;
  }, 'the sum job');
  assert.deepEqual(JSON.parse(job.message ?? ''), { sum: 600, count: 3 });
  const listed = await fetch(`${dev.url}/v1/namespaces/dev/jobs`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } });
  assert.equal(listed.status, 200);
  assert.deepEqual(((await listed.json()) as { name: string }[]).find((j) => j.name === 'sum-job-sum'), job, 'GET .../jobs lists the job as GET .../jobs/{name} answers it');
  assert.deepEqual(await json('sum-job', post({ input: [1, 2, 3] })), { sum: 6, count: 3 });
});

test('clock-cron has its schedule as an active cron trigger in its time zone', async () => {
  const res = await fetch(`${dev.url}/v1/namespaces/dev/triggers/clock-cron-cron-every-minute`, {
    headers: { authorization: `Bearer ${await dev.adminToken()}` },
  });
  const t = (await res.json()) as Record<string, unknown>;
  assert.equal(t.type, 'cron');
  assert.equal(t.schedule, '* * * * *');
  assert.equal(t.timezone, 'Europe/Moscow');
  assert.equal(t.active, true);
  assert.equal((await json('clock-cron')).kind, 'http');
});
