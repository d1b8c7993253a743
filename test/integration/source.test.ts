// GitSource + SnapshotBuilder against a real git server (git http-backend) with real pushes.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { planChanges } from '../../src/plan/plan-changes.ts';
import type { Plan } from '../../src/plan/plan-changes.ts';
import { buildSnapshot, SnapshotBuilder } from '../../src/source/build-snapshot.ts';
import { hashFiles } from '../../src/source/code-hash.ts';
import { GitSource } from '../../src/source/git-source.ts';
import type { GitSourceOptions } from '../../src/source/git-source.ts';
import { GitSourceError } from '../../src/source/git-source-error.ts';
import { TargetPolicy } from '../../src/source/target-policy.ts';
import { readFunctionFiles } from '../../src/source/read-function-files.ts';
import type { FunctionEntry, Snapshot } from '../../src/source/types.ts';
import { WorkTree } from '../../src/source/work-tree.ts';
import { createRepo, deleteBranch, sharedGitServer, startGitServer, WorkClone } from '../helpers/git-server.ts';
import type { FileSpec, RepoAuth } from '../helpers/git-server.ts';

/** The git server of the tests listens on loopback. */
const LOCAL = TargetPolicy.anyTarget();

const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(path.join(os.tmpdir(), 'sless-src-'));
  cleanups.push(() => rm(d, { recursive: true, force: true }));
  return d;
}

/** A repository on the shared server with a working clone, a GitSource and a SnapshotBuilder. */
async function setup(name: string, options: { auth?: RepoAuth; source?: Partial<GitSourceOptions> } = {}) {
  const repo = await createRepo(sharedGitServer(), name, { auth: options.auth });
  const clone = await WorkClone.create(repo);
  cleanups.push(() => clone.dispose());
  const source = new GitSource({ url: repo.url, cacheDir: await tempDir(), targets: LOCAL, auth: options.auth, ...options.source });
  cleanups.push(() => source.close());
  const builder = new SnapshotBuilder();
  const push = async (files: Record<string, FileSpec>, opts: { force?: boolean } = {}) => {
    await clone.write(files);
    return clone.commitAndPush('change', opts);
  };
  // Every sync also checks that the long-lived builder's memo agrees with a fresh build.
  const sync = async (): Promise<Snapshot> => {
    const { tree } = await source.sync();
    const snapshot = await builder.build(tree);
    assert.deepEqual(snapshot, await buildSnapshot(tree), 'the memoised snapshot equals a fresh one');
    return snapshot;
  };
  return { repo, clone, source, push, sync };
}

const NODE = 'runtime: nodejs20\n';
const fn = (s: Snapshot, name: string): FunctionEntry => {
  const f = s.functions.find((x) => x.name === name);
  assert.ok(f, `function ${name} in ${JSON.stringify(s.functions.map((x) => x.name))}`);
  return f;
};
const names = (s: Snapshot) => s.functions.map((f) => f.name);
const planned = (plan: Plan) => ({
  added: plan.added.map((f) => f.name),
  rebuild: plan.rebuild.map((f) => f.name),
  redeploy: plan.redeploy.map((f) => f.name),
  removed: plan.removed.map((f) => f.name),
  errors: plan.errors.map((f) => f.name),
});

describe('syncing a repository over HTTP', () => {
  it('follows added, changed, deleted and renamed function folders', async () => {
    const { push, sync, clone } = await setup('lifecycle');
    const c1 = await push({ 'functions/a/function.yaml': NODE, 'functions/a/handler.js': '1', 'functions/b/function.yaml': NODE, 'functions/b/handler.js': 'b' });
    const s1 = await sync();
    assert.equal(s1.revision, c1);
    assert.deepEqual(names(s1), ['a', 'b']);

    await push({ 'functions/a/handler.js': '2', 'functions/c/function.yaml': NODE, 'functions/c/handler.js': 'c' });
    const s2 = await sync();
    assert.deepEqual(names(s2), ['a', 'b', 'c']);
    assert.deepEqual(planned(planChanges(s1, s2)), { added: ['c'], rebuild: ['a'], redeploy: [], removed: [], errors: [] });

    await clone.remove('functions/c');
    await clone.write({ 'functions/b/function.yaml': 'name: b\n' + NODE });
    await clone.rename('functions/b', 'moved/b');
    await clone.commitAndPush('delete c, move b');
    const s3 = await sync();
    assert.deepEqual(names(s3), ['a', 'b']);
    assert.equal(fn(s3, 'b').path, 'moved/b');
    assert.equal(fn(s3, 'b').codeHash, fn(s1, 'b').codeHash, 'a moved folder with the same code keeps its code_hash');
    const plan3 = planned(planChanges(s2, s3));
    assert.deepEqual(plan3.removed, ['c']);
    assert.deepEqual(plan3.rebuild, [], 'a moved folder is not rebuilt');
  });

  it('skips the fetch when the branch head has not moved', async () => {
    const { push, source } = await setup('nochange');
    const c1 = await push({ 'a/function.yaml': NODE });
    assert.equal((await source.sync()).fetched, true);
    const again = await source.sync();
    assert.equal(again.fetched, false);
    assert.equal(again.revision, c1);
  });

  it('an env-only change keeps the code_hash and plans a redeploy, no rebuild', async () => {
    const { push, sync } = await setup('envonly');
    await push({ 'a/function.yaml': `${NODE}env:\n  GREETING: hi\n`, 'a/handler.js': 'x' });
    const s1 = await sync();
    await push({ 'a/function.yaml': `${NODE}env:\n  GREETING: hello\n` });
    const s2 = await sync();
    assert.equal(fn(s2, 'a').codeHash, fn(s1, 'a').codeHash);
    assert.deepEqual(fn(s2, 'a').manifest?.env, { GREETING: 'hello' });
    assert.deepEqual(planned(planChanges(s1, s2)), { added: [], rebuild: [], redeploy: ['a'], removed: [], errors: [] });
  });

  it('a change under an include path changes exactly the functions that include it', async () => {
    const { push, sync } = await setup('include');
    await push({
      'fns/a/function.yaml': `${NODE}include: [lib/common]\n`,
      'fns/b/function.yaml': `${NODE}include: [lib/common/u.js, lib/other]\n`,
      'fns/c/function.yaml': `${NODE}include: [lib/other]\n`,
      'fns/d/function.yaml': NODE,
      'lib/common/u.js': '1',
      'lib/other/o.js': 'o',
    });
    const s1 = await sync();
    await push({ 'lib/common/u.js': '2' });
    const s2 = await sync();
    const changed = s2.functions.filter((f) => f.codeHash !== fn(s1, f.name).codeHash).map((f) => f.name);
    assert.deepEqual(changed, ['a', 'b']);
    assert.deepEqual(planned(planChanges(s1, s2)).rebuild, ['a', 'b']);
  });

  it('chmod +x changes the code_hash', async () => {
    const { push, sync, clone } = await setup('chmod');
    await push({ 'a/function.yaml': NODE, 'a/run.sh': '#!/bin/sh\n' });
    const s1 = await sync();
    await clone.chmod('a/run.sh', true);
    await clone.commitAndPush('chmod +x');
    const s2 = await sync();
    assert.notEqual(fn(s2, 'a').codeHash, fn(s1, 'a').codeHash);
    assert.deepEqual(planned(planChanges(s1, s2)).rebuild, ['a']);
  });

  it('a broken function.yaml breaks only its folder; the others keep syncing', async () => {
    const { push, sync } = await setup('broken');
    await push({ 'a/function.yaml': NODE, 'b/function.yaml': NODE });
    const s1 = await sync();
    await push({ 'b/function.yaml': 'runtime: nodejs20\n  bad: [indent\n', 'a/handler.js': 'new' });
    const s = await sync();
    assert.deepEqual(planned(planChanges(s1, s)), { added: [], rebuild: ['a'], redeploy: [], removed: [], errors: ['b'] });
    assert.ok(fn(s, 'a').codeHash);
    const b = fn(s, 'b');
    assert.equal(b.manifest, undefined);
    assert.equal(b.problems[0]?.file, 'b/function.yaml');
    assert.ok((b.problems[0]?.line ?? 0) > 0);
  });

  it('two folders with the same name are errors, the rest is fine', async () => {
    const { push, sync } = await setup('dupes');
    await push({ 'x/function.yaml': `name: twin\n${NODE}`, 'y/function.yaml': `name: twin\n${NODE}`, 'z/function.yaml': NODE });
    const s = await sync();
    const twins = s.functions.filter((f) => f.name === 'twin');
    assert.equal(twins.length, 2);
    for (const t of twins) assert.ok(t.problems.length > 0 && !t.manifest);
    assert.ok(fn(s, 'z').codeHash);
  });

  it('follows a force-push to a rewritten history', async () => {
    const { push, sync, clone } = await setup('force');
    await push({ 'a/function.yaml': NODE, 'a/h.js': '1' });
    await push({ 'a/h.js': '2' });
    await sync();
    await clone.run('reset', '--hard', 'HEAD~1');
    const rewritten = await push({ 'a/h.js': '3', 'b/function.yaml': NODE }, { force: true });
    const s = await sync();
    assert.equal(s.revision, rewritten);
    assert.deepEqual(names(s), ['a', 'b']);
  });

  it('gives the same code_hash from the git tree, the working tree and hashFiles', async () => {
    const { push, source, clone } = await setup('same-hash');
    await push({
      'f/function.yaml': `${NODE}include: [shared]\nignore: ["*.md"]\n`,
      'f/handler.js': 'module.exports.handle = () => 1;\n',
      'f/bin/run.sh': { content: '#!/bin/sh\n', mode: 'exec' },
      'f/link.js': { content: 'handler.js', mode: 'symlink' },
      'f/README.md': 'ignored',
      'f/.slessignore': 'tmp/\n',
      'f/tmp/x': 'ignored',
      'shared/s.js': 's',
    });
    const { tree } = await source.sync();
    const fromGit = fn(await new SnapshotBuilder().build(tree), 'f');
    const fromDisk = fn(await new SnapshotBuilder().build(new WorkTree(clone.dir)), 'f');
    const files = [];
    for await (const file of readFunctionFiles(tree, fromGit)) files.push(file);
    assert.ok(fromGit.codeHash);
    assert.equal(fromDisk.codeHash, fromGit.codeHash);
    assert.equal(hashFiles(files, fromGit.manifest?.ignore), fromGit.codeHash);
  });

  it('serialises concurrent syncs of one cache', async () => {
    const { push, source } = await setup('concurrent');
    const c1 = await push({ 'a/function.yaml': NODE });
    const results = await Promise.all([source.sync(), source.sync(), source.sync()]);
    assert.deepEqual(
      results.map((r) => r.revision),
      [c1, c1, c1],
    );
  });
});

describe('sync failures are typed errors that name the repository, never the credentials', () => {
  const expectError = async (p: Promise<unknown>, reason: string, url: string, secret?: string) => {
    const err = await p.then(
      () => assert.fail('sync should have failed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof GitSourceError, String(err));
    assert.equal(err.reason, reason, err.message);
    assert.ok(err.message.includes(url), err.message);
    if (secret) assert.ok(!err.message.includes(secret), err.message);
    return err;
  };

  it('wrong token: auth; the right token or user+password: fine', async () => {
    const auth = { token: 'right-token-123' };
    const { push, repo, source } = await setup('token', { auth });
    await push({ 'a/function.yaml': NODE });
    assert.ok((await source.sync()).revision);
    const wrong = new GitSource({ url: repo.url, cacheDir: await tempDir(), targets: LOCAL, auth: { token: 'wrong-token-456' } });
    cleanups.push(() => wrong.close());
    await expectError(wrong.sync(), 'auth', repo.url, 'wrong-token-456');
    const none = new GitSource({ url: repo.url, cacheDir: await tempDir(), targets: LOCAL });
    cleanups.push(() => none.close());
    await expectError(none.sync(), 'auth', repo.url);
  });

  it('basic auth, also from credentials in the URL, which never show up in errors', async () => {
    const auth = { username: 'alice', password: 'pw-789' };
    const { push, repo } = await setup('basic', { auth });
    await push({ 'a/function.yaml': NODE });
    const inUrl = new GitSource({ url: repo.pushUrl, cacheDir: await tempDir(), targets: LOCAL });
    cleanups.push(() => inUrl.close());
    assert.ok((await inUrl.sync()).revision);
    const badUrl = new URL(repo.url);
    badUrl.username = 'alice';
    badUrl.password = 'nope-000';
    const bad = new GitSource({ url: badUrl.toString(), cacheDir: await tempDir(), targets: LOCAL });
    cleanups.push(() => bad.close());
    await expectError(bad.sync(), 'auth', repo.url, 'nope-000');
  });

  it('deleted branch: branch-not-found', async () => {
    const { push, repo, source } = await setup('delbranch');
    await push({ 'a/function.yaml': NODE });
    await source.sync();
    await deleteBranch(repo, 'main');
    await expectError(source.sync(), 'branch-not-found', repo.url);
  });

  it('a URL that is not a git repository: not-git; a missing repository: not-found', async () => {
    const { url } = sharedGitServer();
    const page = new GitSource({ url: `${url}/just-a-web-page`, cacheDir: await tempDir(), targets: LOCAL });
    cleanups.push(() => page.close());
    await expectError(page.sync(), 'not-git', `${url}/just-a-web-page`);
    const missing = new GitSource({ url: `${url}/no-such-repo.git`, cacheDir: await tempDir(), targets: LOCAL });
    cleanups.push(() => missing.close());
    await expectError(missing.sync(), 'not-found', `${url}/no-such-repo.git`);
  });

  it('server down: unreachable (retryable), and syncing recovers when it is back', async () => {
    const server = await startGitServer();
    cleanups.push(() => rm(server.root, { recursive: true, force: true }));
    const repo = await createRepo(server, 'down');
    const clone = await WorkClone.create(repo);
    cleanups.push(() => clone.dispose());
    await clone.write({ 'a/function.yaml': NODE });
    const c1 = await clone.commitAndPush();
    const source = new GitSource({ url: repo.url, cacheDir: await tempDir(), targets: LOCAL });
    cleanups.push(() => source.close());
    assert.equal((await source.sync()).revision, c1);
    const port = Number(new URL(server.url).port);
    await server.stop();
    const err = await expectError(source.sync(), 'unreachable', repo.url);
    assert.equal(err.retryable, true);
    const again = await startGitServer({ root: server.root, port });
    cleanups.push(() => again.stop());
    assert.equal((await source.sync()).revision, c1);
  });
});
