// `sless dev` over time: jobs run once per run_id, a crashed function comes back, functions made
// through /v1 run beside the repository's, and a restart of dev on the same data dir neither
// rebuilds nor re-runs anything. Real git server, real CLI, real runtime processes.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { writeZip } from '../../src/http/write-zip.ts';
import { createRepo, sharedGitServer, WorkClone, type TestRepo } from '../helpers/git-server.ts';
import { callFunction, eventually, giteaPush, startDevProcess, type DevProcess } from './dev-harness.ts';

const SUMMER = {
  'functions/summer/function.yaml': 'runtime: python3.11\njobs:\n  - name: sum\n    run_id: 1\n    event: {input: [100, 200, 300]}\n',
  'functions/summer/handler.py': 'def handle(event):\n    return {"sum": sum(event.get("input", []))}\n',
};
const CRASHY = {
  'functions/crashy/function.yaml': 'runtime: nodejs20\n',
  'functions/crashy/handler.js':
    "exports.handle = async (event) => { if (event.crash) setTimeout(() => process.exit(7), 10); return { pid: process.pid }; };\n",
};

interface JobJson {
  phase: string;
  run_id: number;
  message?: string;
  completion_time?: string;
}

let repo: TestRepo;
let clone: WorkClone;
let dev: DevProcess;

async function api(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${dev.url}/v1/namespaces/dev/${path}`, {
    method,
    headers: { authorization: `Bearer ${await dev.adminToken()}`, ...(body !== undefined ? { 'content-type': contentType } : {}) },
    body: body === undefined ? undefined : Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? (JSON.parse(text) as unknown) : undefined };
}

async function finishedJob(name: string, runId: number): Promise<JobJson> {
  return eventually(async () => {
    const r = await api('GET', `jobs/${name}`);
    const j = r.json as JobJson;
    return r.status === 200 && j.run_id === runId && (j.phase === 'Succeeded' || j.phase === 'Failed') ? j : undefined;
  }, `job ${name} run ${runId} to finish`);
}

async function pushAndNotify(message: string): Promise<void> {
  const sha = await clone.commitAndPush(message);
  assert.equal((await giteaPush(dev, { after: sha })).status, 202);
}

before(async () => {
  repo = await createRepo(sharedGitServer(), 'dev-lifecycle');
  clone = await WorkClone.create(repo);
  await clone.write({ ...SUMMER, ...CRASHY });
  await clone.commitAndPush('summer and crashy');
  dev = await startDevProcess({ repo: repo.url, path: 'functions' });
  await dev.waitForLog(/synced rev/);
});

after(async () => {
  await dev?.dispose();
  // The restarted dev was given the first one's data dir, so neither owns it: remove it here.
  if (dev) await rm(dev.dataDir, { recursive: true, force: true });
  await clone?.dispose();
});

test('a job runs once with its event and its output is the job status message', async () => {
  const job = await finishedJob('summer-sum', 1);
  assert.equal(job.phase, 'Succeeded');
  assert.deepEqual(JSON.parse(job.message ?? ''), { sum: 600 });
});

test('a job runs again when its run_id grows, and not when anything else changes', async () => {
  const first = await finishedJob('summer-sum', 1);
  await clone.write({ 'functions/summer/function.yaml': SUMMER['functions/summer/function.yaml'] + 'env:\n  X: "1"\n' });
  await pushAndNotify('env only');
  await dev.waitForLog(/0 added, 0 rebuilt, 1 redeployed/);
  assert.equal(((await api('GET', 'jobs/summer-sum')).json as JobJson).completion_time, first.completion_time);

  await clone.write({
    'functions/summer/function.yaml': 'runtime: python3.11\nenv:\n  X: "1"\njobs:\n  - name: sum\n    run_id: 2\n    event: {input: [1, 2]}\n',
  });
  await pushAndNotify('run_id 2');
  const second = await finishedJob('summer-sum', 2);
  assert.deepEqual(JSON.parse(second.message ?? ''), { sum: 3 });
});

test('a function process that crashes is restarted with backoff and serves again', async () => {
  const first = JSON.parse((await callFunction(dev.url, 'crashy')).body) as { pid: number };
  await callFunction(dev.url, 'crashy', { method: 'POST', body: '{"crash": true}', headers: { 'content-type': 'application/json' } });
  await dev.waitForLog(/dev\/crashy exited with 7.*restarting in \d+ ms/);
  const again = await eventually(async () => {
    const r = await callFunction(dev.url, 'crashy');
    return r.status === 200 ? (JSON.parse(r.body) as { pid: number }) : undefined;
  }, 'crashy to serve again');
  assert.notEqual(again.pid, first.pid);
});

test('a function made through /v1 runs from an uploaded zip; git functions refuse changes through /v1', async () => {
  const created = await api('POST', 'functions', { name: 'uploaded', runtime: 'nodejs20', env_vars: { WHO: 'api' } });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const zip = writeZip([{ path: 'handler.js', mode: '100644', content: Buffer.from('exports.handle = async () => `made by ${process.env.WHO}`;\n') }]);
  const uploaded = await api('POST', 'functions/uploaded/upload', zip, 'application/zip');
  assert.ok(uploaded.status < 300, JSON.stringify(uploaded.json));
  const served = await eventually(async () => {
    const r = await callFunction(dev.url, 'uploaded');
    return r.status === 200 ? r.body : undefined;
  }, 'the uploaded function');
  assert.equal(served, 'made by api');
  const listed = (await api('GET', 'functions')).json as Array<{ name: string; managed_by: string }>;
  assert.deepEqual(
    listed.map((f) => [f.name, f.managed_by]),
    [
      ['crashy', 'git:local'],
      ['summer', 'git:local'],
      ['uploaded', 'api'],
    ],
  );
  const refused = await api('DELETE', 'functions/crashy');
  assert.equal(refused.status, 409);
});

test('a function that cannot start is Failed with the reason, answers 503, and is not retried on every poll', async () => {
  await clone.write({ 'functions/broken/function.yaml': 'runtime: nodejs20\nentrypoint: handler.nope\n', 'functions/broken/handler.js': 'exports.handle = async () => 1;\n' });
  await pushAndNotify('broken entrypoint');
  const record = await eventually(async () => {
    const r = (await api('GET', 'functions/broken')).json as { phase: string; message?: string };
    return r.phase === 'Failed' ? r : undefined;
  }, 'broken to be Failed');
  assert.match(record.message ?? '', /did not start/);
  assert.match(record.message ?? '', /nope/);
  const call = await callFunction(dev.url, 'broken');
  assert.equal(call.status, 503);
  const starts = dev.log().match(/dev\/broken did not start|broken failed/g)?.length ?? 0;
  const offset = dev.log().length;
  await clone.write({ 'functions/summer/handler.py': 'def handle(event):\n    return {"sum": sum(event.get("input", [])), "v": 2}\n' });
  await pushAndNotify('unrelated change');
  await dev.waitForLog(/1 rebuilt/, { fromOffset: offset });
  assert.equal(dev.log().match(/dev\/broken did not start|broken failed/g)?.length ?? 0, starts, 'no second attempt within a minute');
  await clone.remove('functions/broken');
  await pushAndNotify('remove broken');
  await eventually(async () => ((await callFunction(dev.url, 'broken')).status === 404 ? true : undefined), 'broken to be gone');
});

test('a restart of sless dev on the same data dir rebuilds nothing and re-runs no job', async () => {
  const job = await finishedJob('summer-sum', 2);
  assert.equal(await dev.stop('SIGTERM'), 0);
  dev = await startDevProcess({ repo: repo.url, path: 'functions', dataDir: dev.dataDir });
  await dev.waitForLog(/synced rev/);
  const log = dev.log();
  assert.doesNotMatch(log, /: (building|compiling)/);
  assert.doesNotMatch(log, /job summer-sum .* started/);
  assert.match(log, /0 added, 0 rebuilt, 0 redeployed, 0 removed, 2 unchanged/);
  assert.equal((await callFunction(dev.url, 'crashy')).status, 200);
  assert.equal((await callFunction(dev.url, 'uploaded')).body, 'made by api');
  assert.equal(((await api('GET', 'jobs/summer-sum')).json as JobJson).completion_time, job.completion_time);
});
