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
  // More functions than a sync builds at once (4): the last ones wait for a turn.
  for (const name of ['q1', 'q2', 'q3', 'q4']) await fn(name, 'runtime: python3.11\n');
  dev = await startDevProcess({ repo: folder });
  early = callsUntilServed(['py312', 'py311', 'q1', 'q2', 'q3', 'q4'], ['off']);
});

let early: Promise<Map<string, string[]>>;

/**
 * From the moment dev listens, calls every function every 50 ms until it serves (or, for `disabled`,
 * answers its 503 for http.enabled: false); resolves with what each answered, in order, repeats left out.
 */
async function callsUntilServed(serving: readonly string[], disabled: readonly string[]): Promise<Map<string, string[]>> {
  const seen = new Map<string, string[]>([...serving, ...disabled].map((n) => [n, []]));
  const end = Date.now() + 120_000;
  const pending = new Set([...serving, ...disabled]);
  while (pending.size > 0 && Date.now() < end) {
    await Promise.all(
      [...pending].map(async (name) => {
        const r = await callFunction(dev.url, name);
        const answer = `${r.status} ${r.status === 200 ? '' : r.body}`;
        const list = seen.get(name) as string[];
        if (list.at(-1) !== answer) list.push(answer);
        if (r.status === 200 || (disabled.includes(name) && /http\.enabled: false/.test(r.body))) pending.delete(name);
      }),
    );
    await new Promise((res) => setTimeout(res, 50));
  }
  return seen;
}

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

test('from the first moment, a function of the repository answers 503 saying why until it serves, never 404', async () => {
  for (const [name, answers] of await early) {
    assert.deepEqual(answers.filter((a) => a.startsWith('404')), [], `${name} answered: ${answers.join(' → ')}`);
    const last = answers.at(-1) ?? '';
    assert.ok(name === 'off' ? last.startsWith('503') : last.startsWith('200'), `${name} answered: ${answers.join(' → ')}`);
    for (const a of answers.filter((x) => x.startsWith('503'))) assert.match(a, /"code":"function_(not_ready|disabled)"/, a);
  }
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
