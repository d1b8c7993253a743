// `sless dev --repo .` inside a git worktree (`git worktree add`), where `.git` is a file
// `gitdir: …` and the refs and objects live in the main repository's .git: dev serves what the
// worktree's checked-out branch (or detached commit) holds, as for a plain clone.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { silentLogger } from '../../src/platform/local/logger.ts';
import { openRepository } from '../../src/platform/local/open-repository.ts';
import { git, writeFiles } from '../helpers/git-server.ts';

const root = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-worktree-'));
after(() => rm(root, { recursive: true, force: true }));
async function commit(dir: string, msg: string): Promise<void> {
  await git(['add', '-A'], dir);
  await git(['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', msg], dir);
}

const main = path.join(root, 'main');
await git(['init', '-q', '-b', 'main', main]);
await writeFiles(main, { 'hello/function.yaml': 'name: hello\nruntime: nodejs20\n', 'hello/handler.js': 'exports.handle = async () => "main";\n' });
await commit(main, 'first');

async function read(repo: string, branch?: string) {
  const reader = await openRepository({ repo, branch, path: '', cacheDir: path.join(root, 'cache'), logger: silentLogger });
  const got = await reader.read();
  return { branch: reader.branch, fn: got.snapshot.functions.find((f) => f.name === 'hello') };
}

describe('sless dev --repo on a git worktree', () => {
  it('serves the worktree’s checked-out branch, with its own commits', async () => {
    const wt = path.join(root, 'wt-feature');
    await git(['worktree', 'add', '-q', '-b', 'feature', wt], main);
    await writeFiles(wt, { 'hello/handler.js': 'exports.handle = async () => "feature";\n' });
    await commit(wt, 'feature change');
    const onMain = await read(main);
    const onWt = await read(wt);
    assert.equal(onWt.branch, 'feature');
    assert.ok(onWt.fn?.codeHash, JSON.stringify(onWt.fn));
    assert.notEqual(onWt.fn.codeHash, onMain.fn?.codeHash, 'the worktree’s commit, not main’s');
    assert.equal((await read(wt, 'main')).fn?.codeHash, onMain.fn?.codeHash, '--branch still picks any branch of the repository');
  });

  it('serves a detached worktree’s commit', async () => {
    const wt = path.join(root, 'wt-detached');
    await git(['worktree', 'add', '-q', '--detach', wt, 'main'], main);
    await writeFiles(wt, { 'hello/handler.js': 'exports.handle = async () => "detached";\n' });
    await commit(wt, 'detached change');
    const got = await read(wt);
    assert.equal(got.branch, 'HEAD');
    assert.ok(got.fn?.codeHash);
    assert.notEqual(got.fn.codeHash, (await read(main)).fn?.codeHash);
  });
});
