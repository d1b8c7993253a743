// A revision too deep, with too long a path or too big a listing is refused as a whole, with a reason
// naming the limit and its setting, while it is read (issue 31 item 1): a commit whose one file sits
// 20,000 folders deep is 1.3 MB of git objects but a 400 MB `git ls-tree -r -t` listing, which took
// the controller's heap with it. Shown for every reader: the git command line's streamed listing,
// isomorphic-git's tree reads, and a folder on disk.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SnapshotBuilder } from '../../src/source/build-snapshot.ts';
import { GitSource } from '../../src/source/git-source.ts';
import { TargetPolicy } from '../../src/source/target-policy.ts';
import { DEFAULT_TREE_LIMITS, TreeLimitError } from '../../src/source/tree-limits.ts';
import { WorkTree } from '../../src/source/work-tree.ts';
import { writeDeepCommit } from '../helpers/deep-tree.ts';
import { createRepo, sharedGitServer, type TestRepo } from '../helpers/git-server.ts';

const DEPTH = 20_000;
const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function refusal(work: Promise<unknown>): Promise<TreeLimitError> {
  const err = await work.then(
    () => assert.fail('the revision must be refused'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof TreeLimitError, `a TreeLimitError, not ${String(err).slice(0, 300)}`);
  return err;
}

describe('revisions past the tree limits are refused while they are read', () => {
  let deep: TestRepo;
  let cacheRoot = '';
  before(async () => {
    cacheRoot = await mkdtemp(path.join(os.tmpdir(), 'sless-deep-'));
    cleanups.push(() => rm(cacheRoot, { recursive: true, force: true }));
    deep = await createRepo(sharedGitServer(), 'deep');
    await writeDeepCommit(deep.gitdir, { depth: DEPTH, beside: { 'ok/function.yaml': 'runtime: nodejs20\n' } });
  });

  for (const gitCli of [true, false]) {
    it(`a file ${DEPTH} folders deep (${gitCli ? 'git command line' : 'isomorphic-git'}): TreeTooDeep naming the limit and SLESS_MAX_TREE_DEPTH, in bounded time and memory`, async () => {
      const source = new GitSource({ url: deep.url, cacheDir: path.join(cacheRoot, String(gitCli)), targets: TargetPolicy.anyTarget(), gitCli });
      cleanups.push(() => source.close());
      const rssBefore = process.memoryUsage().rss;
      const started = Date.now();
      const { tree } = await source.sync();
      const err = await refusal(new SnapshotBuilder().build(tree));
      const ms = Date.now() - started;
      const grownMb = (process.memoryUsage().rss - rssBefore) / 1024 / 1024;
      console.log(`depth ${DEPTH}, ${gitCli ? 'git CLI' : 'isomorphic-git'}: refused in ${ms} ms, RSS +${grownMb.toFixed(0)} MB: ${err.message}`);
      assert.equal(err.reason, 'TreeTooDeep');
      assert.match(err.message, new RegExp(`more than the ${DEFAULT_TREE_LIMITS.maxDepth} folders a path may nest \\(SLESS_MAX_TREE_DEPTH\\)`));
      assert.ok(grownMb < 150, `RSS grew ${grownMb.toFixed(0)} MB`);
    });
  }

  it('a path longer than SLESS_MAX_PATH_BYTES (20 folders of 250 bytes): PathTooLong', async () => {
    const repo = await createRepo(sharedGitServer(), 'long-path');
    await writeDeepCommit(repo.gitdir, { depth: 20, folderName: 'n'.repeat(250) });
    const source = new GitSource({ url: repo.url, cacheDir: path.join(cacheRoot, 'long'), targets: TargetPolicy.anyTarget() });
    cleanups.push(() => source.close());
    const err = await refusal(new SnapshotBuilder().build((await source.sync()).tree));
    assert.equal(err.reason, 'PathTooLong');
    assert.match(err.message, /more than the 4096 a path may have \(SLESS_MAX_PATH_BYTES\)/);
  });

  it('a listing past SLESS_MAX_TREE_BYTES: TreeTooLarge (a small limit, for the test)', async () => {
    const source = new GitSource({ url: deep.url, cacheDir: path.join(cacheRoot, 'large'), targets: TargetPolicy.anyTarget(), treeLimits: { ...DEFAULT_TREE_LIMITS, maxListingBytes: 2000 } });
    cleanups.push(() => source.close());
    const err = await refusal(new SnapshotBuilder({ ...DEFAULT_TREE_LIMITS, maxListingBytes: 2000 }).build((await source.sync()).tree));
    assert.equal(err.reason, 'TreeTooLarge');
    assert.match(err.message, /more than the 2000 bytes one sync may read \(SLESS_MAX_TREE_BYTES\)/);
  });

  it('a folder on disk nested 200 deep (sless dev on a folder, sless validate): TreeTooDeep', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'sless-deep-folder-'));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const bottom = path.join(root, ...Array<string>(200).fill('d'));
    await mkdir(bottom, { recursive: true });
    await writeFile(path.join(bottom, 'deep.txt'), 'x');
    const err = await refusal(new SnapshotBuilder().build(new WorkTree(root)));
    assert.equal(err.reason, 'TreeTooDeep');
  });
});
