// Safety rules of the repository sync: an empty checkout never prunes what the repository owns (Stalled
// instead), suspend stops syncing and leaves Ready as it was (kstatus: Current), and a name another owner
// already uses is reported, not taken over.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { createRepo, sharedGitServer, WorkClone } from '../helpers/git-server.ts';
import type { RepositoryResource } from '../../src/platform/kubernetes/objects/resources.ts';
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

  it('while suspended: no sync, Ready keeps its last value at the new generation (kubectl wait returns), a printer column shows it; resuming syncs at once', async () => {
    const readyOf = (r: RepositoryResource) => r.status?.conditions?.find((c) => c.type === 'Ready');
    const readyBefore = readyOf(await kit.getRepository('safe'));
    assert.equal(readyBefore?.status, 'True');
    await patchCustom(kit, 'functionrepositories', 'safe', [{ op: 'add', path: '/spec/suspend', value: true }]);
    // Setting suspend raises the generation: the status must speak for it, or kstatus and kubectl wait ignore its conditions.
    const suspended = await eventually(async () => {
      const r = await kit.getRepository('safe');
      assert.equal(r.status?.observedGeneration, r.metadata?.generation, JSON.stringify(r.status));
      return r;
    });
    const ready = readyOf(suspended);
    assert.deepEqual(
      { status: ready?.status, reason: ready?.reason, message: ready?.message, lastTransitionTime: ready?.lastTransitionTime },
      { status: readyBefore?.status, reason: readyBefore?.reason, message: readyBefore?.message, lastTransitionTime: readyBefore?.lastTransitionTime },
      'Ready keeps its last value',
    );
    assert.equal(ready?.observedGeneration, suspended.metadata?.generation);
    assert.equal(conditionOf(suspended, 'Reconciling'), undefined, 'a suspended repository is not in progress (kstatus)');
    assert.equal(conditionOf(suspended, 'Stalled'), undefined);
    await kubectl(['wait', '--for=condition=Ready', '--timeout=10s', '-n', kit.ns, 'functionrepository/safe']);
    const table = (await kubectl(['get', 'functionrepository', 'safe', '-n', kit.ns])).stdout.split('\n');
    const column = table[0]!.split(/\s{2,}/).indexOf('SUSPENDED');
    assert.ok(column >= 0, table[0]);
    assert.equal(table[1]!.split(/\s{2,}/)[column], 'true', table.join('\n'));

    const before = suspended.status?.revision;
    await kit.clone.write(nodeFunction('gamma'));
    const pushed = await kit.clone.commitAndPush('while suspended');
    await kit.controller!.requestSync(kit.ns, 'safe');
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal((await kit.getRepository('safe')).status?.revision, before);
    assert.equal(await kit.getFunction('gamma'), undefined);

    // The interval is a minute: a sync within seconds is the resume's own.
    await patchCustom(kit, 'functionrepositories', 'safe', [{ op: 'replace', path: '/spec/suspend', value: false }]);
    await eventually(
      async () => {
        const r = await kit.getRepository('safe');
        assert.equal(r.status?.revision, pushed);
        assert.equal(conditionOf(r)?.status, 'True');
        assert.ok(await kit.getFunction('gamma'));
      },
      { timeoutMs: 15_000 },
    );
  });
});

/** kubectl against the test API server (the kube service's admin kubeconfig). */
async function kubectl(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const kubeconfig = process.env.SLESS_TEST_KUBECONFIG;
  if (!kubeconfig) throw new Error('SLESS_TEST_KUBECONFIG is not set: run this suite through `npm test` (it starts the kube service)');
  return promisify(execFile)('kubectl', ['--kubeconfig', kubeconfig, ...args], { timeout: 30_000 });
}
