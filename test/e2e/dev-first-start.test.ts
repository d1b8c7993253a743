// A new user's first start of `sless dev`: one progress line per function as it builds and when it
// serves (no JSON warning lines for calls that come too early), and one warning per function that
// asks for a runtime version this machine does not run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { callFunction, startDevProcess, type DevProcess } from './dev-harness.ts';

let folder: string;
let dev: DevProcess;
const python = spawnSync('python3', ['--version'], { encoding: 'utf8' });
const pythonVersion = /(\d+\.\d+)/.exec(`${python.stdout}${python.stderr}`)?.[1] ?? '';

async function fn(name: string, yaml: string): Promise<void> {
  await mkdir(path.join(folder, name));
  await writeFile(path.join(folder, name, 'function.yaml'), yaml);
  await writeFile(path.join(folder, name, 'handler.py'), `def handle(event):\n    return "${name}"\n`);
}

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-first-'));
  await fn('py312', 'runtime: python3.12\n');
  await fn('py311', 'runtime: python3.11\n');
  await fn('off', 'runtime: python3.11\nhttp: {enabled: false}\n');
  dev = await startDevProcess({ repo: folder });
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

test('each function prints that it builds, then where it serves', async () => {
  for (const name of ['py312', 'py311']) {
    await dev.waitForLog(new RegExp(` ${name}: ready at http://\\S+/fn/dev/${name}$`), { timeoutMs: 120_000 });
    const log = dev.log();
    const building = log.indexOf(`${name}: building`);
    assert.ok(building >= 0 && building < log.indexOf(`${name}: ready at`), log);
  }
});

test('a call that finds a function disabled or not ready yet gets its 503 without a warning line', async () => {
  const r = await callFunction(dev.url, 'off');
  assert.equal(r.status, 503);
  await new Promise((res) => setTimeout(res, 300));
  assert.doesNotMatch(dev.log(), / warn .*(not ready|http\.enabled: false)/);
});

test('a function asking for another Python than this machine runs gets one warning naming both', async () => {
  await dev.waitForLog(/ py312: ready at/, { timeoutMs: 120_000 });
  const warnings = (name: string, asked: string) => dev.log().split('\n').filter((l) => l.includes(`${name}: asks for ${asked}`));
  if (pythonVersion === '3.12') {
    assert.deepEqual(warnings('py312', 'python3.12'), []);
    assert.equal(warnings('py311', 'python3.11').length, 1);
    return;
  }
  const lines = warnings('py312', 'python3.12');
  assert.equal(lines.length, 1, dev.log());
  assert.match(lines[0] as string, new RegExp(`runs on Python ${pythonVersion.replace('.', '\\.')}\\.\\d+ \\(python3\\)`));
  if (pythonVersion === '3.11') assert.deepEqual(warnings('py311', 'python3.11'), []);
  // A restart of the process (a config change) does not warn again.
  await writeFile(path.join(folder, 'py312', 'function.yaml'), 'runtime: python3.12\nenv: {X: "1"}\n');
  const offset = dev.log().length;
  const res = await fetch(`${dev.url}/v1/namespaces/dev/repositories/local/sync`, { method: 'POST', headers: { authorization: `Bearer ${await dev.adminToken()}` } });
  assert.ok(res.ok, String(res.status));
  await dev.waitForLog(/ py312: ready at/, { fromOffset: offset, timeoutMs: 60_000 });
  assert.equal(warnings('py312', 'python3.12').length, 1);
});
