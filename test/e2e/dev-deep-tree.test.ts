// `sless dev --repo <git URL>` of a commit whose one file sits 20,000 folders deep (issue 31 item 1):
// refused cleanly (the repository's reason TreeTooDeep, naming the limit and its setting) while dev
// keeps answering, with the heap the controller's pod has (768 MB), where it used to run out of memory.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { writeDeepCommit } from '../helpers/deep-tree.ts';
import { createRepo, sharedGitServer } from '../helpers/git-server.ts';
import { eventually, isAlive, startDevProcess, type DevProcess } from './dev-harness.ts';

let dev: DevProcess;

before(async () => {
  const repo = await createRepo(sharedGitServer(), 'dev-deep');
  await writeDeepCommit(repo.gitdir, { depth: 20_000, beside: { 'ok/function.yaml': 'runtime: nodejs20\n', 'ok/index.js': 'exports.handle = async () => 1;\n' } });
  dev = await startDevProcess({ repo: repo.url, env: { NODE_OPTIONS: '--max-old-space-size=768' } });
});

after(async () => {
  await dev?.stop('SIGTERM');
  await dev?.dispose();
});

test('the deep commit is refused with TreeTooDeep; /healthz answers throughout and the process lives', async () => {
  const slowest = { ms: 0 };
  let probing = true;
  const probes = (async () => {
    while (probing) {
      const t = Date.now();
      const res = await fetch(`${dev.url}/healthz`);
      assert.equal(res.status, 200);
      await res.arrayBuffer();
      slowest.ms = Math.max(slowest.ms, Date.now() - t);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const headers = { authorization: `Bearer ${await dev.adminToken()}` };
  const ready = await eventually(async () => {
    const repo = (await (await fetch(`${dev.url}/v1/namespaces/dev/repositories/local`, { headers })).json()) as { ready?: { reason: string; message: string } };
    return repo.ready?.reason === 'TreeTooDeep' ? repo.ready : undefined;
  }, 'the repository to be refused (TreeTooDeep)', 120_000);
  probing = false;
  await probes;
  assert.match(ready.message, /more than the 128 folders a path may nest \(SLESS_MAX_TREE_DEPTH\)/);
  assert.ok(isAlive(dev.pid), 'dev is still running');
  assert.doesNotMatch(dev.log(), /heap out of memory/);
  console.log(`slowest /healthz during the refused sync: ${slowest.ms} ms`);
  assert.ok(slowest.ms < 2000, `/healthz took ${slowest.ms} ms`);
});
