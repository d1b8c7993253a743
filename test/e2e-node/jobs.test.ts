// Job mode on the real node: a FunctionJob's message is what the function's pod really printed, a
// cron schedule runs the function image in job mode on time, and a syntax error leaves the
// previous version serving while the Function says why.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { BatchV1Api, CoreV1Api } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.ts';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

const manifest = `runtime: python3.11
entrypoint: handler.handle
schedules:
  - name: tick
    cron: "* * * * *"
    event: {input: [1, 2]}
jobs:
  - name: sum
    run_id: 1
    event: {input: [100, 200, 300]}
`;
const handler = `def handle(event, context=None):
    numbers = event.get("input", []) if isinstance(event, dict) else []
    return {"input": numbers, "sum": sum(numbers)}
`;

describe('job mode on the real node', { timeout: 900_000 }, () => {
  let kit: NodeKit;

  before(async () => {
    kit = await setupNodeKit('e2e-node-jobs');
    await kit.startController();
    await kit.push({ 'functions/sum/function.yaml': manifest, 'functions/sum/handler.py': handler }, 'sum');
    await kit.createRepository('fns');
  });
  after(() => kit?.dispose());

  it("puts the pod's real output in the FunctionJob's message", async () => {
    await kit.waitFunction('sum', (f) => f.status?.phase === 'Ready');
    const job = await eventually(
      async () => {
        const j = await kit.getFunctionJob('sum-sum');
        assert.equal(j?.status?.phase, 'Succeeded', JSON.stringify(j?.status));
        return j!;
      },
      { timeoutMs: 180_000, intervalMs: 1_000 },
    );
    assert.deepEqual(JSON.parse(job.status!.message!), { input: [100, 200, 300], sum: 600 });
    assert.equal(job.status!.message, '{"input":[100,200,300],"sum":600}');
  });

  it('runs the cron schedule with the function image in job mode, on time', async () => {
    const fn = await kit.getFunction('sum');
    const batch = kit.kc.makeApiClient(BatchV1Api);
    const core = kit.kc.makeApiClient(CoreV1Api);
    const cron = await batch.readNamespacedCronJob({ namespace: kit.ns, name: 'sum-cron-tick' });
    assert.equal(cron.spec?.schedule, '* * * * *');
    // The next minute boundary plus the time to start a pod.
    const run = await eventually(
      async () => {
        const jobs = await batch.listNamespacedJob({ namespace: kit.ns });
        const done = jobs.items.find((j) => j.metadata?.ownerReferences?.some((o) => o.kind === 'CronJob' && o.name === 'sum-cron-tick') && (j.status?.succeeded ?? 0) >= 1);
        assert.ok(done, `no finished run of the CronJob yet: ${jobs.items.map((j) => `${j.metadata?.name}:${JSON.stringify(j.status?.conditions)}`).join(' ')}`);
        return done;
      },
      { timeoutMs: 150_000, intervalMs: 2_000 },
    );
    const pods = await core.listNamespacedPod({ namespace: kit.ns, labelSelector: `job-name=${run.metadata!.name}` });
    const pod = pods.items.find((p) => p.status?.phase === 'Succeeded')!;
    const container = pod.spec!.containers[0]!;
    assert.equal(container.image, fn!.status!.imageRef);
    assert.ok(container.env?.some((e) => e.name === 'SLESS_MODE' && e.value === 'job'), 'runs in job mode');
    const scheduled = new Date(String(run.metadata!.creationTimestamp));
    assert.ok(scheduled.getUTCSeconds() < 30, `created at ${scheduled.toISOString()}, right after a minute boundary`);
    const log = await core.readNamespacedPodLog({ namespace: kit.ns, name: pod.metadata!.name! });
    assert.match(log, /"sum":\s*3/);
  });

  it('keeps serving the previous version when new code does not even compile, and says why', async () => {
    const before = await (await kit.callFn('sum', { method: 'POST', body: JSON.stringify({ input: [2, 3] }), headers: { 'content-type': 'application/json' } })).json();
    assert.deepEqual(before, { input: [2, 3], sum: 5 });
    await kit.push({ 'functions/sum/handler.py': 'def handle(event, context=None)\n    return {}\n' }, 'syntax error');
    assert.equal((await kit.webhook('fns')).status, 202);
    const fn = await kit.waitFunction('sum', (f) => {
      const ready = f.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.status === 'False' && /SyntaxError|invalid syntax|expected ':'/i.test(`${ready.message} ${f.status?.message}`);
    });
    assert.notEqual(fn.status?.phase, 'Ready');
    const res = await kit.callFn('sum', { method: 'POST', body: JSON.stringify({ input: [2, 3] }), headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { input: [2, 3], sum: 5 });
  });
});
