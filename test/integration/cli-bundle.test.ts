// The compiled CLI as the image ships it (deploy/Dockerfile: `npm run build`, then bin/sless.js runs
// dist/main.js): scripts/bundle.mjs makes a dist/ that starts on its own, without node_modules (a
// controller that loaded ~2,000 modules one by one took seconds to start), and that still finds the
// files it reads beside its code (package.json, the console's templates and static files).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('the bundled CLI (npm run build)', { timeout: 180_000 }, () => {
  let dir = '';
  // A package folder like the image's /app, but with no node_modules: the bundle must not need them.
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'sless-bundle-'));
    await run(process.execPath, [path.join(repoRoot, 'scripts/bundle.mjs'), path.join(dir, 'dist')], { cwd: repoRoot });
    await cp(path.join(repoRoot, 'bin'), path.join(dir, 'bin'), { recursive: true });
    await cp(path.join(repoRoot, 'package.json'), path.join(dir, 'package.json'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function sless(...args: string[]): Promise<Outcome> {
    // Only PATH: no SLESS_* or KUBECONFIG of the machine running the test.
    const env = { PATH: process.env.PATH ?? '' };
    try {
      const { stdout, stderr } = await run(process.execPath, [path.join(dir, 'bin/sless.js'), ...args], { cwd: dir, env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const e = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
    }
  }

  it('is a handful of files in dist/ itself, beside the console templates and static files', async () => {
    const files = await readdir(path.join(dir, 'dist'));
    assert.ok(files.includes('main.js'));
    assert.ok(files.filter((f) => f.endsWith('.js')).length < 50, `dist/: ${files.join(', ')}`);
    assert.ok((await readdir(path.join(dir, 'dist/console/templates'))).some((f) => f.endsWith('.eta')));
    assert.ok((await readdir(path.join(dir, 'dist/console/static'))).includes('console.css'));
  });

  it('is ASCII only, so V8 keeps each chunk\'s source at one byte a character', async () => {
    // V8 holds a script's source for as long as its functions live (lazy compilation). One character past
    // ASCII anywhere, even in a comment esbuild kept, stores the whole chunk at two bytes a character:
    // the controller's 8 MB chunk took 16 MB of every controller's heap.
    const chunks = (await readdir(path.join(dir, 'dist'))).filter((f) => f.endsWith('.js'));
    for (const f of chunks) {
      const bytes = await readFile(path.join(dir, 'dist', f));
      const at = bytes.findIndex((b) => b > 0x7f);
      assert.equal(at, -1, `dist/${f} has a non-ASCII byte at ${at}: …${bytes.subarray(Math.max(0, at - 40), at + 10).toString('utf8')}`);
    }
  });

  it('is minified, every function and class keeping its name (stack traces, logs), under 6 MB', async () => {
    // V8 keeps every chunk's source in memory for as long as its functions live: fewer bytes, less heap.
    const chunks = (await readdir(path.join(dir, 'dist'))).filter((f) => f.endsWith('.js'));
    const sources = await Promise.all(chunks.map((f) => readFile(path.join(dir, 'dist', f), 'utf8')));
    const total = sources.reduce((a, s) => a + Buffer.byteLength(s), 0);
    assert.ok(total < 6_000_000, `dist/*.js: ${total} bytes`);
    const controller = sources.find((s) => s.includes('FunctionReconciler'));
    assert.ok(controller, 'a chunk names FunctionReconciler');
    for (const name of ['RepositoryReconciler', 'functionDeployment']) assert.ok(controller.includes(name), `the controller chunk names ${name}`);
  });

  it('prints its version from package.json', async () => {
    const { version } = (await import(path.join(repoRoot, 'package.json'), { with: { type: 'json' } })).default as { version: string };
    const out = await sless('--version');
    assert.equal(out.code, 0, out.stderr);
    assert.equal(out.stdout, `sless ${version}\n`);
  });

  it("lists the controller's settings", async () => {
    const out = await sless('controller', '--help');
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /SLESS_S3_BUCKET/);
  });

  it('loads the whole controller and stops at its first missing setting, exit code 2', async () => {
    const out = await sless('controller');
    assert.equal(out.code, 2, `stdout: ${out.stdout}\nstderr: ${out.stderr}`);
    assert.match(out.stderr, /^sless controller: missing setting SLESS_S3_BUCKET/);
  });
});
