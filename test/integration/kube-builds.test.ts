// Builds: exactly the changed function is rebuilt, a controller restarted mid-build adopts the running
// Job instead of starting a twin, and a failed build reports kaniko's output while the old image serves.
// The BuildLog (GET /v1/.../builds) gets one record per build start and one per outcome.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.ts';
import { markJobFailed, markJobSucceeded } from '../helpers/kube-harness.ts';
import { apps, batchApi, conditionOf, core, customApi, DIGEST_A, DIGEST_B, nodeFunction, setupKit, type Kit } from './kube-controller-kit.ts';

/** Outcomes recorded for a function, oldest first. */
async function buildOutcomes(kit: Kit, fn: string): Promise<string[]> {
  return (await kit.buildLog.list(kit.ns, fn, 100)).map((r) => r.outcome).reverse();
}

const NAMES = Array.from({ length: 20 }, (_, i) => `fn-${String(i).padStart(2, '0')}`);

async function finishAllBuilds(kit: Kit, digest: string): Promise<void> {
  for (const job of await kit.buildJobs()) {
    const done = (job.status?.conditions ?? []).some((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
    if (!done) await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: digest });
  }
}

describe('kube controller: builds', () => {
  let kit: Kit;
  before(async () => {
    kit = await setupKit('kube-builds');
    await kit.clone.write(Object.assign({}, ...NAMES.map((n) => nodeFunction(n))));
    await kit.clone.commitAndPush('twenty functions');
    await kit.startController();
    await kit.createRepository('many');
  });
  after(() => kit?.dispose());

  it('starts exactly one build per function and brings all twenty to Ready', async () => {
    await eventually(async () => assert.equal((await kit.buildJobs()).length, 20), { timeoutMs: 60_000 });
    await finishAllBuilds(kit, DIGEST_A);
    await kit.serve(...NAMES);
    await eventually(async () => {
      const fns = await kit.listFunctions();
      assert.equal(fns.filter((f) => f.status?.phase === 'Ready').length, 20);
    }, { timeoutMs: 60_000 });
  });

  it('records one started and one succeeded build per function, with the image and the Job\'s times', async () => {
    // give a wrong controller time to record an outcome twice before counting
    await new Promise((r) => setTimeout(r, 1_000));
    for (const name of NAMES) assert.deepEqual(await buildOutcomes(kit, name), ['started', 'succeeded'], name);
    const fn = await kit.getFunction('fn-00');
    const [succeeded] = await kit.buildLog.list(kit.ns, 'fn-00', 1);
    assert.equal(succeeded?.imageRef, fn?.status?.imageRef);
    assert.ok(succeeded?.imageRef?.endsWith(DIGEST_A));
    assert.equal(succeeded?.codeHash, fn?.spec?.codeHash);
    assert.ok(succeeded?.finishedAt && succeeded.startedAt <= succeeded.finishedAt, JSON.stringify(succeeded));
    assert.equal(succeeded?.durationMs, Date.parse(succeeded?.finishedAt ?? '') - Date.parse(succeeded?.startedAt ?? ''));
  });

  it('rebuilds only the one function whose code changed', async () => {
    await kit.clone.write({ 'functions/fn-07/handler.js': 'exports.handle = async () => "changed";\n' });
    await kit.clone.commitAndPush('change fn-07');
    await kit.controller!.requestSync(kit.ns, 'many');
    await eventually(async () => assert.equal((await kit.buildJobs()).length, 21), { timeoutMs: 30_000 });
    // give a wrong controller time to start more builds before counting
    await new Promise((r) => setTimeout(r, 1_500));
    const jobs = await kit.buildJobs();
    assert.equal(jobs.length, 21);
    assert.equal((await kit.buildJobs('fn-07')).length, 2);
  });

  it('adopts a running build after a restart instead of starting a second one, and completes it', async () => {
    const before = await kit.buildJobs('fn-07');
    await kit.stopController();
    await kit.startController();
    await new Promise((r) => setTimeout(r, 1_500));
    const after = await kit.buildJobs('fn-07');
    assert.deepEqual(after.map((j) => j.metadata?.uid).sort(), before.map((j) => j.metadata?.uid).sort(), 'no duplicate build Job');
    const running = after.find((j) => !(j.status?.conditions ?? []).some((c) => c.status === 'True' && (c.type === 'Complete' || c.type === 'Failed')));
    assert.ok(running, 'the new build is still running');
    await markJobSucceeded(kit.kc, kit.buildNs, running.metadata?.name ?? '', { terminationMessage: DIGEST_B });
    await eventually(async () => assert.ok((await kit.getFunction('fn-07'))?.status?.imageRef?.endsWith(DIGEST_B)), { timeoutMs: 30_000 });
    await kit.serve('fn-07');
    await eventually(async () => {
      const fn = await kit.getFunction('fn-07');
      assert.ok(fn?.status?.imageRef?.endsWith(DIGEST_B), JSON.stringify(fn?.status));
      assert.equal(conditionOf(fn)?.status, 'True');
    }, { timeoutMs: 30_000 });
    const dep = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'fn-07' });
    assert.ok(dep.spec?.template.spec?.containers[0]?.image?.endsWith(DIGEST_B));
    // The adopted build was started by the first controller: no second 'started' from the second one.
    assert.deepEqual(await buildOutcomes(kit, 'fn-07'), ['started', 'succeeded', 'started', 'succeeded']);
  });

  it('reports a failed build with the builder output, and the previous image keeps serving', async () => {
    const previous = (await kit.getFunction('fn-03'))?.status?.imageRef;
    await kit.clone.write({ 'functions/fn-03/handler.js': 'exports.handle = async () => "broken build";\n' });
    await kit.clone.commitAndPush('change fn-03');
    await kit.controller!.requestSync(kit.ns, 'many');
    const job = await eventually(async () => {
      const jobs = (await kit.buildJobs('fn-03')).filter((j) => !(j.status?.conditions ?? []).some((c) => c.status === 'True'));
      assert.equal(jobs.length, 1);
      return jobs[0]!;
    }, { timeoutMs: 30_000 });
    await markJobFailed(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: 'error building image: npm ERR! missing script' });
    const fn = await eventually(async () => {
      const f = await kit.getFunction('fn-03');
      assert.equal(f?.status?.phase, 'Failed', JSON.stringify(f?.status));
      return f!;
    }, { timeoutMs: 30_000 });
    assert.match(fn.status?.message ?? '', /npm ERR! missing script/);
    assert.equal(conditionOf(fn)?.status, 'False');
    assert.equal(conditionOf(fn, 'Stalled')?.reason, 'BuildFailed');
    assert.equal(fn.status?.imageRef, previous, 'status keeps the serving image');
    const dep = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'fn-03' });
    assert.equal(dep.spec?.template.spec?.containers[0]?.image, previous);
    assert.ok(kit.logs.some((l) => l.includes('BuildFailed') && l.includes('fn-03')));
    await new Promise((r) => setTimeout(r, 1_000));
    assert.deepEqual(await buildOutcomes(kit, 'fn-03'), ['started', 'succeeded', 'started', 'failed']);
    const [failed] = await kit.buildLog.list(kit.ns, 'fn-03', 1);
    assert.equal(failed?.message, fn.status?.message);
    assert.match(failed?.message ?? '', /npm ERR! missing script/);
    assert.equal(failed?.imageRef, undefined);
  });

  it('builds a deterministically failed key again only on request, not when its Job goes away (TTL)', async () => {
    const [job] = (await kit.buildJobs('fn-03')).filter((j) => (j.status?.conditions ?? []).some((c) => c.type === 'Failed' && c.status === 'True'));
    assert.ok(job);
    await batchApi(kit.kc).deleteNamespacedJob({ namespace: kit.buildNs, name: job.metadata?.name ?? '', propagationPolicy: 'Background' });
    await eventually(async () => assert.equal((await kit.buildJobs('fn-03')).some((j) => j.metadata?.uid === job.metadata?.uid), false));
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal((await kit.buildJobs('fn-03')).filter((j) => j.metadata?.name === job.metadata?.name).length, 0, 'no rebuild of the same key');
    const fn = await kit.getFunction('fn-03');
    assert.equal(conditionOf(fn, 'Stalled')?.reason, 'BuildFailed');
    assert.equal(conditionOf(fn, 'Reconciling'), undefined);

    const at = new Date().toISOString();
    await customApi(kit.kc).patchNamespacedCustomObject(
      { group: 'sless.kube5s.ru', version: 'v1alpha1', namespace: kit.ns, plural: 'functions', name: 'fn-03', body: { metadata: { annotations: { 'sless.kube5s.ru/requestedAt': at } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const again = await eventually(async () => {
      const jobs = (await kit.buildJobs('fn-03')).filter((j) => j.metadata?.name === job.metadata?.name);
      assert.equal(jobs.length, 1, 'the request builds the key again');
      return jobs[0]!;
    }, { timeoutMs: 30_000 });
    await eventually(async () => {
      const f = await kit.getFunction('fn-03');
      assert.equal(f?.status?.lastHandledRequestedAt, at);
      assert.equal(conditionOf(f, 'Reconciling')?.reason, 'Building', JSON.stringify(f?.status?.conditions));
    });

    // An infrastructure failure (the push step, not the user's build) is retried with backoff: Reconciling, not Stalled.
    await markJobFailed(kit.kc, kit.buildNs, again.metadata?.name ?? '', { failedContainer: 'push', terminationMessage: 'registry unreachable' });
    const retrying = await eventually(async () => {
      const f = await kit.getFunction('fn-03');
      assert.equal(conditionOf(f)?.reason, 'BuildRetrying', JSON.stringify(f?.status?.conditions));
      return f!;
    }, { timeoutMs: 30_000 });
    assert.equal(conditionOf(retrying)?.status, 'False');
    assert.equal(conditionOf(retrying, 'Reconciling')?.status, 'True');
    assert.equal(conditionOf(retrying, 'Stalled'), undefined);
    assert.match(retrying.status?.message ?? '', /the push step failed .* retry 1 in \d+ s/);
  });

  it('is Ready only when the new pods serve: a crash-looping rollout is Ready=False with the reason while the old pods keep serving', async () => {
    await kit.clone.write({ 'functions/fn-11/handler.js': 'exports.handle = async () => { throw new Error("boom at start"); };\n' });
    await kit.clone.commitAndPush('crashing fn-11');
    await kit.controller!.requestSync(kit.ns, 'many');
    const job = await eventually(async () => {
      const jobs = (await kit.buildJobs('fn-11')).filter((j) => !(j.status?.conditions ?? []).some((c) => c.status === 'True'));
      assert.equal(jobs.length, 1);
      return jobs[0]!;
    }, { timeoutMs: 30_000 });
    await markJobSucceeded(kit.kc, kit.buildNs, job.metadata?.name ?? '', { terminationMessage: DIGEST_B });
    const fn = await eventually(async () => {
      const f = await kit.getFunction('fn-11');
      assert.ok(f?.status?.imageRef?.endsWith(DIGEST_B));
      assert.equal(conditionOf(f, 'Reconciling')?.status, 'True', JSON.stringify(f?.status?.conditions));
      return f!;
    }, { timeoutMs: 30_000 });
    const pods = core(kit.kc);
    const pod = await eventually(async () => {
      const list = await pods.listNamespacedPod({ namespace: kit.ns, labelSelector: 'sless.kube5s.ru/function=fn-11' });
      const fresh = list.items.find((p) => p.spec?.containers[0]?.image === fn.status?.imageRef);
      assert.ok(fresh, 'the new ReplicaSet made its pod');
      return fresh;
    }, { timeoutMs: 30_000 });
    await pods.patchNamespacedPodStatus(
      {
        namespace: kit.ns,
        name: pod.metadata?.name ?? '',
        body: {
          status: {
            phase: 'Running',
            conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date().toISOString() }],
            containerStatuses: [
              {
                name: 'function',
                image: fn.status?.imageRef ?? '',
                imageID: '',
                ready: false,
                restartCount: 4,
                state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } },
                lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() } },
              },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const failing = await eventually(async () => {
      const f = await kit.getFunction('fn-11');
      assert.equal(conditionOf(f)?.reason, 'CrashLoopBackOff', JSON.stringify(f?.status?.conditions));
      return f!;
    }, { timeoutMs: 30_000 });
    assert.equal(conditionOf(failing)?.status, 'False');
    assert.equal(failing.status?.phase, 'Failed');
    assert.match(failing.status?.message ?? '', /CrashLoopBackOff: back-off 40s .* the previous version keeps serving/);
    const dep = await apps(kit.kc).readNamespacedDeployment({ namespace: kit.ns, name: 'fn-11' });
    assert.ok((dep.status?.availableReplicas ?? 0) >= 1, 'the old ReplicaSet still serves');
  });
});
