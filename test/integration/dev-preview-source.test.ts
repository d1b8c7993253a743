// What a `sless dev` preview reads of a pull request (src/platform/local/preview-source.ts) against the
// real git http-backend of the test run, through a proxy that records each request: the first read
// fetches with `git fetch`; later reads fetch in process (POSTs only: no ref advertisement, no git
// fetch), with the delivery's head as a hint that never decides what the branch is; the merge base is
// the PR's own branch point, not the watched branch's tip.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { countingGitProxy, type CountingGitProxy } from '../helpers/counting-git-proxy.ts';
import { createRepo, deleteBranch, git, sharedGitServer, WorkClone, type TestRepo } from '../helpers/git-server.ts';
import { planPreview } from '../../src/preview/preview-plan.ts';
import { openPreviewReader, PreviewBranchMissing, type PreviewReader } from '../../src/source/preview-source.ts';

let repo: TestRepo;
let clone: WorkClone;
let proxy: CountingGitProxy;
let cacheDir: string;
let reader: PreviewReader;

const handler = (v: string) => `exports.handle = async () => '${v}';\n`;
const built = (mergeBase: Parameters<typeof planPreview>[0], head: Parameters<typeof planPreview>[1]) =>
  planPreview(mergeBase, head)
    .functions.filter((f) => f.state === 'built')
    .map((f) => f.name);

before(async () => {
  repo = await createRepo(sharedGitServer(), `preview-source-${process.pid}`);
  clone = await WorkClone.create(repo);
  await clone.write({ 'fns/a/function.yaml': 'runtime: nodejs20\n', 'fns/a/handler.js': handler('a0'), 'fns/b/function.yaml': 'runtime: nodejs20\n', 'fns/b/handler.js': handler('b0') });
  await clone.commitAndPush('initial');
  proxy = await countingGitProxy();
  cacheDir = await mkdtemp(path.join(os.tmpdir(), 'sless-preview-source-'));
  reader = openPreviewReader({ repo: `${proxy.url}${new URL(repo.url).pathname}`, branch: 'main', path: 'fns', cacheDir });
});

after(async () => {
  await reader?.close?.();
  await proxy?.close();
  await clone?.dispose();
  await rm(cacheDir, { recursive: true, force: true });
});

test('the first read fetches with git; a push to the PR is then read in process (POSTs only), the hint taken once the tips confirm it', async () => {
  await git(['checkout', '-q', '-b', 'pr-1'], clone.dir);
  await clone.write({ 'fns/a/handler.js': handler('a1') });
  const first = await clone.commitAndPush('pr 1', { branch: 'pr-1' });
  const r1 = await reader.read('pr-1', { head: first });
  assert.equal(r1.head.snapshot.revision, first);
  assert.deepEqual(built(r1.mergeBase, r1.head.snapshot), ['a']);

  await clone.write({ 'fns/b/handler.js': handler('b1') });
  const second = await clone.commitAndPush('pr 1, second push', { branch: 'pr-1' });
  proxy.seen.length = 0;
  const r2 = await reader.read('pr-1', { head: second });
  assert.equal(r2.head.snapshot.revision, second);
  assert.deepEqual(built(r2.mergeBase, r2.head.snapshot), ['a', 'b']);
  assert.ok(proxy.seen.length > 0 && proxy.seen.every((s) => s === 'POST /R/git-upload-pack'), `in process, no git fetch: ${proxy.seen.join(', ')}`);
});

test('a hint that is not the tip (a late delivery) does not decide: the branch tip is read', async () => {
  const tip = await clone.commitAndPush('pr 1, third push', { branch: 'pr-1' });
  const stale = (await git(['rev-parse', 'HEAD~1'], clone.dir)).trim();
  const r = await reader.read('pr-1', { head: stale });
  assert.equal(r.head.snapshot.revision, tip);
});

test('the merge base is where the PR branched off, not the watched branch moved on since', async () => {
  await git(['checkout', '-q', 'main'], clone.dir);
  await clone.write({ 'fns/b/handler.js': handler('b-main') });
  const mainTip = await clone.commitAndPush('main moves on');
  const r = await reader.read('pr-1', { base: mainTip });
  // b changed on the PR and (differently) on main: the PR's own diff still builds a and b, from the branch point.
  assert.deepEqual(built(r.mergeBase, r.head.snapshot), ['a', 'b']);
  assert.notEqual(r.mergeBase.revision, mainTip);
});

test('a branch deleted after the delivery is PreviewBranchMissing, on the in-process path too', async () => {
  await git(['checkout', '-q', '-b', 'pr-2', 'main'], clone.dir);
  const head = await clone.commitAndPush('pr 2', { branch: 'pr-2' });
  await deleteBranch(repo, 'pr-2');
  await assert.rejects(reader.read('pr-2', { head }), (err: unknown) => err instanceof PreviewBranchMissing && /branch pr-2 does not exist/.test(err.message));
});
