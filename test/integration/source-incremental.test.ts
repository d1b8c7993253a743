// The incremental git paths against a real git server (git http-backend) behind a proxy that counts
// requests: a head named by a webhook costs a fetch POST and an ls-refs POST sent beside it (no ref
// advertisement, no `git fetch`), a late delivery never moves the cache back, a head not on the branch
// is never taken as the branch, and a second process on the same cache folder (a restarted
// controller) fetches only what was pushed meanwhile.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildSnapshot } from '../../src/source/build-snapshot.ts';
import { GitSource } from '../../src/source/git-source.ts';
import { TargetPolicy } from '../../src/source/target-policy.ts';
import { countingGitProxy, type CountingGitProxy } from '../helpers/counting-git-proxy.ts';
import { createRepo, deleteBranch, git, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import type { TestRepo } from '../helpers/git-server.ts';

const execFileP = promisify(execFile);
const LOCAL = TargetPolicy.anyTarget();
const NODE = 'runtime: nodejs20\n';
const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function packBytes(gitdir: string): Promise<number> {
  const dir = path.join(gitdir, 'objects', 'pack');
  const sizes = await Promise.all((await readdir(dir)).filter((f) => f.endsWith('.pack')).map(async (f) => (await stat(path.join(dir, f))).size));
  return sizes.reduce((a, b) => a + b, 0);
}

describe('incremental fetches into the git cache (git command line present)', () => {
  let proxy: CountingGitProxy;
  let repo: TestRepo;
  let clone: WorkClone;
  let cacheDir: string;
  let url: string;
  const push = async (files: Record<string, string>) => {
    await clone.write(files);
    return clone.commitAndPush('change');
  };

  before(async () => {
    proxy = await countingGitProxy();
    cleanups.push(() => proxy.close());
    repo = await createRepo(sharedGitServer(), 'incremental');
    clone = await WorkClone.create(repo);
    cleanups.push(() => clone.dispose());
    cacheDir = await mkdtemp(path.join(os.tmpdir(), 'sless-incr-'));
    cleanups.push(() => rm(cacheDir, { recursive: true, force: true }));
    url = `${proxy.url}${new URL(repo.url).pathname}`;
  });

  it('a head named by a webhook, pushed on top of the cached one: a fetch POST and an ls-refs POST, the same code_hash as a fresh clone', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 20; i++) Object.assign(files, { [`f${i}/function.yaml`]: NODE, [`f${i}/handler.js`]: `// ${randomBytes(3000).toString('base64')}\n` });
    await push(files);
    const source = new GitSource({ url, cacheDir, targets: LOCAL });
    cleanups.push(() => source.close());
    await source.sync();
    const c2 = await push({ 'f3/handler.js': 'changed\n' });
    proxy.seen.length = 0;
    const hinted = await source.sync({ head: c2 });
    assert.equal(hinted.revision, c2);
    assert.equal(hinted.fetched, true);
    assert.deepEqual(proxy.seen, ['POST /R/git-upload-pack', 'POST /R/git-upload-pack']);
    const fresh = new GitSource({ url, cacheDir: await mkdtemp(path.join(os.tmpdir(), 'sless-incr-fresh-')), targets: LOCAL });
    cleanups.push(() => fresh.close());
    assert.deepEqual(await buildSnapshot(hinted.tree), await buildSnapshot((await fresh.sync()).tree));
    // The cache stays a sound shallow repository for git itself.
    await git(['--git-dir', source.gitdir, 'fsck', '--connectivity-only', '--no-dangling']);
    assert.equal((await git(['--git-dir', source.gitdir, 'rev-parse', 'refs/heads/main'])).trim(), c2);
    // The fetched (thin) pack was completed and indexed in this process: git verifies every pack.
    const packDir = path.join(source.gitdir, 'objects', 'pack');
    const packFiles = await readdir(packDir);
    assert.equal(packFiles.filter((f) => f.endsWith('.idx')).length, 2);
    assert.deepEqual(packFiles.filter((f) => f.startsWith('tmp_')), []);
    for (const idx of packFiles.filter((f) => f.endsWith('.idx'))) await git(['--git-dir', source.gitdir, 'verify-pack', path.join(packDir, idx)]);
  });

  it('a polled change fetches in-process after ls-remote; a late webhook naming an older head does not move the cache back', async () => {
    const source = new GitSource({ url, cacheDir, targets: LOCAL });
    cleanups.push(() => source.close());
    const c3 = await push({ 'f4/handler.js': 'three\n' });
    const c4 = await push({ 'f5/handler.js': 'four\n' });
    proxy.seen.length = 0;
    assert.equal((await source.sync()).revision, c4);
    assert.deepEqual(proxy.seen, ['GET /R/info/refs', 'POST /R/git-upload-pack']);
    // c3 was never fetched (c4 came in one step): a delivery for it arrives late. The tip is asked
    // (ls-refs) and wins.
    proxy.seen.length = 0;
    const late = await source.sync({ head: c3 });
    assert.equal(late.revision, c4);
    assert.deepEqual(proxy.seen.slice(0, 2), ['POST /R/git-upload-pack', 'POST /R/git-upload-pack']);
    // Two commits pushed at once: the named head's parent is not the cached head; ls-refs confirms it.
    await push({ 'f4/handler.js': 'three again\n' });
    const c5 = await push({ 'f5/handler.js': 'four again\n' });
    proxy.seen.length = 0;
    assert.deepEqual([(await source.sync({ head: c5 })).revision, proxy.seen], [c5, ['POST /R/git-upload-pack', 'POST /R/git-upload-pack']]);
  });

  it('a named head that is a child of the cached head but was pushed to another branch (then deleted) is not taken as the branch', async () => {
    const source = new GitSource({ url, cacheDir, targets: LOCAL });
    cleanups.push(() => source.close());
    const main = (await source.sync()).revision;
    // A commit on top of main's head, pushed to another branch only, which is then deleted (the
    // server keeps the object): a late, replayed or forged delivery "for main" names it.
    await clone.write({ 'f6/handler.js': 'not on main\n' });
    const stray = await clone.commitAndPush('elsewhere', { branch: 'elsewhere' });
    await deleteBranch(repo, 'elsewhere');
    await clone.run('reset', '--hard', main);
    const result = await source.sync({ head: stray });
    assert.equal(result.revision, main, "the branch tip decides main's revision, never the hint");
    assert.equal((await git(['--git-dir', source.gitdir, 'rev-parse', 'refs/heads/main'])).trim(), main);
  });

  it('a second process on the same cache folder (a restarted controller) fetches only the new objects', async () => {
    const before = await packBytes(path.join(cacheDir, (await readdir(cacheDir)).find((d) => d.endsWith('.git'))!));
    const c5 = await push({ 'f6/handler.js': 'five\n' });
    const child = (head?: string) =>
      execFileP(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'git-cache-child.ts'), url, cacheDir, ...(head ? [head] : [])]).then(
        (r) => JSON.parse(r.stdout) as { revision: string; fetched: boolean; hashes: Record<string, string> },
      );
    const first = await child();
    assert.equal(first.revision, c5);
    assert.equal(first.fetched, true);
    const gitdir = path.join(cacheDir, (await readdir(cacheDir)).find((d) => d.endsWith('.git'))!);
    const grown = (await packBytes(gitdir)) - before;
    assert.ok(grown > 0 && grown < before / 10, `the restarted process fetched ${grown} bytes beside a ${before}-byte cache`);
    const c6 = await push({ 'f7/handler.js': 'six\n' });
    proxy.seen.length = 0;
    const hinted = await child(c6);
    assert.equal(hinted.revision, c6);
    assert.deepEqual(proxy.seen, ['POST /R/git-upload-pack', 'POST /R/git-upload-pack']);
    assert.equal(hinted.hashes.f3, first.hashes.f3);
    assert.notEqual(hinted.hashes.f7, first.hashes.f7);
  });
});
