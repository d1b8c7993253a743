// Many teams on one cluster (issue 11): what a FunctionRepository's author cannot make the controller do,
// against the real API server, git server and SeaweedFS. SSRF through spec.url (item 2), the sync loop
// of a tiny interval and oversized repositories (item 5), and prune: false on deletion (item 8).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { controllersRunning, eventually } from '../helpers/kube.ts';
import { conditionOf, customApi, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';

describe('kube controller: one tenant cannot harm the platform or another', () => {
  let kit: Kit;
  let internal: http.Server;
  let internalPort = 0;
  let internalRequests = 0;
  before(async () => {
    kit = await setupKit('kube-tenancy', undefined, { git: { maxFunctions: 3, minIntervalMs: 10_000 } });
    // Stands for an internal service next to the controller (loopback, like a sidecar or the metadata address).
    internal = http.createServer((_req, res) => {
      internalRequests++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('internal-admin-panel: root password is hunter2');
    });
    await new Promise<void>((resolve) => internal.listen(0, '127.0.0.1', resolve));
    internalPort = (internal.address() as AddressInfo).port;
    await kit.clone.write({ ...nodeFunction('alpha'), ...nodeFunction('beta') });
    await kit.clone.commitAndPush('two functions');
    await kit.startController();
  });
  after(async () => {
    await kit?.dispose();
    await new Promise<void>((resolve) => internal?.close(() => resolve()));
  });

  it('refuses a repository URL on an internal address: Stalled GitRefused, no request reaches it, nothing it says is echoed', async () => {
    await kit.createRepository('probe', { url: `http://127.0.0.1:${internalPort}/anything.git` });
    await kit.createRepository('metadata', { url: 'http://169.254.169.254/latest/meta-data/iam.git' });
    for (const name of ['probe', 'metadata']) {
      const r = await eventually(async () => {
        const repo = await kit.getRepository(name);
        assert.equal(conditionOf(repo, 'Stalled')?.reason, 'GitRefused', JSON.stringify(repo.status?.conditions));
        return repo;
      });
      assert.equal(conditionOf(r)?.status, 'False');
      assert.match(conditionOf(r)?.message ?? '', /(loopback|link-local \(cloud metadata\)) address; repositories are fetched only from public addresses/);
      assert.doesNotMatch(JSON.stringify(r.status), /hunter2|internal-admin-panel/);
    }
    assert.equal(internalRequests, 0);
  });

  it('syncs an interval of 1ms no more often than the floor (10 s)', async () => {
    await kit.createRepository('hasty', { interval: '1ms', path: 'functions/alpha' });
    await eventually(async () => assert.equal(conditionOf(await kit.getRepository('hasty'))?.status, 'True'), { timeoutMs: 30_000 });
    const count = async () => (await kit.controller!.metrics.syncs.get()).values.reduce((n, v) => n + v.value, 0);
    const before = await count();
    await new Promise((r) => setTimeout(r, 4_000));
    assert.ok((await count()) - before <= 1, `at most one more sync in 4 s, saw ${(await count()) - before}`);
  });

  it('stalls a repository with more function folders than one repository may hold, and applies nothing', async () => {
    const big = await setupKit('kube-tenancy-big', undefined, { git: { maxFunctions: 3 } });
    try {
      await big.clone.write({ ...nodeFunction('f1'), ...nodeFunction('f2'), ...nodeFunction('f3'), ...nodeFunction('f4') });
      await big.clone.commitAndPush('four functions');
      await big.startController();
      await big.createRepository('big');
      const r = await eventually(async () => {
        const repo = await big.getRepository('big');
        assert.equal(conditionOf(repo, 'Stalled')?.reason, 'TooManyFunctions', JSON.stringify(repo.status?.conditions));
        return repo;
      });
      assert.match(conditionOf(r)?.message ?? '', /has 4 function folders .* more than the 3 one repository may hold/);
      assert.deepEqual(await big.listFunctions(), []);
    } finally {
      await big.dispose();
    }
  });

  it('prune: false keeps the Functions, Triggers and FunctionJobs when the repository is deleted; prune: true removes them', { skip: !controllersRunning() && 'needs the garbage collector' }, async () => {
    const custom = customApi(kit.kc);
    const objects = async (plural: string) =>
      ((await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural })) as { items: Array<{ metadata?: { name?: string; labels?: Record<string, string>; ownerReferences?: unknown[] } }> }).items;
    await kit.clone.write({ ...nodeFunction('gamma'), ...nodeFunction('delta') });
    await kit.clone.commitAndPush('two more');
    await kit.createRepository('keep', { prune: false, path: 'functions/gamma' });
    await eventually(async () => {
      assert.ok(await kit.getFunction('gamma'));
      assert.ok(await kit.getTrigger('gamma-http'));
      assert.ok((await kit.getRepository('keep')).metadata?.finalizers?.includes(`${GROUP}/cleanup`), 'prune: false adds the finalizer');
    });
    await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural: 'functionrepositories', name: 'keep' });
    await eventually(async () => assert.ok(!(await objects('functionrepositories')).some((r) => r.metadata?.name === 'keep')));
    // Give the garbage collector time to (wrongly) act.
    await new Promise((r) => setTimeout(r, 3_000));
    const fn = await kit.getFunction('gamma');
    assert.ok(fn, 'the Function survives its repository');
    assert.equal(fn.metadata?.ownerReferences, undefined);
    assert.equal(fn.metadata?.labels?.['sless.kube5s.ru/repository'], undefined, 'no longer managed by git: /v1 may change it');
    assert.ok(await kit.getTrigger('gamma-http'), 'its Trigger too');

    await kit.createRepository('drop', { path: 'functions/delta' });
    await eventually(async () => assert.ok(await kit.getFunction('delta')));
    await custom.deleteNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural: 'functionrepositories', name: 'drop' });
    await eventually(async () => assert.equal(await kit.getFunction('delta'), undefined), { timeoutMs: 30_000 });
  });
});
