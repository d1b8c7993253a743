// Pull-request previews in `sless dev --previews` against a real Gitea 1.27.3 (test service `gitea`):
// three functions on main; pull requests opened, pushed to, merged and closed through Gitea's API, its
// pull_request webhooks delivering to sless; the preview URLs, production, and the `sless/preview`
// commit status read back. The tests run in order and share one repository and one dev process.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { GiteaApi, giteaFromEnv, WorkingCopy, type CommitStatusRecord } from '../helpers/gitea-api.ts';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const env = giteaFromEnv();
if (!env) throw new Error('this test needs the gitea test service: SLESS_TEST_SERVICES=gitea (built by .ci/install.d/40-gitea.sh)');
const api = new GiteaApi(env);
const run = promisify(execFile);

const fn = (name: string, version: string) => ({
  [`functions/${name}/function.yaml`]: 'runtime: nodejs20\n',
  [`functions/${name}/handler.js`]: `exports.handle = async () => ({ fn: '${name}', version: '${version}' });\n`,
});

let repo: { cloneUrl: string; fullName: string };
let wc: WorkingCopy;
let dev: DevProcess;

/** What /fn/<namespace>/<name> answers: the version, or the HTTP status when not 200. */
async function answer(namespace: string, name: string): Promise<string | number> {
  const r = await callFunction(dev.url, name, undefined, namespace);
  return r.status === 200 ? (JSON.parse(r.body) as { version: string }).version : r.status;
}

async function until(namespace: string, name: string, wanted: string | number, timeoutMs = 60_000): Promise<void> {
  await eventually(async () => ((await answer(namespace, name)) === wanted ? true : undefined), `/fn/${namespace}/${name} to answer ${wanted}`, timeoutMs);
}

async function openPr(branch: string, title = branch): Promise<number> {
  const pr = await api.call<{ number: number }>('POST', `/repos/${repo.fullName}/pulls`, { head: branch, base: 'main', title });
  return pr.number;
}

async function previewStatusOf(sha: string, done: (s: CommitStatusRecord) => boolean, what: string): Promise<CommitStatusRecord> {
  return eventually(async () => {
    const s = (await api.latestStatuses(repo.fullName, sha)).get('sless/preview');
    return s && done(s) ? s : undefined;
  }, what, 60_000);
}

/** A pull_request delivery signed as Gitea signs it (the bad-input cases Gitea itself would not send). */
async function deliver(body: unknown, secret = dev.webhookSecret): Promise<{ status: number; body: string }> {
  const raw = JSON.stringify(body);
  const res = await fetch(`${dev.url}/hooks/dev/local`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gitea-event': 'pull_request', 'x-gitea-signature': createHmac('sha256', secret).update(raw).digest('hex') },
    body: raw,
  });
  return { status: res.status, body: await res.text() };
}

before(async () => {
  repo = await api.createRepo(`previews-${randomBytes(4).toString('hex')}`, { private: true });
  wc = await WorkingCopy.create(api.pushUrl(repo.cloneUrl));
  await wc.commit({ ...fn('alpha', 'v1'), ...fn('beta', 'v1'), ...fn('gamma', 'v1') }, 'three functions', 'main');
  const token = await api.createToken(`previews-${randomBytes(3).toString('hex')}`, ['write:repository']);
  const url = new URL(repo.cloneUrl);
  url.username = 'sless';
  url.password = token;
  dev = await startDevProcess({ repo: url.toString(), path: 'functions', extraArgs: ['--branch', 'main', '--commit-status', '--previews'] });
  await api.createHook(repo.fullName, { url: `${dev.url}/hooks/dev/local`, secret: dev.webhookSecret, events: ['push', 'delete', 'pull_request'] });
  await dev.waitForLog(/synced rev/);
  await until('dev', 'alpha', 'v1');
});

after(async () => {
  await dev?.dispose();
  await wc?.remove();
});

let pr1: number;
let pr1Head: string;

test('a PR changing one of three functions: it serves its new code at the preview URL, production serves the old, the others answer from production; the status says so', async () => {
  await wc.git('checkout', '-q', '-b', 'change-alpha');
  pr1Head = await wc.commit(fn('alpha', 'v2-pr'), 'alpha v2', 'change-alpha');
  pr1 = await openPr('change-alpha');
  const ns = `dev-pr-${pr1}`;
  await until(ns, 'alpha', 'v2-pr');
  assert.equal(await answer('dev', 'alpha'), 'v1', 'production keeps the old code');
  assert.equal(await answer(ns, 'beta'), 'v1', 'beta answers at the preview URL from production');
  assert.equal(await answer(ns, 'gamma'), 'v1');
  const s = await previewStatusOf(pr1Head, (x) => x.status === 'success', 'a success sless/preview status on the PR head');
  assert.equal(s.description, '1 built, 2 from production');
  assert.equal(s.target_url, `${dev.url}/funcs/${ns}`);
  assert.match(dev.log(), new RegExp(`pr #${pr1}: synced rev ${pr1Head.slice(0, 7)} \\(1 functions: 1 added`));
  const res = await fetch(`${dev.url}/v1/namespaces/dev/previews`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } });
  assert.equal(res.status, 200);
  const [p] = (await res.json()) as Array<{ number: number; branch: string; head: string; url: string; expires_at: string; functions: unknown[] }>;
  assert.deepEqual([p?.number, p?.branch, p?.head, p?.url], [pr1, 'change-alpha', pr1Head, `${dev.url}/fn/${ns}/`]);
  assert.ok(Date.parse(p?.expires_at ?? '') > Date.now() + 71 * 3_600_000, 'ttl 72h after the last push');
  assert.deepEqual(p?.functions, [
    { name: 'alpha', state: 'built', phase: 'Ready', url: `${dev.url}/fn/${ns}/alpha` },
    { name: 'beta', state: 'production', url: `${dev.url}/fn/dev/beta` },
    { name: 'gamma', state: 'production', url: `${dev.url}/fn/dev/gamma` },
  ]);
});

let pr2: number;

test('a second PR adding one function and deleting another: the added one exists only in its preview, the deleted one is 404 there; the two previews are isolated', async () => {
  await wc.git('checkout', '-q', 'main');
  await wc.git('checkout', '-q', '-b', 'add-delta');
  const head = await wc.commit({ ...fn('delta', 'v1-pr'), 'functions/gamma/function.yaml': null, 'functions/gamma/handler.js': null }, 'delta in, gamma out', 'add-delta');
  pr2 = await openPr('add-delta');
  const ns = `dev-pr-${pr2}`;
  await until(ns, 'delta', 'v1-pr');
  assert.equal(await answer(ns, 'gamma'), 404, 'deleted by the PR');
  assert.equal(await answer('dev', 'gamma'), 'v1', 'production still has it');
  assert.equal(await answer('dev', 'delta'), 404, 'added only in the preview');
  assert.equal(await answer(ns, 'alpha'), 'v1', "the other PR's alpha is not this one's");
  assert.equal(await answer(`dev-pr-${pr1}`, 'delta'), 404);
  const s = await previewStatusOf(head, (x) => x.status === 'success', 'success on the second PR');
  assert.equal(s.description, '1 built, 2 from production, 1 removed');
});

test('a second push to the PR rebuilds only what changed: the function built before keeps running', async () => {
  const ns = `dev-pr-${pr1}`;
  await wc.git('checkout', '-q', 'change-alpha');
  const from = dev.log().length;
  pr1Head = await wc.commit(fn('beta', 'v2-pr'), 'beta v2', 'change-alpha');
  await until(ns, 'beta', 'v2-pr');
  assert.equal(await answer(ns, 'alpha'), 'v2-pr');
  assert.equal(await answer('dev', 'beta'), 'v1');
  const line = await dev.waitForLog(new RegExp(`pr #${pr1}: synced rev ${pr1Head.slice(0, 7)}`), { fromOffset: from });
  assert.match(line, /\(2 functions: 1 added, 0 rebuilt, 0 redeployed, 0 removed, 1 unchanged, 0 errors\)/);
  const s = await previewStatusOf(pr1Head, (x) => x.status === 'success', 'success after the second push');
  assert.equal(s.description, '2 built, 1 from production');
});

test('bad deliveries: a wrong signature is 401; a bad number, another base branch, a deleted head branch are acknowledged and ignored with a log line', async () => {
  const body = (over: { number?: unknown; base?: string; head?: string }) => ({
    action: 'synchronized',
    number: over.number ?? 99,
    pull_request: {
      head: { ref: over.head ?? 'change-alpha', sha: 'e'.repeat(40), repo: { id: 1 } },
      base: { ref: over.base ?? 'main', repo: { id: 1 } },
    },
  });
  assert.equal((await deliver(body({}), 'wrong-secret')).status, 401);
  const bad = await deliver(body({ number: -3 }));
  assert.equal(bad.status, 200);
  assert.match(bad.body, /"status":"ignored".*not a positive integer/);
  const base = await deliver(body({ base: 'release' }));
  assert.match(base.body, /"status":"ignored".*targets release; this repository watches main/);
  const from = dev.log().length;
  const gone = await deliver(body({ head: 'no-such-branch' }));
  assert.equal(gone.status, 202);
  await dev.waitForLog(/pr #99: branch no-such-branch does not exist .*; nothing built/, { fromOffset: from, timeoutMs: 30_000 });
  assert.equal(await answer('dev-pr-99', 'alpha'), 404, 'nothing built for it');
  assert.equal(await answer('dev', 'alpha'), 'v1', 'production untouched');
});

test('a pull request from a fork builds nothing, and its head gets a status saying so', async () => {
  const { head, number } = await api.forkPullRequest(repo, fn('alpha', 'v-fork'));
  const s = await previewStatusOf(head, (x) => x.status === 'failure', 'a failure status on the fork PR head');
  assert.match(s.description, /forks are not built/);
  assert.equal(await answer(`dev-pr-${number}`, 'alpha'), 404);
});

test('merging a PR removes its preview and production serves the merged code; closing another removes its preview', async () => {
  await api.call('POST', `/repos/${repo.fullName}/pulls/${pr1}/merge`, { Do: 'merge' });
  await until('dev', 'alpha', 'v2-pr');
  await until(`dev-pr-${pr1}`, 'alpha', 404, 60_000);
  await until('dev', 'beta', 'v2-pr'); // the merge's sync deploys alpha and beta one after the other
  await api.call('PATCH', `/repos/${repo.fullName}/pulls/${pr2}`, { state: 'closed' });
  await until(`dev-pr-${pr2}`, 'delta', 404, 60_000);
  await dev.waitForLog(new RegExp(`preview dev-pr-${pr2} removed`));
  assert.equal(await answer('dev', 'gamma'), 'v1');
  // Its data goes too: the prepared folder of delta (which only the preview had), its record in state.json,
  // its branch's ref in the previews' git cache.
  await eventually(async () => ((await preparedCodeOf('delta')).length === 0 ? true : undefined), "delta's prepared folder to go", 30_000);
  const state = await readFile(path.join(dev.dataDir, 'state.json'), 'utf8');
  assert.doesNotMatch(state, new RegExp(`dev-pr-${pr2}\\b`));
  assert.doesNotMatch(await previewRefs(), /add-delta/);
});

/** The prepared folders (<data-dir>/builds/<key>) whose code is function `name`'s. */
async function preparedCodeOf(name: string): Promise<string[]> {
  const dir = path.join(dev.dataDir, 'builds');
  const found: string[] = [];
  for (const key of await readdir(dir)) {
    const handler = await readFile(path.join(dir, key, 'source', 'handler.js'), 'utf8').catch(() => '');
    if (handler.includes(`fn: '${name}'`)) found.push(key);
  }
  return found;
}

/** The refs of the previews' git cache (<data-dir>/previews.git). */
async function previewRefs(): Promise<string> {
  const { stdout } = await run('git', ['--git-dir', path.join(dev.dataDir, 'previews.git'), 'show-ref']).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
  return stdout;
}
