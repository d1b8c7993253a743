// Stopping `sless dev` is always clean, however it is started and stopped: SIGTERM to the real
// `npm start` process (what IDEs and process managers send; npm does not pass it on to a script's
// children) leaves no process behind, and a second `sless dev` on the same data dir refuses to run,
// naming the first one's pid. Meanwhile no function process listens beyond loopback.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { writeFiles } from '../helpers/git-server.ts';
import { isLoopback, listeningAddresses } from '../helpers/listening.ts';
import { callFunction, descendants, eventually, isAlive, startDevProcess } from './dev-harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const scratch = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-stop-'));
after(() => rm(scratch, { recursive: true, force: true }));
const functions = path.join(scratch, 'functions');
await writeFiles(functions, {
  'hello/function.yaml': 'runtime: nodejs20\n',
  'hello/handler.js': 'exports.handle = async () => ({ pid: process.pid });\n',
});

test('SIGTERM to `npm start` leaves no process; no function listens beyond loopback', { timeout: 180_000 }, async () => {
  const dataDir = path.join(scratch, 'npm-data');
  const npm = spawn('npm', ['start', '--', '--repo', functions, '--path', '', '--port', '0', '--data-dir', dataDir, '--poll-interval', '1h'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
  npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  try {
    const url = await eventually(() => /sless dev listening on (http:\/\/\S+)/.exec(out)?.[1], `sless dev to listen:\n${out}`, 120_000);
    const served = await eventually(async () => {
      const r = await callFunction(url, 'hello');
      return r.status === 200 ? (JSON.parse(r.body) as { pid: number }) : undefined;
    }, `hello to answer:\n${out}`, 120_000);
    const tree = await descendants(npm.pid as number);
    assert.ok(tree.includes(served.pid), 'the function process is part of npm start’s tree');
    for (const pid of tree) {
      const addresses = await listeningAddresses(pid);
      assert.ok(addresses.every(isLoopback), `pid ${pid} listens on ${addresses.join(', ')}`);
    }
    process.kill(npm.pid as number, 'SIGTERM');
    await exited;
    await eventually(() => tree.every((pid) => !isAlive(pid)) || undefined, `every process of npm start to end (left: ${tree.filter(isAlive).join(', ')})`, 30_000);
  } finally {
    for (const pid of await descendants(npm.pid as number).catch(() => [])) process.kill(pid, 'SIGKILL');
    if (npm.exitCode === null) npm.kill('SIGKILL');
  }
});

test('a second sless dev on the same data dir refuses, naming the first one’s pid', { timeout: 180_000 }, async () => {
  const first = await startDevProcess({ repo: functions, path: '' });
  try {
    const second = spawnSync(
      process.execPath,
      [path.join(root, 'bin/sless.js'), 'dev', '--repo', functions, '--port', '0', '--data-dir', first.dataDir, '--poll-interval', '1h'],
      { cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, SLESS_JWT_SECRET: first.jwtSecret } },
    );
    assert.equal(second.status, 1, second.stdout + second.stderr);
    assert.match(second.stderr, new RegExp(`another sless dev \\(pid ${first.pid}\\) is using the data dir`));
    assert.ok(isAlive(first.pid), 'the first one runs on');
    assert.equal(await first.stop(), 0);
  } finally {
    await first.dispose();
  }
});
