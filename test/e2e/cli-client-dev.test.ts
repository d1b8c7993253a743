// The client side of the CLI as a user runs it: `node bin/sless.js init/validate/get/describe/invoke/
// sync/logs` as child processes against a real `sless dev` serving a plain folder with real runtime
// processes.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { RUNTIME_CATALOG } from '../../src/build/runtime-catalog.ts';
import { eventually, startDevProcess, type DevProcess } from './dev-harness.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let folder: string;
let dev: DevProcess | undefined;
let env: Record<string, string>;

function sless(args: string[], cwd = folder): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(root, 'bin/sless.js'), ...args],
      { cwd, env: { ...process.env, ...env } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

before(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'sless-cli-dev-'));
  env = { XDG_CONFIG_HOME: path.join(folder, '.config') };
});

after(async () => {
  await dev?.dispose();
  await rm(folder, { recursive: true, force: true });
});

test('sless init writes a function for every runtime of the catalog that sless validate accepts', async () => {
  for (const runtime of Object.keys(RUNTIME_CATALOG)) {
    const name = `fn-${runtime.replace('.', '')}`;
    const r = await sless(['init', name, '--runtime', runtime, '--dir', `all/${name}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^created all/${name}/ \\(function.yaml, handler`));
  }
  const v = await sless(['validate', 'all']);
  assert.equal(v.code, 0, v.stderr);
  assert.equal(v.stdout, `${Object.keys(RUNTIME_CATALOG).length} functions valid\n`);
});

test('sless init refuses a folder that is not empty, an unknown runtime and a bad name, in one line each', async () => {
  await writeFile(path.join(folder, 'all/fn-nodejs20/extra.txt'), 'x');
  const taken = await sless(['init', 'fn-nodejs20', '--runtime', 'nodejs20', '--dir', 'all/fn-nodejs20']);
  assert.deepEqual(
    [taken.code, taken.stderr],
    [1, 'sless init: all/fn-nodejs20 already exists and is not empty; pick another --dir or remove it\n'],
  );
  const runtime = await sless(['init', 'x', '--runtime', 'ruby']);
  assert.equal(runtime.code, 1);
  assert.match(
    runtime.stderr,
    /^sless init: --runtime ruby is not a runtime sless knows; use one of python3.11, .*go1.23\n$/,
  );
  const name = await sless(['init', 'Bad_Name', '--runtime', 'nodejs20']);
  assert.equal(name.code, 1);
  assert.match(name.stderr, /^sless init: "Bad_Name" is not a DNS-1123 label.*; pick another NAME\n$/);
  const help = await sless(['init', '--help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: sless init NAME --runtime /);
});

test('init → sless dev serves it → get, describe, invoke round-trip JSON → edit, sync --wait serves the edit', async () => {
  assert.equal(
    (await sless(['init', 'hello-node', '--runtime', 'nodejs20', '--dir', 'fns/hello-node'])).code,
    0,
  );
  assert.equal(
    (await sless(['init', 'hello-py', '--runtime', 'python3.11', '--dir', 'fns/hello-py'])).code,
    0,
  );
  dev = await startDevProcess({ repo: path.join(folder, 'fns') });
  await dev.waitForLog(/hello-node: ready at/);
  await dev.waitForLog(/hello-py: ready at/);
  env = { ...env, SLESS_ENDPOINT: dev.url, SLESS_API_TOKEN: await dev.adminToken(), SLESS_NAMESPACE: 'dev' };

  const listed = await sless(['get', 'functions', '-o', 'json']);
  assert.equal(listed.code, 0, listed.stderr);
  const fns = JSON.parse(listed.stdout) as Array<{ name: string; phase: string }>;
  assert.deepEqual(fns.map((f) => [f.name, f.phase]).sort(), [
    ['hello-node', 'Ready'],
    ['hello-py', 'Ready'],
  ]);

  for (const name of ['hello-node', 'hello-py']) {
    const r = await sless(['invoke', name, '-d', '{"name": "sless", "list": [1, 2]}', '--path', '/greet']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      message: 'Hello, sless!',
      event: { name: 'sless', list: [1, 2] },
      path: '/greet',
    });
  }

  const described = await sless(['describe', 'function', 'hello-py']);
  assert.equal(described.code, 0, described.stderr);
  assert.match(described.stdout, /runtime: +python3.11/);
  assert.match(described.stdout, /phase: +Ready/);
  assert.match(described.stdout, /Invocations \(last 1\):\n.*\n {2}\S+ +POST +\/greet +200 /);

  const handler = path.join(folder, 'fns/hello-node/handler.js');
  await writeFile(
    handler,
    (await readFile(handler, 'utf8')).replace('event, path:', 'event, version: 2, path:'),
  );
  const synced = await sless(['sync', 'local', '--wait', '--timeout', '60s']);
  assert.equal(synced.code, 0, synced.stderr);
  assert.match(synced.stdout, /^synced local: revision sha256:[0-9a-f]{12}: 2 functions Ready\n$/);
  const after = await sless(['invoke', 'hello-node']);
  assert.deepEqual(JSON.parse(after.stdout), { message: 'Hello, world!', event: {}, version: 2, path: '/' });

  const repos = await sless(['get', 'repositories']);
  assert.match(repos.stdout, /^NAME +URL .*\nlocal +\//);
});

test('sless logs: what the function processes print, every replica, -f within a second; bad flags and unknown functions in one line', async () => {
  assert.ok(dev, 'the test above started sless dev');
  const dir = path.join(folder, 'fns/talker');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'function.yaml'), 'runtime: nodejs20\nentrypoint: handler.handle\nscale:\n  min: 2\n');
  await writeFile(
    path.join(dir, 'handler.js'),
    "exports.handle = async (event) => { console.log(`marker ${event.n} from ${process.pid}`); console.error('on stderr'); return { pid: process.pid }; };\n",
  );
  assert.equal((await sless(['sync', 'local', '--wait', '--timeout', '60s'])).code, 0);
  const pids = await eventually(async () => {
    const seen = new Set<number>();
    for (let i = 0; i < 6; i++) {
      const r = await sless(['invoke', 'talker', '-d', `{"n": ${i}}`]);
      seen.add((JSON.parse(r.stdout) as { pid: number }).pid);
    }
    return seen.size === 2 ? [...seen] : undefined;
  }, 'two replicas answering');
  const all = await sless(['logs', 'talker']);
  assert.equal(all.code, 0, all.stderr);
  for (const pid of pids) assert.match(all.stdout, new RegExp(`^\\[pid-${pid}\\] marker \\d from ${pid}$`, 'm'));
  assert.match(all.stdout, /^\[pid-\d+ stderr\] on stderr$/m);
  const tail = await sless(['logs', 'talker', '--tail', '1']);
  assert.equal(tail.stdout.trimEnd().split('\n').length, 1);

  // -f: a line printed after the command started shows up within a second.
  const follower = spawn(process.execPath, [path.join(root, 'bin/sless.js'), 'logs', 'talker', '-f', '--tail', '0'], { env: { ...process.env, ...env } });
  let out = '';
  follower.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  const call = async (n: number) =>
    assert.equal((await fetch(`${dev?.url}/fn/dev/talker`, { method: 'POST', body: `{"n": ${n}}`, headers: { 'content-type': 'application/json' } })).status, 200);
  // The command starts (tsx compiles the sources) and connects: the first line it shows says it reads.
  await eventually(async () => (await call(41), /marker 41 from/.test(out) || undefined), 'the follower to connect', 30_000);
  const calledAt = Date.now();
  await call(42);
  const seenAt = await eventually(() => (/marker 42 from/.test(out) ? Date.now() : undefined), 'the followed line', 5000);
  follower.kill();
  assert.ok(seenAt - calledAt < 1000, `followed line after ${seenAt - calledAt} ms`);

  const bad = await sless(['logs', 'talker', '--since', 'yesterday']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /^sless logs: GET \/v1\/namespaces\/dev\/functions\/talker\/logs\?since=yesterday answered 400: since must be a duration such as 30s, 10m, 2h or 1d.*\n$/);
  const missing = await sless(['logs', 'nope']);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /^sless logs: .* answered 404: .*nope.*\n$/);
  const help = await sless(['logs', '--help']);
  assert.match(help.stdout, /^usage: sless logs NAME \[-f\] \[--since 10m\] \[--tail N\]/);
});
