// Triggers, FunctionJobs and sync ordering: a cron schedule becomes the expected CronJob, a FunctionJob runs
// again when its runID grows and reports the pod's output, http.enabled=false scales to zero, and a push that
// lands while a sync runs is picked up right after it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { batchApi, apps, conditionOf, DIGEST_A, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';
import { eventually } from '../helpers/kube.ts';
import { markJobSucceeded } from '../helpers/kube-harness.ts';

const CRON_YAML = 'schedules:\n  - name: nightly\n    cron: "0 3 * * *"\n    timezone: Europe/Moscow\n    event: {kind: nightly}\n';
const jobsYaml = (runId: number) => `jobs:\n  - name: seed\n    run_id: ${runId}\n    event: {input: [1, 2]}\n  - name: later\n    run_id: 0\n`;

describe('kube controller: triggers, jobs, sync ordering', () => {
  let kit: Kit;
  before(async () => {
    kit = await setupKit('kube-work');
    await kit.clone.write({
      ...nodeFunction('cron', { yaml: CRON_YAML }),
      ...nodeFunction('seeder', { yaml: jobsYaml(1) }),
      ...nodeFunction('quiet', { yaml: 'http:\n  enabled: false\n' }),
    });
    await kit.clone.commitAndPush('three functions');
    await kit.startController();
    await kit.createRepository('work');
    await eventually(async () => assert.equal((await kit.buildJobs()).length, 3), { timeoutMs: 30_000 });
    for (const job of await kit.buildJobs()) await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: DIGEST_A });
    await kit.serve('cron', 'seeder', 'quiet');
    await eventually(async () => {
      const fns = await kit.listFunctions();
      assert.equal(fns.filter((f) => f.status?.phase === 'Ready').length, 3);
    }, { timeoutMs: 30_000 });
  });
  after(() => kit?.dispose());

  it('turns a cron schedule into a CronJob of the function image in job mode', async () => {
    const fn = await kit.getFunction('cron');
    const cj = await eventually(() => batchApi(kit.kc).readNamespacedCronJob({ namespace: kit.ns, name: 'cron-cron-nightly' }));
    assert.equal(cj.spec?.schedule, '0 3 * * *');
    assert.equal(cj.spec?.timeZone, 'Europe/Moscow');
    assert.equal(cj.spec?.concurrencyPolicy, 'Forbid');
    assert.equal(cj.spec?.suspend, false);
    const c = cj.spec?.jobTemplate.spec?.template.spec?.containers[0];
    assert.equal(c?.image, fn?.status?.imageRef);
    assert.ok(c?.env?.some((e) => e.name === 'SLESS_MODE' && e.value === 'job'));
    assert.ok(c?.env?.some((e) => e.name === 'SLESS_EVENT' && e.value === '{"kind":"nightly"}'));
    assert.equal(cj.metadata?.ownerReferences?.[0]?.name, 'cron');
    const trigger = await eventually(async () => {
      const t = await kit.getTrigger('cron-cron-nightly');
      assert.equal(t?.status?.active, true);
      return t;
    });
    assert.equal(conditionOf(trigger)?.status, 'True');
  });

  it('scales a function with http disabled to zero replicas', async () => {
    const dep = await eventually(() => apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'quiet' }));
    assert.equal(dep.spec?.replicas, 0);
    const t = await eventually(async () => {
      const x = await kit.getTrigger('quiet-http');
      assert.equal(x?.status?.active, false);
      return x;
    });
    assert.equal(t?.spec?.enabled, false);
  });

  it('runs a FunctionJob once per runID and puts the output in status', async () => {
    const run1 = await eventually(() => batchApi(kit.kc).readNamespacedJob({ namespace: kit.ns, name: 'seeder-seed-r1' }));
    const env = run1.spec?.template.spec?.containers[0]?.env ?? [];
    assert.ok(env.some((e) => e.name === 'SLESS_EVENT' && e.value === '{"input":[1,2]}'));
    await markJobSucceeded(kit.kc, kit.ns, 'seeder-seed-r1', { terminationMessage: '{"sum":3}' });
    await eventually(async () => {
      const fj = await kit.getFunctionJob('seeder-seed');
      assert.equal(fj?.status?.phase, 'Succeeded', JSON.stringify(fj?.status));
      assert.equal(fj?.status?.message, '{"sum":3}');
      assert.equal(fj?.status?.jobName, 'seeder-seed-r1');
      assert.ok(fj?.status?.completionTime);
    }, { timeoutMs: 30_000 });

    await kit.clone.write(nodeFunction('seeder', { yaml: jobsYaml(2) }));
    await kit.clone.commitAndPush('rerun seed');
    await kit.controller!.requestSync(kit.ns, 'work');
    await eventually(() => batchApi(kit.kc).readNamespacedJob({ namespace: kit.ns, name: 'seeder-seed-r2' }), { timeoutMs: 30_000 });
    await eventually(async () => {
      const fj = await kit.getFunctionJob('seeder-seed');
      assert.equal(fj?.status?.phase, 'Running', JSON.stringify(fj?.status));
      assert.equal(fj?.status?.runID, 2);
      assert.equal(fj?.status?.completionTime, undefined, 'the previous run\'s completionTime is cleared');
    });
    await markJobSucceeded(kit.kc, kit.ns, 'seeder-seed-r2', { terminationMessage: '{"sum":"again"}' });
    await eventually(async () => {
      const fj = await kit.getFunctionJob('seeder-seed');
      assert.equal(fj?.status?.phase, 'Succeeded');
      assert.equal(fj?.status?.message, '{"sum":"again"}');
      assert.equal(fj?.status?.jobName, 'seeder-seed-r2');
    }, { timeoutMs: 30_000 });
  });

  it('skips a FunctionJob whose runID is 0', async () => {
    await eventually(async () => {
      const fj = await kit.getFunctionJob('seeder-later');
      assert.equal(fj?.status?.phase, 'Skipped', JSON.stringify(fj?.status));
    });
    const jobs = await batchApi(kit.kc).listNamespacedJob({ namespace: kit.ns, labelSelector: 'sless.kube5s.ru/function-job=seeder-later' });
    assert.equal(jobs.items.length, 0);
  });

  it('picks up a push that lands while a sync is running', async () => {
    await kit.clone.write(nodeFunction('quiet', { env: { ROUND: '1' }, yaml: 'http:\n  enabled: false\n' }));
    await kit.clone.commitAndPush('round 1');
    await kit.controller!.requestSync(kit.ns, 'work');
    await eventually(() => assert.ok(kit.controller!.depth().FunctionRepository > 0), { intervalMs: 2, timeoutMs: 10_000 });
    await kit.clone.write(nodeFunction('quiet', { env: { ROUND: '2' }, yaml: 'http:\n  enabled: false\n' }));
    const second = await kit.clone.commitAndPush('round 2');
    await kit.controller!.requestSync(kit.ns, 'work');
    await eventually(async () => {
      const r = await kit.getRepository('work');
      assert.equal(r.status?.revision, second);
      assert.deepEqual((await kit.getFunction('quiet'))?.spec?.env, { ROUND: '2' });
    }, { timeoutMs: 30_000 });
  });
});
