// `sless dev --repo <plain folder>`: the working tree as it is on disk is served; after an edit, a
// sync asked for through /v1 (POST .../repositories/<repo-name>/sync) serves the new code.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { callFunction, eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

let folder: string;
let dev: DevProcess;

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-folder-'));
  await mkdir(path.join(folder, 'echo'));
  await writeFile(path.join(folder, 'echo/function.yaml'), 'runtime: python3.11\n');
  await writeFile(path.join(folder, 'echo/handler.py'), 'def handle(event):\n    return {"got": event, "v": 1}\n');
  dev = await startDevProcess({ repo: folder });
  await dev.waitForLog(/echo: ready at/);
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

test('a plain folder is served as it is on disk', async () => {
  const r = await callFunction(dev.url, 'echo', { method: 'POST', body: '{"a": 1}', headers: { 'content-type': 'application/json' } });
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.body), { got: { a: 1 }, v: 1 });
});

test('after an edit, a sync requested through /v1 serves the new code', async () => {
  await writeFile(path.join(folder, 'echo/handler.py'), 'def handle(event):\n    return {"got": event, "v": 2}\n');
  const res = await fetch(`${dev.url}/v1/namespaces/dev/repositories/local/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await dev.adminToken()}` },
  });
  assert.ok(res.status === 202 || res.status === 200, `sync answered ${res.status}`);
  await eventually(async () => {
    const r = await callFunction(dev.url, 'echo');
    return r.status === 200 && (JSON.parse(r.body) as { v: number }).v === 2 ? true : undefined;
  }, 'v2 to be served');
  const repo = (await (
    await fetch(`${dev.url}/v1/namespaces/dev/repositories/local`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } })
  ).json()) as { url: string; revision: string; functions: Array<{ name: string; code_hash?: string }> };
  assert.equal(repo.url, folder);
  assert.match(repo.revision, /^sha256:/);
  assert.equal(repo.functions[0]?.name, 'echo');
});
