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
import {
  createRepo,
  deleteBranch,
  sharedGitServer,
  startGitServer,
  WorkClone,
} from '../helpers/git-server.ts';
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
  const source = new GitSource({
    url: repo.url,
    targets: LOCAL,
    cacheDir: await tempDir(),
    auth: options.auth,
    ...options.source,
  });
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

// Every behaviour holds both with the git command line (the fast path) and with isomorphic-git alone.
for (const [mode, gitCli] of [
  ['git CLI', true],
  ['isomorphic-git only', false],
] as const) {
  const setupIn = (name: string, options: { auth?: RepoAuth; source?: Partial<GitSourceOptions> } = {}) =>
    setup(`${name}${gitCli ? '' : '-iso'}`, { ...options, source: { gitCli, ...options.source } });

  describe(`syncing a repository over HTTP (${mode})`, () => {
    it('follows added, changed, deleted and renamed function folders', async () => {
      const { push, sync, clone } = await setupIn('lifecycle');
      const c1 = await push({
        'functions/a/function.yaml': NODE,
        'functions/a/handler.js': '1',
        'functions/b/function.yaml': NODE,
        'functions/b/handler.js': 'b',
      });
      const s1 = await sync();
      assert.equal(s1.revision, c1);
      assert.deepEqual(names(s1), ['a', 'b']);

      await push({
        'functions/a/handler.js': '2',
        'functions/c/function.yaml': NODE,
        'functions/c/handler.js': 'c',
      });
      const s2 = await sync();
      assert.deepEqual(names(s2), ['a', 'b', 'c']);
      assert.deepEqual(planned(planChanges(s1, s2)), {
        added: ['c'],
        rebuild: ['a'],
        redeploy: [],
        removed: [],
        errors: [],
      });

      await clone.remove('functions/c');
      await clone.write({ 'functions/b/function.yaml': 'name: b\n' + NODE });
      await clone.rename('functions/b', 'moved/b');
      await clone.commitAndPush('delete c, move b');
      const s3 = await sync();
      assert.deepEqual(names(s3), ['a', 'b']);
      assert.equal(fn(s3, 'b').path, 'moved/b');
      assert.equal(
        fn(s3, 'b').codeHash,
        fn(s1, 'b').codeHash,
        'a moved folder with the same code keeps its code_hash',
      );
      const plan3 = planned(planChanges(s2, s3));
      assert.deepEqual(plan3.removed, ['c']);
      assert.deepEqual(plan3.rebuild, [], 'a moved folder is not rebuilt');
    });

    it('skips the fetch when the branch head has not moved', async () => {
      const { push, source } = await setupIn('nochange');
      const c1 = await push({ 'a/function.yaml': NODE });
      assert.equal((await source.sync()).fetched, true);
      const again = await source.sync();
      assert.equal(again.fetched, false);
      assert.equal(again.revision, c1);
    });

    it('an env-only change keeps the code_hash and plans a redeploy, no rebuild', async () => {
      const { push, sync } = await setupIn('envonly');
      await push({ 'a/function.yaml': `${NODE}env:\n  GREETING: hi\n`, 'a/handler.js': 'x' });
      const s1 = await sync();
      await push({ 'a/function.yaml': `${NODE}env:\n  GREETING: hello\n` });
      const s2 = await sync();
      assert.equal(fn(s2, 'a').codeHash, fn(s1, 'a').codeHash);
      assert.deepEqual(fn(s2, 'a').manifest?.env, { GREETING: 'hello' });
      assert.deepEqual(planned(planChanges(s1, s2)), {
        added: [],
        rebuild: [],
        redeploy: ['a'],
        removed: [],
        errors: [],
      });
    });

    it('a change under an include path changes exactly the functions that include it', async () => {
      const { push, sync } = await setupIn('include');
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
      const { push, sync, clone } = await setupIn('chmod');
      await push({ 'a/function.yaml': NODE, 'a/run.sh': '#!/bin/sh\n' });
      const s1 = await sync();
      await clone.chmod('a/run.sh', true);
      await clone.commitAndPush('chmod +x');
      const s2 = await sync();
      assert.notEqual(fn(s2, 'a').codeHash, fn(s1, 'a').codeHash);
      assert.deepEqual(planned(planChanges(s1, s2)).rebuild, ['a']);
    });

    it('a broken function.yaml breaks only its folder; the others keep syncing', async () => {
      const { push, sync } = await setupIn('broken');
      await push({ 'a/function.yaml': NODE, 'b/function.yaml': NODE });
      const s1 = await sync();
      await push({ 'b/function.yaml': 'runtime: nodejs20\n  bad: [indent\n', 'a/handler.js': 'new' });
      const s = await sync();
      assert.deepEqual(planned(planChanges(s1, s)), {
        added: [],
        rebuild: ['a'],
        redeploy: [],
        removed: [],
        errors: ['b'],
      });
      assert.ok(fn(s, 'a').codeHash);
      const b = fn(s, 'b');
      assert.equal(b.manifest, undefined);
      assert.equal(b.problems[0]?.file, 'b/function.yaml');
      assert.ok((b.problems[0]?.line ?? 0) > 0);
    });

    it('two folders with the same name are errors, the rest is fine', async () => {
      const { push, sync } = await setupIn('dupes');
      await push({
        'x/function.yaml': `name: twin\n${NODE}`,
        'y/function.yaml': `name: twin\n${NODE}`,
        'z/function.yaml': NODE,
      });
      const s = await sync();
      const twins = s.functions.filter((f) => f.name === 'twin');
      assert.equal(twins.length, 2);
      for (const t of twins) assert.ok(t.problems.length > 0 && !t.manifest);
      assert.ok(fn(s, 'z').codeHash);
    });

    it('follows a force-push to a rewritten history', async () => {
      const { push, sync, clone } = await setupIn('force');
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
      const { push, source, clone } = await setupIn('same-hash');
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
      const { push, source } = await setupIn('concurrent');
      const c1 = await push({ 'a/function.yaml': NODE });
      const results = await Promise.all([source.sync(), source.sync(), source.sync()]);
      assert.deepEqual(
        results.map((r) => r.revision),
        [c1, c1, c1],
      );
    });
    it('a new GitSource over the same cache folder (a restarted controller) fetches nothing for an unchanged head', async () => {
      const { push, source, repo } = await setupIn('restart');
      const c1 = await push({ 'a/function.yaml': NODE, 'a/handler.js': 'x' });
      const first = await source.sync();
      const restarted = new GitSource({ url: repo.url, targets: LOCAL, cacheDir: path.dirname(source.gitdir), gitCli });
      cleanups.push(() => restarted.close());
      const again = await restarted.sync();
      assert.equal(again.fetched, false);
      assert.equal(again.revision, c1);
      assert.deepEqual(await buildSnapshot(again.tree), await buildSnapshot(first.tree));
    });

    it('a no-change sync reads nothing from the cache until its tree is read; a caller that stopped there syncs on', async () => {
      const { push, source, repo } = await setupIn('stop-early');
      const c1 = await push({ 'a/function.yaml': NODE, 'a/handler.js': 'x', 'b/function.yaml': NODE });
      await source.sync();
      const restarted = new GitSource({ url: repo.url, targets: LOCAL, cacheDir: path.dirname(source.gitdir), gitCli });
      cleanups.push(() => restarted.close());
      // The reconciler's "nothing new since the revision I synced": it stops without reading the tree.
      const unchanged = await restarted.sync();
      assert.deepEqual([unchanged.fetched, unchanged.revision], [false, c1]);
      const c2 = await push({ 'b/handler.js': 'y' });
      const next = await restarted.sync({ head: c2 });
      assert.deepEqual([next.fetched, next.revision], [true, c2]);
      const fresh = new GitSource({ url: repo.url, targets: LOCAL, cacheDir: await tempDir(), gitCli });
      cleanups.push(() => fresh.close());
      assert.deepEqual(await buildSnapshot(next.tree), await buildSnapshot((await fresh.sync()).tree));
    });

    it('a head named by the caller (a webhook) is fetched at once; the fetched branch tip is what counts', async () => {
      const { push, source } = await setupIn('hinted');
      const c1 = await push({ 'a/function.yaml': NODE });
      assert.equal((await source.sync()).revision, c1);
      const c2 = await push({ 'a/handler.js': 'two' });
      const hinted = await source.sync({ head: c2 });
      assert.equal(hinted.fetched, true);
      assert.equal(hinted.revision, c2);
      const c3 = await push({ 'a/handler.js': 'three' });
      // A stale or wrong hint never wins over the branch: the tip is fetched.
      const stale = await source.sync({ head: 'f'.repeat(40) });
      assert.equal(stale.revision, c3);
      // A hint that is already cached is no reason to skip asking the remote.
      const c4 = await push({ 'a/handler.js': 'four' });
      assert.equal((await source.sync({ head: c3 })).revision, c4);
    });
  });
}

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
    const wrong = new GitSource({
      url: repo.url,
      targets: LOCAL,
      cacheDir: await tempDir(),
      auth: { token: 'wrong-token-456' },
    });
    cleanups.push(() => wrong.close());
    await expectError(wrong.sync(), 'auth', repo.url, 'wrong-token-456');
    const none = new GitSource({ url: repo.url, targets: LOCAL, cacheDir: await tempDir() });
    cleanups.push(() => none.close());
    await expectError(none.sync(), 'auth', repo.url);
  });

  it('basic auth, also from credentials in the URL, which never show up in errors', async () => {
    const auth = { username: 'alice', password: 'pw-789' };
    const { push, repo } = await setup('basic', { auth });
    await push({ 'a/function.yaml': NODE });
    const inUrl = new GitSource({ url: repo.pushUrl, targets: LOCAL, cacheDir: await tempDir() });
    cleanups.push(() => inUrl.close());
    assert.ok((await inUrl.sync()).revision);
    const badUrl = new URL(repo.url);
    badUrl.username = 'alice';
    badUrl.password = 'nope-000';
    const bad = new GitSource({ url: badUrl.toString(), targets: LOCAL, cacheDir: await tempDir() });
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
    const page = new GitSource({ url: `${url}/just-a-web-page`, targets: LOCAL, cacheDir: await tempDir() });
    cleanups.push(() => page.close());
    await expectError(page.sync(), 'not-git', `${url}/just-a-web-page`);
    const missing = new GitSource({ url: `${url}/no-such-repo.git`, targets: LOCAL, cacheDir: await tempDir() });
    cleanups.push(() => missing.close());
    await expectError(missing.sync(), 'not-found', `${url}/no-such-repo.git`);
  });

  it('the git command line fetching (a hinted head skips ls-remote) gives the same typed errors', async () => {
    const hint = { head: 'e'.repeat(40) };
    const auth = { token: 'cli-token-123' };
    const { push, repo } = await setup('cli-errors', { auth });
    await push({ 'a/function.yaml': NODE });
    const wrong = new GitSource({ url: repo.url, targets: LOCAL, cacheDir: await tempDir(), auth: { token: 'cli-wrong-456' } });
    cleanups.push(() => wrong.close());
    assert.equal(await wrong.cli(), true, 'git is installed on test machines');
    await expectError(wrong.sync(hint), 'auth', repo.url, 'cli-wrong-456');
    const right = new GitSource({ url: repo.url, targets: LOCAL, cacheDir: await tempDir(), auth });
    cleanups.push(() => right.close());
    assert.ok((await right.sync(hint)).revision);
    const { url } = sharedGitServer();
    const missing = new GitSource({ url: `${url}/no-such-cli-repo.git`, targets: LOCAL, cacheDir: await tempDir() });
    cleanups.push(() => missing.close());
    await expectError(missing.sync(hint), 'not-found', `${url}/no-such-cli-repo.git`);
    const page = new GitSource({ url: `${url}/just-a-web-page`, targets: LOCAL, cacheDir: await tempDir() });
    cleanups.push(() => page.close());
    await expectError(page.sync(hint), 'not-git', `${url}/just-a-web-page`);
    await deleteBranch(repo, 'main');
    await expectError(right.sync(hint), 'branch-not-found', repo.url);
  });

  it('server down: unreachable (retryable), and syncing recovers when it is back', async () => {
    const server = await startGitServer();
    cleanups.push(() => rm(server.root, { recursive: true, force: true }));
    const repo = await createRepo(server, 'down');
    const clone = await WorkClone.create(repo);
    cleanups.push(() => clone.dispose());
    await clone.write({ 'a/function.yaml': NODE });
    const c1 = await clone.commitAndPush();
    const source = new GitSource({ url: repo.url, targets: LOCAL, cacheDir: await tempDir() });
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
