// Safety rules of the repository sync: an empty checkout never prunes what the repository owns (Stalled
// instead), suspend stops syncing, and a name another owner already uses is reported, not taken over.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rm } from 'node:fs/promises';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import { eventually } from '../helpers/kube.ts';
import { conditionOf, core, nodeFunction, patchCustom, setupKit, type Kit } from './kube-controller-kit.ts';

describe('kube controller: sync safety', () => {
  let kit: Kit;
  let first = '';
  before(async () => {
    kit = await setupKit('kube-safe');
    await kit.clone.write({ ...nodeFunction('alpha'), ...nodeFunction('beta'), 'README.md': 'functions live in functions/\n' });
    first = await kit.clone.commitAndPush('two functions');
    await kit.startController();
    await kit.createRepository('safe');
    await eventually(async () => assert.equal((await kit.listFunctions()).length, 2));
  });
  after(() => kit?.dispose());

  it('goes Stalled and prunes nothing when a push removes every function folder', async () => {
    await kit.clone.remove('functions');
    const empty = await kit.clone.commitAndPush('oops: all functions gone');
    await kit.controller!.requestSync(kit.ns, 'safe');
    const repo = await eventually(async () => {
      const r = await kit.getRepository('safe');
      assert.equal(conditionOf(r, 'Stalled')?.status, 'True', JSON.stringify(r.status?.conditions));
      return r;
    });
    assert.equal(conditionOf(repo)?.status, 'False');
    assert.equal(conditionOf(repo)?.reason, 'EmptySource');
    assert.match(conditionOf(repo)?.message ?? '', new RegExp(`${empty.slice(0, 12)} has no function folders .* owns 2 Function\\(s\\); nothing was pruned`));
    assert.equal(repo.status?.revision, first, 'status still names the last applied revision');
    assert.equal((await kit.listFunctions()).length, 2);
  });

  it('syncs again once the folders are back', async () => {
    await kit.clone.write({ ...nodeFunction('alpha'), ...nodeFunction('beta') });
    const back = await kit.clone.commitAndPush('restore');
    await kit.controller!.requestSync(kit.ns, 'safe');
    await eventually(async () => {
      const r = await kit.getRepository('safe');
      assert.equal(r.status?.revision, back);
      assert.equal(conditionOf(r)?.status, 'True');
      assert.equal(conditionOf(r, 'Stalled'), undefined);
    });
  });

  it('syncs a private repository with the token from spec.secretRef; a missing Secret, one not made for sless (type) or a wrong token stalls with a clear reason', async () => {
    const repo = await createRepo(sharedGitServer(), 'private', { auth: { token: 's3cr3t-token' } });
    const clone = await WorkClone.create(repo);
    await clone.write(nodeFunction('private-fn'));
    await clone.commitAndPush('private function');
    await rm(clone.dir, { recursive: true, force: true });
    await kit.createRepository('private', { url: repo.url, secretRef: { name: 'git-creds' } });
    await eventually(async () => {
      const r = await kit.getRepository('private');
      assert.equal(conditionOf(r, 'Stalled')?.reason, 'SecretNotFound', JSON.stringify(r.status?.conditions));
      assert.match(conditionOf(r)?.message ?? '', /Secret .*\/git-creds .* does not exist/);
    });
    // A Secret made for something else (type Opaque) is never sent to the git server, right token or not.
    await core(kit.kc).createNamespacedSecret({ namespace: kit.ns, body: { metadata: { name: 'git-creds' }, stringData: { token: 's3cr3t-token' } } });
    await kit.controller!.requestSync(kit.ns, 'private');
    await eventually(async () => {
      const r = await kit.getRepository('private');
      assert.equal(conditionOf(r, 'Stalled')?.reason, 'SecretNotMarked', JSON.stringify(r.status?.conditions));
      assert.match(conditionOf(r)?.message ?? '', /has type Opaque, not sless\.kube5s\.ru\/git-credentials/);
    });
    assert.equal(await kit.getFunction('private-fn'), undefined);
    await core(kit.kc).deleteNamespacedSecret({ namespace: kit.ns, name: 'git-creds' });
    await core(kit.kc).createNamespacedSecret({
      namespace: kit.ns,
      body: { metadata: { name: 'git-creds' }, type: 'sless.kube5s.ru/git-credentials', stringData: { token: 'bad-token-9f3e1' } },
    });
    await kit.controller!.requestSync(kit.ns, 'private');
    await eventually(async () => {
      const r = await kit.getRepository('private');
      assert.equal(conditionOf(r, 'Stalled')?.reason, 'GitAuthFailed', JSON.stringify(r.status?.conditions));
      assert.doesNotMatch(JSON.stringify(r.status), /bad-token-9f3e1/, 'credentials never reach the status');
    });
    await core(kit.kc).replaceNamespacedSecret({ namespace: kit.ns, name: 'git-creds', body: { metadata: { name: 'git-creds' }, type: 'sless.kube5s.ru/git-credentials', stringData: { token: 's3cr3t-token' } } });
    await kit.controller!.requestSync(kit.ns, 'private');
    await eventually(async () => {
      assert.ok(await kit.getFunction('private-fn'));
      assert.equal(conditionOf(await kit.getRepository('private'))?.status, 'True');
    });
  });

  it('does not sync while suspended', async () => {
    await patchCustom(kit, 'functionrepositories', 'safe', [{ op: 'add', path: '/spec/suspend', value: true }]);
    await eventually(async () => assert.equal(conditionOf(await kit.getRepository('safe'))?.reason, 'Suspended'));
    const before = (await kit.getRepository('safe')).status?.revision;
    await kit.clone.write(nodeFunction('gamma'));
    await kit.clone.commitAndPush('while suspended');
    await kit.controller!.requestSync(kit.ns, 'safe');
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal((await kit.getRepository('safe')).status?.revision, before);
    assert.equal(await kit.getFunction('gamma'), undefined);
  });
});
