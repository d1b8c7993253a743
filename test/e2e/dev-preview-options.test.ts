// `sless dev --previews` with a local git repository and signed pull_request deliveries: what a preview
// is given. By default (spec.previews `schedules: false`, `secrets: none`) its built functions run no
// jobs or schedules and get no env_from_secrets from --secrets-dir, while production keeps both;
// `--preview-schedules --preview-secrets inherit` give them both. And a restart of `sless dev` with an
// open preview keeps serving it from state.json, and closing the PR after the restart removes it.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { git } from '../helpers/git-server.ts';
import { callFunction, eventually, giteaPullRequest, startDevProcess, type DevProcess } from './dev-harness.ts';

let root: string;
let repo: string;
let secrets: string;
let out: string;
let prHead: string;
const running: DevProcess[] = [];

const worker = (from: string) => [
  ['functions/worker/function.yaml', ['runtime: nodejs22', 'entrypoint: handler.mjs.handle', `env: {OUT_FILE: ${JSON.stringify(out)}}`, 'jobs:', '  - name: mark', '    run_id: 1', `    event: {from: ${from}}`, ''].join('\n')],
  ['functions/worker/handler.mjs', "import { appendFileSync } from 'node:fs';\nexport function handle(event) { if (event && event.from) appendFileSync(process.env.OUT_FILE, `${event.from}\\n`); return { ok: true }; }\n"],
];
const secretive = (version: string) => [
  ['functions/secretive/function.yaml', 'runtime: nodejs22\nentrypoint: handler.mjs.handle\nenv_from_secrets: [app]\n'],
  ['functions/secretive/handler.mjs', `export function handle() { return { version: '${version}', key: process.env.KEY ?? null }; }\n`],
];

async function commit(files: string[][], message: string): Promise<string> {
  for (const [file, text] of files) {
    await mkdir(path.dirname(path.join(repo, file as string)), { recursive: true });
    await writeFile(path.join(repo, file as string), text as string);
  }
  await git(['add', '-A'], repo);
  await git(['-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', message], repo);
  return (await git(['rev-parse', 'HEAD'], repo)).trim();
}

async function dev(extraArgs: string[], dataDir?: string): Promise<DevProcess> {
  const d = await startDevProcess({ repo, path: 'functions', extraArgs: ['--branch', 'main', '--previews', '--secrets-dir', secrets, ...extraArgs], ...(dataDir ? { dataDir } : {}) });
  running.push(d);
  return d;
}

async function json(d: DevProcess, namespace: string, name: string): Promise<{ version: string; key: string | null } | number> {
  const r = await callFunction(d.url, name, undefined, namespace);
  return r.status === 200 ? (JSON.parse(r.body) as { version: string; key: string | null }) : r.status;
}

async function answers(d: DevProcess, namespace: string, version: string): Promise<{ version: string; key: string | null }> {
  return eventually(async () => {
    const r = await json(d, namespace, 'secretive');
    return typeof r === 'object' && r.version === version ? r : undefined;
  }, `/fn/${namespace}/secretive to answer ${version}`);
}

const marks = async (): Promise<string[]> => (await readFile(out, 'utf8').catch(() => '')).split('\n').filter(Boolean);

async function v1(d: DevProcess, route: string): Promise<unknown> {
  const res = await fetch(`${d.url}/v1${route}`, { headers: { authorization: `Bearer ${await d.adminToken()}` } });
  return res.json();
}

before(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sless-preview-options-'));
  repo = path.join(root, 'repo');
  secrets = path.join(root, 'secrets');
  out = path.join(root, 'marks.txt');
  await mkdir(path.join(secrets, 'app'), { recursive: true });
  await writeFile(path.join(secrets, 'app/KEY'), 'k-1\n');
  await mkdir(repo);
  await git(['init', '-q', '-b', 'main'], repo);
  await commit([...worker('main'), ...secretive('main')], 'main');
  await git(['checkout', '-q', '-b', 'pr-1'], repo);
  prHead = await commit([...worker('pr'), ...secretive('pr')], 'the PR changes both');
  await git(['checkout', '-q', 'main'], repo);
});

let dataDir: string | undefined;

after(async () => {
  for (const d of running) await d.dispose();
  await rm(root, { recursive: true, force: true });
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

test('by default a preview runs no jobs and gets no env_from_secrets; production keeps both', async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sless-preview-options-data-'));
  const d = await dev([], dataDir);
  assert.deepEqual(await answers(d, 'dev', 'main'), { version: 'main', key: 'k-1' });
  await eventually(async () => ((await marks()).includes('main') ? true : undefined), "production's job to run");
  assert.equal((await giteaPullRequest(d, { action: 'opened', number: 1, branch: 'pr-1', sha: prHead })).status, 202);
  assert.deepEqual(await answers(d, 'dev-pr-1', 'pr'), { version: 'pr', key: null });
  await eventually(async () => ((await json(d, 'dev-pr-1', 'worker')) === 404 ? undefined : true), "the preview's worker to be built");
  // A job starts as the sync applies the manifest: given a moment, the preview's still has not run.
  await new Promise((r) => setTimeout(r, 2000));
  assert.deepEqual(await marks(), ['main']);
  assert.deepEqual(await v1(d, '/namespaces/dev-pr-1/jobs'), []);
  assert.deepEqual(await answers(d, 'dev', 'main'), { version: 'main', key: 'k-1' }, 'production keeps its secret');
});

test('after a restart the open preview is served again from state.json (still without secrets); closing the PR then removes it', async () => {
  const first = running.at(-1) as DevProcess;
  const kept = dataDir;
  assert.ok(kept, 'the first test made the data dir');
  await first.stop('SIGTERM');
  const d = await dev([], kept);
  assert.deepEqual(await answers(d, 'dev-pr-1', 'pr'), { version: 'pr', key: null });
  assert.doesNotMatch(d.log(), /secretive: building/, 'restarted from its prepared folder, not rebuilt');
  const listed = (await v1(d, '/namespaces/dev/previews')) as Array<{ number: number }>;
  assert.deepEqual(
    listed.map((p) => p.number),
    [1],
  );
  assert.equal((await giteaPullRequest(d, { action: 'closed', number: 1, branch: 'pr-1', sha: prHead })).status, 202);
  await eventually(async () => ((await json(d, 'dev-pr-1', 'secretive')) === 404 ? true : undefined), 'the closed preview to answer 404');
  assert.deepEqual(await v1(d, '/namespaces/dev/previews'), []);
  assert.deepEqual(await answers(d, 'dev', 'main'), { version: 'main', key: 'k-1' }, 'production untouched');
  await d.stop('SIGTERM');
  const state = JSON.parse(await readFile(path.join(kept, 'state.json'), 'utf8')) as { previews?: object; namespaces: string[] };
  assert.deepEqual(state.previews ?? {}, {});
  assert.ok(!state.namespaces.includes('dev-pr-1'), `namespaces in state.json: ${state.namespaces.join(', ')}`);
});

test('--preview-schedules --preview-secrets inherit: the preview runs its jobs and gets the secrets', async () => {
  const d = await dev(['--preview-schedules', '--preview-secrets', 'inherit']);
  await answers(d, 'dev', 'main');
  assert.equal((await giteaPullRequest(d, { action: 'opened', number: 2, branch: 'pr-1', sha: prHead })).status, 202);
  assert.deepEqual(await answers(d, 'dev-pr-2', 'pr'), { version: 'pr', key: 'k-1' });
  await eventually(async () => ((await marks()).includes('pr') ? true : undefined), "the preview's job to run");
});
