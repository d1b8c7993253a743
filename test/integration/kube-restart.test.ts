// A controller restart with functions running (issue 15), against a real API server, counted at a proxy
// in front of it (every request the controller makes, its RBAC and Secret clients' too): the restarted
// controller rebuilds nothing and writes nothing but the status of the sync it was asked for, with the
// tenant binding a deployed controller has (POD_NAMESPACE set: it binds sless-tenant per namespace).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.ts';
import { eventually, testKubeConfig } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { DIGEST_A, nodeFunction, patchCustom, setupKit, type Kit } from './kube-controller-kit.ts';

const FUNCTIONS = Array.from({ length: 12 }, (_, i) => `fn-${i}`);
const CRON_YAML = 'schedules:\n  - name: nightly\n    cron: "0 3 * * *"\n';

describe('kube controller: a restart with functions running', () => {
  let kit: Kit;
  let proxy: CountingProxy;
  before(async () => {
    proxy = await startCountingProxy(testKubeConfig());
    kit = await setupKit('kube-restart', undefined, { systemNamespace: 'sless-system', tenantBinding: { serviceAccount: 'sless-controller', namespace: 'sless-system' } });
    const files = Object.assign({}, ...FUNCTIONS.map((name) => nodeFunction(name, { yaml: CRON_YAML }))) as Record<string, string>;
    await kit.clone.write(files);
    await kit.clone.commitAndPush(`${FUNCTIONS.length} functions`);
    await kit.startController(proxy.kubeConfig());
    await kit.createRepository('site');
    const jobs = await eventually(async () => {
      const list = await kit.buildJobs();
      assert.equal(list.length, FUNCTIONS.length);
      return list;
    }, { timeoutMs: 60_000 });
    for (const job of jobs) await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await kit.serve(...FUNCTIONS);
    await eventually(async () => {
      for (const name of FUNCTIONS) {
        assert.equal((await kit.getFunction(name))?.status?.phase, 'Ready', name);
        assert.equal((await kit.getTrigger(`${name}-cron-nightly`))?.status?.conditions?.[0]?.reason, 'Scheduled', name);
      }
    }, { timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 2_000)); // late reconciles (cache catching up) would show here
  });
  after(async () => {
    await kit?.dispose();
    await proxy?.close();
  });

  it('rebuilds nothing and writes only the status of the sync it was asked for', async () => {
    await kit.stopController();
    const jobsBefore = (await kit.buildJobs()).length;
    // Asked for while no controller runs, as a webhook during the restart would.
    const at = new Date().toISOString();
    await patchCustom(kit, 'functionrepositories', 'site', [{ op: 'add', path: '/metadata/annotations', value: { 'sless.kube5s.ru/requestedAt': at } }]);
    const from = proxy.requests.length;
    await kit.startController(proxy.kubeConfig());
    await eventually(async () => assert.equal((await kit.getRepository('site')).status?.lastHandledRequestedAt, at), { timeoutMs: 30_000 });
    await eventually(() => assert.deepEqual(kit.controller!.depth(), { FunctionRepository: 0, Function: 0, Trigger: 0, FunctionJob: 0 }), { timeoutMs: 30_000 });
    await new Promise((r) => setTimeout(r, 3_000));
    const writes = proxy
      .since(from)
      .filter((r) => r.write)
      .map((r) => `${r.method} ${new URL(r.url, 'http://x').pathname}`);
    assert.deepEqual(writes, [`PATCH /apis/sless.kube5s.ru/v1alpha1/namespaces/${kit.ns}/functionrepositories/site/status`]);
    assert.equal((await kit.buildJobs()).length, jobsBefore, 'no build Job');
  });
});
