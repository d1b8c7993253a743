// Revisions, rollback and pinning in `sless dev` (issue 33, docs/rollback.md), as a user runs them: two
// versions go live, `sless rollback` serves the first again at once with no build, a third version
// pushed while pinned is prepared but not served (also after a restart of sless dev), and `--undo`
// serves the folder's own version again. The real CLI (node bin/sless.js) against a real sless dev.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { writeZip } from '../../src/http/write-zip.ts';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let folder: string;
let dataDir: string;
let dev: DevProcess | undefined;
let env: Record<string, string> = {};

function sless(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(root, 'bin/sless.js'), ...args], { cwd: folder, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The function's code answering `version` (env GREETING makes config part of a revision too). */
async function writeVersion(version: number): Promise<void> {
  await writeFile(path.join(folder, 'fns/flip/handler.js'), `exports.handle = async () => ({ version: ${version}, greeting: process.env.GREETING });\n`);
}

async function served(): Promise<unknown> {
  const r = await callFunction(dev?.url ?? '', 'flip');
  assert.equal(r.status, 200, r.body);
  return (JSON.parse(r.body) as { version: number }).version;
}

async function startDev(): Promise<void> {
  dev = await startDevProcess({ repo: path.join(folder, 'fns'), dataDir });
  env = { XDG_CONFIG_HOME: path.join(folder, '.config'), SLESS_ENDPOINT: dev.url, SLESS_API_TOKEN: await dev.adminToken(), SLESS_NAMESPACE: 'dev' };
}

type Revision = { revision: number; code_hash: string; commit?: string; live_from: string; live_until: string | null; image: string };
async function revisions(): Promise<Revision[]> {
  const r = await sless(['get', 'revisions', 'flip', '-o', 'json']);
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as Revision[];
}
const liveNumber = async () => (await revisions()).find((r) => r.live_until === null)?.revision;

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-rollback-dev-'));
  dataDir = path.join(folder, 'data');
  await mkdir(path.join(folder, 'fns/flip'), { recursive: true });
  await writeFile(path.join(folder, 'fns/flip/function.yaml'), 'runtime: nodejs20\nentrypoint: handler.handle\nenv: {GREETING: one}\n');
  await writeVersion(1);
});

after(async () => {
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

test('two versions go live as revisions 1 and 2; rollback serves 1 at once with no build and pins it', async (t) => {
  await startDev();
  await dev?.waitForLog(/flip: ready at/);
  assert.equal(await served(), 1);
  await writeVersion(2);
  const synced = await sless(['sync', 'local', '--wait', '--timeout', '60s']);
  assert.equal(synced.code, 0, synced.stderr);
  assert.equal(await served(), 2);
  const revs = await revisions();
  assert.deepEqual(
    revs.map((r) => [r.revision, r.live_until === null]),
    [
      [1, false],
      [2, true],
    ],
  );
  assert.match(revs[0]?.image ?? '', /^local:[0-9a-f]+$/);

  const offset = dev?.log().length ?? 0;
  const rolled = await sless(['rollback', 'flip']);
  assert.equal(rolled.code, 0, rolled.stderr);
  // From the request to revision 1 serving, as the command measures it (the CLI's own start is not part of it).
  const tookMs = Number(/after ([0-9.]+) s/.exec(rolled.stdout)?.[1]) * 1000;
  assert.match(rolled.stdout, /^flip: serving revision 1 \(commit sha256:[0-9a-f]{12}\) after [0-9.]+ s; pinned: new versions build but wait \(sless rollback flip --undo\)\n$/);
  // Served by the time the command answers: no build, the kept folder starts.
  assert.equal(await served(), 1);
  t.diagnostic(`rollback: request → revision 1 serving ${tookMs} ms`);
  assert.ok(tookMs < 5_000, `rollback took ${tookMs} ms`);
  assert.doesNotMatch(dev?.log().slice(offset) ?? '', /building|compiling/);

  const fn = JSON.parse((await sless(['get', 'functions', 'flip', '-o', 'json'])).stdout) as { pinned: { revision: number } | null; message: string };
  assert.equal(fn.pinned?.revision, 1);
  assert.match(fn.message, /^serving revision 1 \(commit sha256:[0-9a-f]{12}\); git is ahead: push a fix or undo the rollback$/);
  const described = await sless(['describe', 'function', 'flip']);
  assert.match(described.stdout, /pinned: +\{"revision":1,"since":"/);
  assert.match(described.stdout, /Revisions \(2 kept\):\n +REVISION +CODE-HASH/);
  assert.equal(await liveNumber(), 1);
});

test('a version pushed while pinned builds but is not served, also after a restart of sless dev', async () => {
  await writeVersion(3);
  await writeFile(path.join(folder, 'fns/flip/function.yaml'), 'runtime: nodejs20\nentrypoint: handler.handle\nenv: {GREETING: three}\n');
  const offset = dev?.log().length ?? 0;
  const synced = await sless(['sync', 'local', '--wait', '--timeout', '60s']);
  assert.equal(synced.code, 0, synced.stderr);
  await dev?.waitForLog(/flip: new version built; not live while pinned to revision 1/, { fromOffset: offset });
  assert.equal(await served(), 1);
  assert.equal(await liveNumber(), 1);

  assert.equal(await dev?.stop('SIGTERM'), 0);
  await startDev();
  await dev?.waitForLog(/dev\/flip: serving revision 1 \(pinned by a rollback\)/);
  assert.equal(await served(), 1);
  const fn = JSON.parse((await sless(['get', 'functions', 'flip', '-o', 'json'])).stdout) as { pinned: { revision: number } | null };
  assert.equal(fn.pinned?.revision, 1);
});

test('--undo serves the folder’s own version (prepared while pinned) as revision 3', async () => {
  const offset = dev?.log().length ?? 0;
  const undone = await sless(['rollback', 'flip', '--undo']);
  assert.equal(undone.code, 0, undone.stderr);
  assert.match(undone.stdout, /^flip: rollback undone; serving its own version, revision 3 \(commit sha256:[0-9a-f]{12}\), after [0-9.]+ s\n$/);
  const answer = await callFunction(dev?.url ?? '', 'flip');
  assert.deepEqual(JSON.parse(answer.body), { version: 3, greeting: 'three' });
  assert.doesNotMatch(dev?.log().slice(offset) ?? '', /building|compiling/);
  const revs = await revisions();
  assert.deepEqual(
    revs.map((r) => [r.revision, r.live_until === null]),
    [
      [1, false],
      [2, false],
      [3, true],
    ],
  );
  const fn = JSON.parse((await sless(['get', 'functions', 'flip', '-o', 'json'])).stdout) as { pinned: unknown; message?: string };
  assert.equal(fn.pinned, null);
  // Rolling back to a named revision (2, whose folder was kept) works the same way.
  const to2 = await sless(['rollback', 'flip', '--to', '2']);
  assert.equal(to2.code, 0, to2.stderr);
  assert.equal(await served(), 2);
  assert.equal((await sless(['rollback', 'flip', '--undo'])).code, 0);
  assert.equal(await served(), 3);
});

test('a function made through /v1 rolls back the same way: an upload while pinned is prepared, not served', async () => {
  const v1 = (method: string, url: string, body?: Buffer | object) =>
    fetch(`${dev?.url}/v1/namespaces/dev/functions${url}`, {
      method,
      headers: {
        authorization: `Bearer ${env.SLESS_API_TOKEN}`,
        ...(body === undefined ? {} : { 'content-type': Buffer.isBuffer(body) ? 'application/zip' : 'application/json' }),
      },
      ...(body === undefined ? {} : { body: Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body) }),
    });
  const upload = async (v: number) => {
    const zip = writeZip([{ path: 'handler.js', mode: '100644', content: Buffer.from(`exports.handle = async () => ({ version: ${v} });\n`) }]);
    assert.equal((await v1('POST', '/api-fn/upload', zip)).status, 200);
  };
  const apiServed = async () => (JSON.parse((await callFunction(dev?.url ?? '', 'api-fn')).body) as { version?: number }).version;
  assert.equal((await v1('POST', '', { name: 'api-fn', runtime: 'nodejs20' })).status, 201);
  await upload(1);
  await eventually(async () => ((await apiServed().catch(() => undefined)) === 1 ? true : undefined), 'api-fn v1', 60_000);
  await upload(2);
  await eventually(async () => ((await apiServed()) === 2 ? true : undefined), 'api-fn v2', 60_000);
  const rolled = await v1('POST', '/api-fn/rollback', {});
  assert.equal(rolled.status, 200);
  const body = (await rolled.json()) as { pinned: { revision: number }; message: string };
  assert.equal(body.pinned.revision, 1);
  assert.equal(body.message, 'serving revision 1; newer code and settings wait: upload a fix or undo the rollback');
  assert.equal(await apiServed(), 1);
  await upload(3);
  await dev?.waitForLog(/dev\/api-fn: new version built; not live while pinned to revision 1/);
  assert.equal(await apiServed(), 1);
  assert.equal((await v1('DELETE', '/api-fn/rollback')).status, 200);
  assert.equal(await apiServed(), 3);
});

test('errors are one line with exit 1; --help explains', async () => {
  const missing = await sless(['rollback', 'flip', '--to', '9']);
  assert.deepEqual(
    [missing.code, missing.stderr],
    [1, 'sless rollback: POST /v1/namespaces/dev/functions/flip/rollback answered 400: function flip has no revision 9; its kept revisions are 1, 2, 3\n'],
  );
  const bad = await sless(['rollback', 'flip', '--to', 'x']);
  assert.deepEqual([bad.code, bad.stderr], [1, 'sless rollback: --to x is not a revision number; see sless get revisions NAME\n']);
  const both = await sless(['rollback', 'flip', '--to', '1', '--undo']);
  assert.equal(both.code, 1);
  assert.match(both.stderr, /^sless rollback: --to and --undo exclude each other; usage: sless rollback NAME/);
  const unknown = await sless(['rollback', 'nope']);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /^sless rollback: POST \/v1\/namespaces\/dev\/functions\/nope\/rollback answered 404: .*\n$/);
  const help = await sless(['rollback', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: sless rollback NAME \[--to REVISION \| --undo\]/);
});
