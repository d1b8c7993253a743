// Issue 15 (one-change sync after a webhook): the head a push webhook names reaches the controller's
// sync (the requestedRevision annotation beside requestedAt, as KubernetesPlatform.requestSync writes it
// for /hooks: kube-platform.test.ts), so a push on top of the cached head costs the git server a fetch
// POST and an ls-refs POST beside it, no ref advertisement; the branch tip, never the hint, decides the
// revision; a request that names no head still asks the server first.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { countingGitProxy, type CountingGitProxy } from '../helpers/counting-git-proxy.ts';
import { deleteBranch } from '../helpers/git-server.ts';
import { eventually } from '../helpers/kube.ts';
import { customApi, nodeFunction, setupKit, sharedS3, type Kit } from './kube-controller-kit.ts';

describe("a push webhook's head is the controller's sync hint", () => {
  let kit: Kit;
  let proxy: CountingGitProxy;
  let requests = 0;
  /** Annotates the repository as requestSync does, and waits until the controller handled the request. */
  const requestSync = async (head?: string) => {
    const at = new Date(Date.now() + ++requests).toISOString();
    await customApi(kit.kc).patchNamespacedCustomObject(
      {
        group: 'sless.kube5s.ru',
        version: 'v1alpha1',
        namespace: kit.ns,
        plural: 'functionrepositories',
        name: 'hinted',
        body: { metadata: { annotations: { 'sless.kube5s.ru/requestedAt': at, 'sless.kube5s.ru/requestedRevision': head ?? null } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await eventually(async () => assert.equal((await kit.getRepository('hinted')).status?.lastHandledRequestedAt, at), { timeoutMs: 60_000, intervalMs: 50 });
  };
  const codeHash = async () => (await kit.getFunction('hinted'))?.spec?.codeHash;

  before(async () => {
    proxy = await countingGitProxy();
    kit = await setupKit('kube-hint', sharedS3(), { git: { allowedHosts: [new URL(proxy.url).host] } });
    await kit.clone.write(nodeFunction('hinted'));
    await kit.clone.commitAndPush('v1');
    await kit.startController();
    await kit.createRepository('hinted', { url: `${proxy.url}${new URL(kit.repoUrl).pathname}`, interval: '10m' });
    await eventually(async () => assert.ok(await codeHash()), { timeoutMs: 60_000 });
  });
  after(async () => {
    await kit?.dispose();
    await proxy?.close();
  });

  it('a push on top of the synced head, named by the request: a fetch POST with an ls-refs POST beside it, and the new code applied', async () => {
    const before = await codeHash();
    await kit.clone.write(nodeFunction('hinted', { body: "exports.handle = async () => ({ v: 2 });\n" }));
    const head = await kit.clone.commitAndPush('v2');
    proxy.seen.length = 0;
    await requestSync(head);
    assert.equal((await kit.getRepository('hinted')).status?.revision, head);
    assert.notEqual(await codeHash(), before, 'the new code is applied');
    assert.deepEqual(proxy.seen, ['POST /R/git-upload-pack', 'POST /R/git-upload-pack'], 'no ref advertisement: the hint named the head, ls-refs confirmed it');
  });

  it('a request naming a child of the synced head that is not on the branch (pushed elsewhere, then deleted) does not sync it as main', async () => {
    const main = (await kit.getRepository('hinted')).status?.revision;
    assert.ok(main);
    const before = await codeHash();
    await kit.clone.write(nodeFunction('hinted', { body: "exports.handle = async () => ({ stray: true });\n" }));
    const stray = await kit.clone.commitAndPush('stray', { branch: 'stray' });
    await deleteBranch(kit.clone.repo, 'stray');
    await kit.clone.run('reset', '--hard', main);
    await requestSync(stray);
    assert.equal((await kit.getRepository('hinted')).status?.revision, main, "the branch tip decides main's revision");
    assert.equal(await codeHash(), before, 'the stray code is not applied');
  });

  it('a request naming no head asks the server for the branch first', async () => {
    await kit.clone.write(nodeFunction('hinted', { body: "exports.handle = async () => ({ v: 3 });\n" }));
    const head = await kit.clone.commitAndPush('v3');
    proxy.seen.length = 0;
    await requestSync();
    assert.equal((await kit.getRepository('hinted')).status?.revision, head);
    assert.ok(proxy.seen.length > 1, `more than the fetch: ${proxy.seen.join(', ')}`);
  });
});
