// Drift heals in seconds (issue 11 item 7) and nothing is written when nothing changed (issue 15): the
// controller watches the Deployments, Services, CronJobs and run Jobs it owns, so deleting or changing one brings
// it back well before any resync (the kit's resync period is 60 s); a reconcile that finds everything as
// it should be sends no apply; a restarted controller re-applies nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeClient } from '../../src/platform/kubernetes/api-client/kube-client.ts';
import { eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';
import { apps, batchApi, core, DIGEST_A, nodeFunction, patchCustom, setupKit, type Kit } from './kube-controller-kit.ts';

const CRON_YAML = 'schedules:\n  - name: nightly\n    cron: "0 3 * * *"\njobs:\n  - name: seed\n    run_id: 1\n';
const WORKLOAD_WRITES = ['apply:Deployment', 'apply:Service', 'apply:CronJob'];

/** The workload applies and status writes a controller's client made so far. */
function writes(kube: KubeClient): Record<string, number> {
  return Object.fromEntries(Object.entries(kube.requestsByOperation).filter(([op]) => WORKLOAD_WRITES.includes(op) || op.startsWith('status:')));
}

describe('kube controller: owned objects are watched', () => {
  let kit: Kit;
  before(async () => {
    kit = await setupKit('kube-drift');
    await kit.clone.write(nodeFunction('drifty', { yaml: CRON_YAML }));
    await kit.clone.commitAndPush('one function');
    await kit.startController();
    await kit.createRepository('drift');
    const [job] = await eventually(async () => {
      const jobs = await kit.buildJobs();
      assert.equal(jobs.length, 1);
      return jobs;
    }, { timeoutMs: 30_000 });
    await markJobSucceeded(kit.kc, kit.buildNs, job!.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    // Built is not serving: the Function is Ready once its Deployment is rolled out and available.
    await kit.serve('drifty');
    await eventually(async () => {
      const f = await kit.getFunction('drifty');
      assert.equal(f?.status?.phase, 'Ready', JSON.stringify(f?.status));
      await batchApi(kit.kc).readNamespacedCronJob({ namespace: kit.ns, name: 'drifty-cron-nightly' });
    }, { timeoutMs: 30_000 });
  });
  after(() => kit?.dispose());

  it('the rollout is followed from the Deployment watch, never a GET of the Deployment', async () => {
    assert.equal(kit.controller!.kube.requestsByOperation['read:Deployment'] ?? 0, 0, JSON.stringify(kit.controller!.kube.requestsByOperation));
  });

  it('a reconcile that finds everything in place writes nothing', async () => {
    await new Promise((r) => setTimeout(r, 2_000)); // let the caches catch up with the last writes
    const before = writes(kit.controller!.kube);
    // A metadata change of the Function enqueues it and its Triggers.
    await patchCustom(kit, 'functions', 'drifty', [{ op: 'add', path: '/metadata/labels/poke', value: '1' }]);
    await new Promise((r) => setTimeout(r, 3_000));
    assert.deepEqual(writes(kit.controller!.kube), before);
  });

  for (const [kind, remove, read] of [
    ['Deployment', () => apps(kit.kc).deleteNamespacedDeployment({ namespace: kit.ns, name: 'drifty' }), () => apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'drifty' })],
    ['Service', () => core(kit.kc).deleteNamespacedService({ namespace: kit.ns, name: 'drifty' }), () => core(kit.kc).readNamespacedService({ namespace: kit.ns, name: 'drifty' })],
    [
      'CronJob',
      () => batchApi(kit.kc).deleteNamespacedCronJob({ namespace: kit.ns, name: 'drifty-cron-nightly' }),
      () => batchApi(kit.kc).readNamespacedCronJob({ namespace: kit.ns, name: 'drifty-cron-nightly' }),
    ],
  ] as const) {
    it(`a deleted ${kind} is back within seconds, not at the next resync`, async () => {
      const old = await read();
      await remove();
      const t0 = Date.now();
      const back = await eventually(async () => {
        const now = await read();
        assert.notEqual(now.metadata?.uid, old.metadata?.uid);
        return now;
      }, { timeoutMs: 20_000 });
      assert.ok(Date.now() - t0 < 20_000);
      assert.equal(back.metadata?.ownerReferences?.[0]?.name, 'drifty');
    });
  }

  // A FunctionJob's run Job: deleted while it runs, it is started again (the run has no result yet);
  // deleted once it finished (as its TTL does), the result stays in status and nothing runs again.
  it('a run Job deleted while it runs is started again; deleted after it finished, its result stays', async () => {
    const fj = await eventually(async () => {
      const j = await kit.getFunctionJob('drifty-seed');
      assert.equal(j?.status?.phase, 'Running', JSON.stringify(j?.status));
      return j!;
    }, { timeoutMs: 30_000 });
    const jobName = fj.status?.jobName ?? '';
    const old = await batchApi(kit.kc).readNamespacedJob({ namespace: kit.ns, name: jobName });
    await batchApi(kit.kc).deleteNamespacedJob({ namespace: kit.ns, name: jobName, propagationPolicy: 'Background' });
    const t0 = Date.now();
    await eventually(async () => {
      const now = await batchApi(kit.kc).readNamespacedJob({ namespace: kit.ns, name: jobName });
      assert.notEqual(now.metadata?.uid, old.metadata?.uid);
      assert.equal(now.metadata?.ownerReferences?.[0]?.name, 'drifty');
    }, { timeoutMs: 20_000 });
    assert.ok(Date.now() - t0 < 20_000);

    await markJobSucceeded(kit.kc, kit.ns, jobName, { terminationMessage: '{"seeded":true}' });
    await eventually(async () => assert.equal((await kit.getFunctionJob('drifty-seed'))?.status?.phase, 'Succeeded'), { timeoutMs: 30_000 });
    const finished = await batchApi(kit.kc).readNamespacedJob({ namespace: kit.ns, name: jobName });
    await batchApi(kit.kc).deleteNamespacedJob({ namespace: kit.ns, name: jobName, propagationPolicy: 'Background' });
    await eventually(async () => {
      const gone = await batchApi(kit.kc).readNamespacedJob({ namespace: kit.ns, name: jobName }).then((j) => j.metadata?.uid !== finished.metadata?.uid, () => true);
      assert.ok(gone, 'the finished Job is still there');
    }, { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 3_000)); // the deletion reached the controller (its watch enqueues the FunctionJob)
    const after = await kit.getFunctionJob('drifty-seed');
    assert.equal(after?.status?.phase, 'Succeeded');
    assert.match(after?.status?.message ?? '', /seeded/);
    const again = await batchApi(kit.kc).readNamespacedJob({ namespace: kit.ns, name: jobName }).catch(() => undefined);
    assert.equal(again, undefined, 'a finished run was started again');
  });

  it('a Deployment changed by hand is put back; its replica count only where it leaves scale min..max (between them it is the autoscaler\'s)', async () => {
    const read = () => apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'drifty' });
    const image = (await read()).spec?.template.spec?.containers[0]?.image;
    await apps(kit.kc).patchNamespacedDeployment(
      { namespace: kit.ns, name: 'drifty', body: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'busybox:drifted' }] },
    );
    await eventually(async () => assert.equal((await read()).spec?.template.spec?.containers[0]?.image, image), { timeoutMs: 20_000 });
    // No scale: in function.yaml means max 10.
    await apps(kit.kc).patchNamespacedDeployment({ namespace: kit.ns, name: 'drifty', body: [{ op: 'replace', path: '/spec/replicas', value: 15 }] });
    await eventually(async () => assert.equal((await read()).spec?.replicas, 10), { timeoutMs: 20_000 });
  });

  it('a restarted controller re-applies nothing and rebuilds nothing', async () => {
    await new Promise((r) => setTimeout(r, 2_000));
    const buildJobs = (await kit.buildJobs()).length;
    await kit.stopController();
    const fresh = await kit.startController();
    await kit.controller!.requestSync(kit.ns, 'drift');
    await eventually(async () => assert.ok((fresh.kube.requestsByOperation['status:FunctionRepository'] ?? 0) >= 1 || (await kit.getRepository('drift')).status), { timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 4_000));
    const applied = Object.fromEntries(Object.entries(fresh.kube.requestsByOperation).filter(([op]) => op.startsWith('apply:') || op === 'createIfAbsent'));
    assert.deepEqual(applied, {}, `a restart applied ${JSON.stringify(applied)}`);
    assert.equal((await kit.buildJobs()).length, buildJobs);
  });
});
