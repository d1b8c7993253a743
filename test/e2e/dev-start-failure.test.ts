// A function that cannot start says why in one look: the error line (Node's SyntaxError, Python's
// exception), at its repository path (not the prepared build folder's), in the log line and in the
// function's message on /v1 and the console.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startDevProcess, type DevProcess } from './dev-harness.ts';

let folder: string;
let dev: DevProcess;

async function fn(name: string, files: Record<string, string>): Promise<void> {
  await mkdir(path.join(folder, 'fns', name), { recursive: true });
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(folder, 'fns', name, file), text);
}

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-start-failure-'));
  await fn('node-syntax', { 'function.yaml': 'runtime: nodejs22\n', 'handler.js': 'exports.handle = () => {\n  return "x" +;\n};\n' });
  await fn('node-throws', { 'function.yaml': 'runtime: nodejs22\n', 'handler.js': 'const config = require("./config");\nexports.handle = () => config;\n', 'config.js': 'throw new Error("DATABASE_URL is not set");\n' });
  await fn('py-syntax', { 'function.yaml': 'runtime: python3.11\n', 'handler.py': 'def handle(event):\n    return (\n' });
  dev = await startDevProcess({ repo: folder });
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

async function failure(name: string): Promise<{ line: string; message: string }> {
  const line = await dev.waitForLog(new RegExp(` error dev/${name} failed: `), { timeoutMs: 120_000 });
  const res = await fetch(`${dev.url}/v1/namespaces/dev/functions/${name}`, { headers: { authorization: `Bearer ${await dev.adminToken()}` } });
  const message = ((await res.json()) as { message?: string }).message ?? '';
  // The log entry: its first line, and the message's other lines up to the next timestamped line.
  const rest = dev.log().slice(dev.log().indexOf(line) + line.length + 1).split('\n');
  const next = rest.findIndex((l) => /^\d\d:\d\d:\d\d\.\d{3} /.test(l));
  const more = next < 0 ? rest : rest.slice(0, next);
  return { line: [line, ...more].join('\n'), message };
}

test("a Node function's syntax error shows the SyntaxError line at the repository path", async () => {
  const { line, message } = await failure('node-syntax');
  for (const text of [line, message]) {
    assert.match(text, /SyntaxError: Unexpected token ';'/, text);
    assert.match(text, /fns\/node-syntax\/handler\.js:2/, text);
    assert.doesNotMatch(text, /builds\/|node:internal|server\.mjs/, text);
  }
});

test('a Node function that throws while loading shows the error and its own frames, not the loader’s', async () => {
  const { message } = await failure('node-throws');
  assert.match(message, /Error: DATABASE_URL is not set/);
  assert.match(message, /fns\/node-throws\/config\.js:1/);
  assert.doesNotMatch(message, /builds\/|node:internal|server\.mjs/);
});

test("a Python function's syntax error shows the exception at the repository path", async () => {
  const { line, message } = await failure('py-syntax');
  for (const text of [line, message]) {
    assert.match(text, /SyntaxError: '\(' was never closed/, text);
    assert.match(text, /File "fns\/py-syntax\/handler\.py", line 2/, text);
    assert.doesNotMatch(text, /builds\/|importlib|server\.py/, text);
  }
});
