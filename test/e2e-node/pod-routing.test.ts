// /fn reaches a Node.js function's pods directly on the real node (issue 29, docs/pod-routing.md): after a
// push that changes the code, the new pod serves as soon as it answers, not when the kubelet's next
// probe, the Deployment status and kube-proxy have caught up, and no call fails on the way. The test
// watches the new pod itself (its IP's /health, polled every 50 ms from the host, and its Ready
// condition) beside a request loop through /fn, and reports the times between.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { setupNodeKit, type NodeKit } from './sless-kit.ts';

const manifest = 'name: hello\nruntime: nodejs20\nentrypoint: handler.handle\n';
const handler = (version: string): string => `exports.handle = async () => ({ version: '${version}' });\n`;
const SELECTOR = 'sless.kube5s.ru/function=hello,sless.kube5s.ru/component=function';

/** The first moment (ms, performance.now) each thing was seen about the pods that were not there at the start. */
interface PodMoments {
  answered?: number;
  ready?: number;
  oldTerminating?: number;
}

/** Polls the function's pods every 50 ms: a new pod's own /health from the host, its Ready condition, the old pod's deletion. */
function watchNewPod(core: CoreV1Api, namespace: string, oldPods: ReadonlySet<string>): { moments: PodMoments; stop(): void } {
  const moments: PodMoments = {};
  let stopped = false;
  void (async () => {
    while (!stopped) {
      const pods: V1Pod[] = (await core.listNamespacedPod({ namespace, labelSelector: SELECTOR }).catch(() => ({ items: [] as V1Pod[] }))).items;
      const now = performance.now();
      for (const pod of pods) {
        const name = pod.metadata?.name ?? '';
        if (oldPods.has(name)) {
          if (pod.metadata?.deletionTimestamp && moments.oldTerminating === undefined) moments.oldTerminating = now;
          continue;
        }
        if (moments.ready === undefined && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) moments.ready = now;
        const ip = pod.status?.podIP;
        if (ip && moments.answered === undefined) {
          const ok = await fetch(`http://${ip}:8080/health`, { signal: AbortSignal.timeout(300) }).then((r) => r.ok, () => false);
          if (ok) moments.answered = performance.now();
        }
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return { moments, stop: () => (stopped = true) };
}

describe('/fn routes to pods on the real node', { timeout: 900_000 }, () => {
  let kit: NodeKit;
  let core: CoreV1Api;

  before(async () => {
    kit = await setupNodeKit('e2e-pod-routing');
    core = kit.kc.makeApiClient(CoreV1Api);
    await kit.startController();
    await kit.push({ 'functions/hello/function.yaml': manifest, 'functions/hello/handler.js': handler('v1') }, 'v1');
    await kit.createRepository('fns');
    await kit.waitFunction('hello', (f) => f.status?.phase === 'Ready', 600_000);
  });
  after(() => kit?.dispose());

  it('serves the new code as soon as the new pod answers, with no failed call during the rollout', async () => {
    const first = await kit.callFn('hello');
    assert.deepEqual(await first.json(), { version: 'v1' });
    assert.match(kit.controllers[0]!.output(), /pod \S+ entered \/fn's rotation/, 'the controller routes to the pod itself');

    const oldPods = new Set((await core.listNamespacedPod({ namespace: kit.ns, labelSelector: SELECTOR })).items.map((p) => p.metadata?.name ?? ''));
    const watch = watchNewPod(core, kit.ns, oldPods);
    const failures: string[] = [];
    let calls = 0;
    let firstNew: number | undefined;
    let lastOld: number | undefined;
    let pushedAt = 0;
    const loop = (async () => {
      const deadline = performance.now() + 300_000;
      // Until the new code serves and the old pod has been going away for 3 s.
      while (performance.now() < deadline && !(watch.moments.oldTerminating !== undefined && performance.now() - watch.moments.oldTerminating > 3_000)) {
        calls++;
        try {
          const res = await kit.callFn('hello');
          const text = await res.text();
          const now = performance.now();
          if (res.status !== 200) failures.push(`${res.status} ${text.slice(0, 200)}`);
          else if ((JSON.parse(text) as { version: string }).version === 'v2') firstNew ??= now;
          else lastOld = now;
        } catch (error) {
          failures.push(String(error));
        }
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    pushedAt = performance.now();
    await kit.push({ 'functions/hello/handler.js': handler('v2') }, 'v2');
    assert.equal((await kit.webhook('fns')).status, 202);
    await loop;
    watch.stop();

    const { answered, ready, oldTerminating } = watch.moments;
    const rel = (t: number | undefined) => (t === undefined ? 'never' : `${((t - pushedAt) / 1000).toFixed(2)} s`);
    const report =
      `push → new pod answers ${rel(answered)}, → first v2 through /fn ${rel(firstNew)}, → new pod Ready (kubelet) ${rel(ready)}, ` +
      `→ old pod terminating ${rel(oldTerminating)}, last v1 ${rel(lastOld)}; ${calls} calls, ${failures.length} failed`;
    console.log(report);
    assert.deepEqual(failures, [], report);
    assert.ok(firstNew !== undefined && answered !== undefined, report);
    // /fn probes the new pod every 50 ms and the loop calls every ~25 ms: the first v2 comes within a
    // few of those periods of the pod's first answer (the host's own poll runs every 50 ms as well).
    assert.ok(firstNew - answered < 1_000, `the first v2 came ${(firstNew - answered).toFixed(0)} ms after the new pod answered: ${report}`);
    assert.ok(oldTerminating !== undefined && lastOld !== undefined && lastOld < oldTerminating + 1_000, `v1 answered after the old pod was terminating: ${report}`);
  });
});
