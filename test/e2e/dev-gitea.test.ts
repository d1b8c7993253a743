// `sless dev` against a real Gitea 1.27.3 (test service `gitea`): a private repository read with a
// read-only token, webhooks of type gitea (json and form) and gogs, Gitea's test delivery, a webhook
// without a secret, the watched branch deleted, and the commit statuses sless sets, read back
// through Gitea's API. Polling is 1 h: every sync below comes from a webhook. The tests run in order
// and share one repository and one dev process.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { GiteaApi, giteaFromEnv, WorkingCopy, type CommitStatusRecord } from '../helpers/gitea-api.ts';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const env = giteaFromEnv();
if (!env) throw new Error('this test needs the gitea test service: SLESS_TEST_SERVICES=gitea (built by .ci/install.d/40-gitea.sh)');
const api = new GiteaApi(env);
const BRANCH = 'live';

const fn = (version: string) => ({
  'functions/alpha/function.yaml': 'runtime: nodejs20\n',
  'functions/alpha/handler.js': `exports.handle = async () => ({ version: '${version}' });\n`,
});

let repo: { cloneUrl: string; fullName: string };
let wc: WorkingCopy;
let dev: DevProcess;
let hook: number | undefined;

async function version(name = 'alpha'): Promise<string | undefined> {
  const r = await callFunction(dev.url, name);
  return r.status === 200 ? (JSON.parse(r.body) as { version: string }).version : undefined;
}

/** Replaces the repository's webhook with one of this kind. */
async function useHook(opts: { type?: 'gitea' | 'gogs'; contentType?: 'json' | 'form'; secret?: string }): Promise<number> {
  if (hook !== undefined) await api.deleteHook(repo.fullName, hook);
  hook = await api.createHook(repo.fullName, { url: `${dev.url}/hooks/dev/local`, secret: opts.secret ?? dev.webhookSecret, ...opts });
  return hook;
}

async function pushAndServe(v: string): Promise<string> {
  const sha = await wc.commit(fn(v), `alpha ${v}`, BRANCH);
  await eventually(async () => ((await version()) === v ? true : undefined), `alpha to answer ${v}`, 60_000);
  return sha;
}

async function statusesOf(sha: string, done: (s: Map<string, CommitStatusRecord>) => boolean, what: string): Promise<Map<string, CommitStatusRecord>> {
  return eventually(async () => {
    const s = await api.latestStatuses(repo.fullName, sha);
    return done(s) ? s : undefined;
  }, what, 60_000);
}

before(async () => {
  repo = await api.createRepo(`dev-e2e-${randomBytes(4).toString('hex')}`, { private: true });
  wc = await WorkingCopy.create(api.pushUrl(repo.cloneUrl));
  await wc.commit({ 'README.md': 'functions\n' }, 'init', 'main');
  await wc.commit(fn('v1'), 'alpha v1', BRANCH);
  const readToken = await api.createToken(`read-${randomBytes(3).toString('hex')}`, ['read:repository']);
  const statusToken = await api.createToken(`status-${randomBytes(3).toString('hex')}`, ['write:repository']);
  const url = new URL(repo.cloneUrl);
  url.username = 'sless';
  url.password = readToken;
  dev = await startDevProcess({
    repo: url.toString(),
    path: 'functions',
    extraArgs: ['--branch', BRANCH, '--commit-status'],
    env: { SLESS_COMMIT_STATUS_TOKEN: statusToken },
  });
  await dev.waitForLog(/synced rev/);
});

after(async () => {
  await dev?.dispose();
  await wc?.remove();
});

test('a private repository read with a read-only token: served, and the synced commit gets a success status linked to the console', async () => {
  assert.equal(await version(), 'v1');
  assert.ok(!dev.log().includes(new URL(api.pushUrl(repo.cloneUrl)).password), 'no token in the log');
  const head = await wc.git('rev-parse', 'HEAD');
  const s = await statusesOf(head, (m) => m.get('sless')?.status === 'success', 'a success status on the first revision');
  assert.match(s.get('sless')?.description ?? '', /^1 function serves [0-9a-f]{12}$/);
  assert.equal(s.get('sless')?.target_url, `${dev.url}/funcs/dev`);
});

test('a push through a gitea json webhook: the new version serves, the commit went pending then success', async () => {
  await useHook({ type: 'gitea', contentType: 'json' });
  const sha = await pushAndServe('v2');
  await statusesOf(sha, (m) => m.get('sless')?.status === 'success', 'success on v2');
  const all = (await api.statuses(repo.fullName, sha)).filter((s) => s.context === 'sless').map((s) => s.status);
  assert.deepEqual(all.reverse(), ['pending', 'success'], 'oldest first: pending while starting, then success');
});

test('a push through a gitea form webhook (payload=..., signed over the JSON) syncs like a json one', async () => {
  await useHook({ type: 'gitea', contentType: 'form' });
  await pushAndServe('v3');
});

test('a push through a gogs webhook syncs', async () => {
  await useHook({ type: 'gogs', contentType: 'json' });
  await pushAndServe('v4');
});

test("Gitea's test delivery (\"ref\": \"live\", unqualified) starts a sync", async () => {
  const id = await useHook({ type: 'gitea', contentType: 'json' });
  const from = dev.log().length;
  await api.testHook(repo.fullName, id, BRANCH);
  await dev.waitForLog(/synced rev [0-9a-f]{7} .*\[webhook gitea delivery/, { fromOffset: from, timeoutMs: 30_000 });
});

test('a webhook without a secret is refused, and the log says the webhook has no secret and what to set', async () => {
  await useHook({ type: 'gitea', contentType: 'json', secret: '' });
  const from = dev.log().length;
  await wc.commit(fn('v5-unsigned'), 'unsigned push', BRANCH);
  await dev.waitForLog(/webhook has no secret/, { fromOffset: from, timeoutMs: 30_000 });
  assert.equal(await version(), 'v4', 'no sync from an unsigned delivery');
  await useHook({ type: 'gitea', contentType: 'json' });
  await pushAndServe('v5');
});

test('a broken function.yaml: failure on the commit with file:line, on sless and on sless/<function>; the last good version keeps serving', async () => {
  const sha = await wc.commit({ 'functions/alpha/function.yaml': 'runtime: nodejs20\nmemory_mb: lots\n' }, 'break alpha', BRANCH);
  const s = await statusesOf(sha, (m) => m.get('sless')?.status === 'failure' && m.has('sless/alpha'), 'failure on the broken revision');
  assert.match(s.get('sless')?.description ?? '', /^alpha: functions\/alpha\/function\.yaml:2: memory_mb: /);
  assert.match(s.get('sless/alpha')?.description ?? '', /^functions\/alpha\/function\.yaml:2: memory_mb: /);
  assert.equal(s.get('sless/alpha')?.target_url, `${dev.url}/funcs/dev/source/alpha`);
  assert.equal(await version(), 'v5');
});

test('a function that fails to start: failure with the start failure; fixing it sets success and clears sless/<function>', async () => {
  const bad = await wc.commit(
    { 'functions/alpha/function.yaml': 'runtime: nodejs20\n', 'functions/alpha/handler.js': "throw new Error('boom at import');\n" },
    'alpha crashes at start',
    BRANCH,
  );
  const s = await statusesOf(bad, (m) => m.get('sless')?.status === 'failure' && m.get('sless/alpha')?.status === 'failure', 'failure on the crashing revision');
  assert.match(s.get('sless/alpha')?.description ?? '', /\w/);
  assert.equal(await version(), 'v5', 'the previous version keeps serving');
  const good = await pushAndServe('v6');
  await statusesOf(good, (m) => m.get('sless')?.status === 'success', 'success once fixed');
});

test('deleting the watched branch (only a delete event) syncs at once: the missing branch is reported, nothing is removed', async () => {
  await useHook({ type: 'gitea', contentType: 'json' });
  const from = dev.log().length;
  await api.deleteBranch(repo.fullName, BRANCH);
  const line = await dev.waitForLog(/sync of .* failed: .*live/, { fromOffset: from, timeoutMs: 30_000 });
  assert.match(line, /branch/);
  assert.equal(await version(), 'v6', 'what ran keeps running');
});
