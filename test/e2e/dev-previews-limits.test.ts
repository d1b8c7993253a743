// The limits of `sless dev --previews` against a real Gitea (test service `gitea`): `maxOpen` refuses
// the next pull request with a commit status, and `ttl` after the last push removes a preview.
// One dev process with --preview-max-open 1 --preview-ttl 30s.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { GiteaApi, giteaFromEnv, WorkingCopy } from '../helpers/gitea-api.ts';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const env = giteaFromEnv();
if (!env) throw new Error('this test needs the gitea test service: SLESS_TEST_SERVICES=gitea (built by .ci/install.d/40-gitea.sh)');
const api = new GiteaApi(env);

const alpha = (version: string) => ({
  'functions/alpha/function.yaml': 'runtime: nodejs20\n',
  'functions/alpha/handler.js': `exports.handle = async () => ({ version: '${version}' });\n`,
});

let repo: { cloneUrl: string; fullName: string };
let wc: WorkingCopy;
let dev: DevProcess;

async function answer(namespace: string): Promise<string | number> {
  const r = await callFunction(dev.url, 'alpha', undefined, namespace);
  return r.status === 200 ? (JSON.parse(r.body) as { version: string }).version : r.status;
}

async function openPr(branch: string, version: string): Promise<{ number: number; head: string }> {
  await wc.git('checkout', '-q', '-B', branch, 'main');
  const head = await wc.commit(alpha(version), version, branch);
  const pr = await api.call<{ number: number }>('POST', `/repos/${repo.fullName}/pulls`, { head: branch, base: 'main', title: branch });
  return { number: pr.number, head };
}

before(async () => {
  repo = await api.createRepo(`previews-limits-${randomBytes(4).toString('hex')}`, { private: true });
  wc = await WorkingCopy.create(api.pushUrl(repo.cloneUrl));
  await wc.commit(alpha('v1'), 'alpha', 'main');
  const token = await api.createToken(`limits-${randomBytes(3).toString('hex')}`, ['write:repository']);
  const url = new URL(repo.cloneUrl);
  url.username = 'sless';
  url.password = token;
  dev = await startDevProcess({
    repo: url.toString(),
    path: 'functions',
    extraArgs: ['--branch', 'main', '--commit-status', '--previews', '--preview-max-open', '1', '--preview-ttl', '30s'],
  });
  await api.createHook(repo.fullName, { url: `${dev.url}/hooks/dev/local`, secret: dev.webhookSecret, events: ['push', 'pull_request'] });
  await dev.waitForLog(/synced rev/);
});

after(async () => {
  await dev?.dispose();
  await wc?.remove();
});

test('maxOpen 1: the second pull request is refused with a status that says so; ttl 30s after the last push removes the first preview', async () => {
  const first = await openPr('first', 'v-first');
  await eventually(async () => ((await answer(`dev-pr-${first.number}`)) === 'v-first' ? true : undefined), 'the first preview to serve');
  const second = await openPr('second', 'v-second');
  const status = await eventually(async () => (await api.latestStatuses(repo.fullName, second.head)).get('sless/preview'), 'a status on the refused PR');
  assert.equal(status.status, 'failure');
  assert.equal(status.description, '1 preview is open, the most this repository allows (spec.previews.maxOpen 1); close one');
  assert.equal(await answer(`dev-pr-${second.number}`), 404, 'nothing built for the refused PR');
  await dev.waitForLog(new RegExp(`preview dev-pr-${first.number} removed \\(no push for 30s, its ttl\\)`), { timeoutMs: 60_000 });
  assert.equal(await answer(`dev-pr-${first.number}`), 404);
  assert.equal(await answer('dev'), 'v1', 'production untouched');
});
