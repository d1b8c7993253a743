// `npm start -- --repo X` serves X's functions: the script passes `--repo . --path examples` before the
// user's flags, and a --repo given after them starts over, without the examples path. A watched path
// that is not there names the flag to fix (--path), not the FunctionRepository's spec.path.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { startDevProcess } from './dev-harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let folder: string;

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-npm-start-'));
  await mkdir(path.join(folder, 'mine'));
  await writeFile(path.join(folder, 'mine', 'function.yaml'), 'runtime: nodejs22\n');
  await writeFile(path.join(folder, 'mine', 'handler.js'), 'exports.handle = () => "mine";\n');
});
after(() => rm(folder, { recursive: true, force: true }));

/** Runs `npm start -- <args>` in its own process group; resolves with the line matching `re`, then stops it. */
async function npmStart(args: readonly string[], re: RegExp): Promise<{ line: string; output: string }> {
  const child = spawn('npm', ['start', '--', ...args], { cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start did not print ${re} within 120 s:\n${output}`)), 120_000);
      const onData = (d: Buffer) => {
        output += d.toString('utf8');
        const line = output.split('\n').find((l) => re.test(l));
        if (line !== undefined) {
          clearTimeout(timer);
          resolve({ line, output });
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', () => {
        clearTimeout(timer);
        reject(new Error(`npm start exited before printing ${re}:\n${output}`));
      });
    });
  } finally {
    // The group: npm and the sless dev it exec'd (its function processes stop with it).
    if (child.exitCode === null) process.kill(-(child.pid as number), 'SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
  }
}

test('npm start -- --repo X serves the functions of X, not of X/examples', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'sless-npm-start-data-'));
  try {
    const { line, output } = await npmStart(['--repo', folder, '--port', '0', '--data-dir', dataDir], /mine: ready at|sync of .* failed/);
    assert.match(line, /mine: ready at http:\/\/\S+\/fn\/dev\/mine$/, output);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

test('a --path that is not in the repository is named as the flag to fix', async () => {
  const dev = await startDevProcess({ repo: folder, path: 'nowhere' });
  try {
    const line = await dev.waitForLog(/sync of .* failed/);
    assert.match(line, /the watched path "nowhere" is not a folder in the repository.*; fix --path or/);
    assert.doesNotMatch(line, /spec\.path/);
  } finally {
    await dev.stop();
    await dev.dispose();
  }
});
