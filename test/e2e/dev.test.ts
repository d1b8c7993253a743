// `sless dev` end to end: a real git server, real pushes, signed Gitea webhooks, the real CLI as a
// child process and real runtime processes. Polling is set to 1 h, so every change below arrives
// through its webhook. The tests run in order and share one repository and one dev process.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { callFunction, descendants, eventually, giteaPush, isAlive, startDevProcess, type DevProcess } from './dev-harness.ts';

const manifest = (greeting: string, extra = '') => `runtime: nodejs20\nenv:\n  GREETING: ${greeting}\n${extra}`;
const handler = (version: string) =>
  `exports.handle = async () => ({ version: '${version}', pid: process.pid, greeting: process.env.GREETING });\n`;

interface Answer {
  version: string;
  pid: number;
  greeting: string;
}

let clone: WorkClone;
let dev: DevProcess;

async function answer(name: string): Promise<Answer | undefined> {
  const r = await callFunction(dev.url, name);
  return r.status === 200 ? (JSON.parse(r.body) as Answer) : undefined;
}

/** Commits, pushes and delivers the signed webhook; returns the commit SHA. */
async function pushAndNotify(message: string): Promise<string> {
  const sha = await clone.commitAndPush(message);
  const res = await giteaPush(dev, { after: sha });
  assert.equal(res.status, 202, `webhook answered ${res.status}: ${await res.text()}`);
  return sha;
}

async function v1(path: string): Promise<unknown> {
  const res = await fetch(`${dev.url}/v1/namespaces/dev/${path}`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } });
  assert.equal(res.status, 200, `GET /v1/namespaces/dev/${path} answered ${res.status}`);
  return res.json();
}

before(async () => {
  const repo = await createRepo(sharedGitServer(), 'dev-e2e');
  clone = await WorkClone.create(repo);
  await clone.write({ 'functions/alpha/function.yaml': manifest('hello'), 'functions/alpha/handler.js': handler('v1') });
  await clone.commitAndPush('alpha v1');
  dev = await startDevProcess({ repo: repo.url, path: 'functions' });
  await dev.waitForLog(/synced rev/);
});

after(async () => {
  await dev?.dispose();
  await clone?.dispose();
});

test('the first sync serves the repository’s functions at /fn/dev/<name>', async () => {
  const a = await answer('alpha');
  assert.equal(a?.version, 'v1');
  assert.equal(a?.greeting, 'hello');
  assert.match(dev.log(), /synced rev [0-9a-f]{7} \(1 functions: 1 added/);
});

test('a pushed new function is served after a signed Gitea webhook, without waiting for the poll', async () => {
  await clone.write({ 'functions/beta/function.yaml': manifest('hi'), 'functions/beta/handler.js': handler('b1') });
  const t0 = Date.now();
  await pushAndNotify('beta');
  const b = await eventually(() => answer('beta'), 'beta to be served', 30_000);
  assert.equal(b.version, 'b1');
  assert.ok(Date.now() - t0 < 30_000);
});

test('a delivery with a wrong signature gets 401 and starts no sync', async () => {
  await clone.write({ 'functions/gamma/function.yaml': manifest('x'), 'functions/gamma/handler.js': handler('g1') });
  const sha = await clone.commitAndPush('gamma');
  const syncs = dev.log().match(/synced rev/g)?.length ?? 0;
  const res = await giteaPush(dev, { after: sha, secret: 'not-the-secret' });
  assert.equal(res.status, 401);
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal((await callFunction(dev.url, 'gamma')).status, 404);
  assert.equal(dev.log().match(/synced rev/g)?.length ?? 0, syncs);
});

test('a code change swaps to the new version while a request loop sees no error', async () => {
  const statuses = new Map<number, number>();
  const versions: string[] = [];
  let stop = false;
  const worker = async () => {
    while (!stop) {
      const r = await callFunction(dev.url, 'alpha').catch((err: Error) => ({ status: -1, body: err.message }));
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 200) versions.push((JSON.parse(r.body) as Answer).version);
    }
  };
  const workers = [worker(), worker(), worker(), worker()];
  await new Promise((r) => setTimeout(r, 300));
  await clone.write({ 'functions/alpha/handler.js': handler('v2') });
  await pushAndNotify('alpha v2');
  await eventually(() => versions.at(-1) === 'v2' || undefined, 'alpha v2 to be served', 30_000);
  // Keep calling past the old process's drain and stop.
  await new Promise((r) => setTimeout(r, 2500));
  stop = true;
  await Promise.all(workers);
  assert.deepEqual([...statuses.keys()], [200], `statuses seen: ${JSON.stringify([...statuses])}`);
  assert.ok(versions.includes('v1') && versions.at(-1) === 'v2');
  assert.ok((statuses.get(200) ?? 0) > 20, `only ${statuses.get(200)} calls made`);
  // The push also brought gamma (pushed with a bad delivery before).
  assert.equal((await answer('gamma'))?.version, 'g1');
});

test('an env-only change starts a new process from the same prepared folder, without a rebuild', async () => {
  const before = await answer('alpha');
  const record = (await v1('functions/alpha')) as { image_ref: string; code_hash: string };
  const offset = dev.log().length;
  await clone.write({ 'functions/alpha/function.yaml': manifest('bonjour') });
  await pushAndNotify('alpha env');
  const after = await eventually(async () => {
    const a = await answer('alpha');
    return a?.greeting === 'bonjour' ? a : undefined;
  }, 'the new GREETING');
  assert.equal(after.version, 'v2');
  assert.notEqual(after.pid, before?.pid, 'a new process');
  const again = (await v1('functions/alpha')) as { image_ref: string; code_hash: string };
  assert.equal(again.image_ref, record.image_ref, 'the same prepared folder');
  assert.equal(again.code_hash, record.code_hash);
  // The switch comes before the end of the sync: wait for its summary line.
  await dev.waitForLog(/0 rebuilt, 1 redeployed/, { fromOffset: offset });
  assert.doesNotMatch(dev.log().slice(offset), /alpha: building/);
});

test('a broken function.yaml keeps its last good version and the others served, and is reported', async () => {
  await clone.write({
    'functions/beta/function.yaml': manifest('hi', 'colour: blue\n'),
    'functions/delta/function.yaml': manifest('hey'),
    'functions/delta/handler.js': handler('d1'),
  });
  await pushAndNotify('break beta, add delta');
  assert.equal((await eventually(() => answer('delta'), 'delta to be served')).version, 'd1');
  assert.equal((await answer('beta'))?.version, 'b1', 'beta keeps its last good version');
  assert.equal((await answer('alpha'))?.version, 'v2');
  // The repository's status is written when the sync ends, a moment after its functions serve.
  const beta = await eventually(async () => {
    const repo = (await v1('repositories/local')) as { functions: Array<{ name: string; error?: string }> };
    return repo.functions.find((f) => f.name === 'beta' && f.error);
  }, 'the repository to report beta');
  assert.match(beta.error ?? '', /functions\/beta\/function\.yaml:4: colour: unknown key/);
  assert.match(dev.log(), /functions\/beta.*colour.*the last good version keeps running/);
});

test('deleting a function’s folder stops it: /fn answers 404', async () => {
  const pidsBefore = await descendants(dev.pid);
  const alphaPid = (await answer('alpha'))?.pid as number;
  assert.ok(pidsBefore.includes(alphaPid));
  await clone.remove('functions/alpha');
  await pushAndNotify('remove alpha');
  await eventually(async () => ((await callFunction(dev.url, 'alpha')).status === 404 ? true : undefined), 'alpha to answer 404');
  await eventually(() => !isAlive(alphaPid) || undefined, 'alpha’s process to end');
  assert.equal((await answer('delta'))?.version, 'd1');
});

test('stopping sless dev (SIGTERM) stops every child process and exits 0', async () => {
  const pids = await descendants(dev.pid);
  assert.ok(pids.length >= 3, `expected the function processes below dev, found ${pids.length}`);
  const code = await dev.stop('SIGTERM');
  assert.equal(code, 0);
  const alive = pids.filter(isAlive);
  assert.deepEqual(alive, [], `still running after dev stopped: ${alive.join(', ')}`);
  assert.match(dev.log(), /sless dev stopped/);
});
