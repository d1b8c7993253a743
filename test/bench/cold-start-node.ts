// Cold start on the real node (issue 29), run by `cold-start.bench.ts --node [wakes=10]` under
// `flock /work/.node.lock flock /work/.bench.lock` (not part of npm test; root, the node's test images).
//
// A node function is built and deployed by a real controller in the kit's namespace; its Deployment,
// Service and Function are then copied into a second namespace that no reconciler watches, so the
// bench can scale that copy to 0 and back to 1 itself (Kubernetes wake, Platform.scaling.wake, is
// another branch's: this measures everything after its scale write). Two controller replicas serve
// /fn for the whole cluster: one with SLESS_ROUTE_TO_PODS=false (the Service) and one with true (pods
// directly, docs/pod-routing.md); both are polled every 20 ms from the scale write until they answer.
// Phases, from the scale write, per wake: pod scheduled (nodeName set) → container started (running)
// → first answer through /fn (pods) / (Service) → the kubelet's Ready, each as first seen by a 20 ms poll.
import os from 'node:os';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import type { TestService } from '../run.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';
const POLL_MS = 20;

function pct(values: number[], q: number): number {
  const s = values.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? (s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number) : NaN;
}
const show = (what: string, ms: number[]) =>
  console.log(`${what.padEnd(34)} p50 ${pct(ms, 0.5).toFixed(0).padStart(5)} ms   p95 ${pct(ms, 0.95).toFixed(0).padStart(5)} ms`);
const log = (msg: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function service(modulePath: string, wanted: string, stops: Array<() => Promise<void>>): Promise<void> {
  if (process.env[wanted]) return;
  const { service: s } = (await import(modulePath)) as { service: TestService };
  const started = await s.start();
  stops.unshift(started.stop);
  Object.assign(process.env, started.env);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function coldStartOnNode(wakes: number): Promise<void> {
  const stops: Array<() => Promise<void>> = [];
  try {
    await service('../services/node.ts', 'SLESS_TEST_NODE', stops);
    await service('../services/git.ts', 'SLESS_TEST_GIT_URL', stops);
    await service('../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT', stops);
    const { setupNodeKit } = await import('../e2e-node/sless-kit.ts');
    const { freshNamespace } = await import('../helpers/kube.ts');
    const kit = await setupNodeKit('bench-cold');
    stops.unshift(() => kit.dispose());
    const service_ = await kit.startController('service', { SLESS_ROUTE_TO_PODS: 'false' });
    const pods_ = await kit.startController('pods', { SLESS_ROUTE_TO_PODS: 'true' });
    await kit.push({ 'functions/sleepy/function.yaml': 'runtime: nodejs20\nentrypoint: handler.handle\n', 'functions/sleepy/handler.js': 'exports.handle = async () => ({ ok: true });\n' }, 'v1');
    await kit.createRepository('fns');
    await kit.waitFunction('sleepy', (f) => f.status?.phase === 'Ready', 600_000);
    log('sleepy built and served by the controller');

    // The copy no reconciler watches.
    const apps = kit.kc.makeApiClient(AppsV1Api);
    const core = kit.kc.makeApiClient(CoreV1Api);
    const custom = kit.kc.makeApiClient(CustomObjectsApi);
    const copyNs = await freshNamespace(kit.kc, 'bench-cold-copy');
    stops.unshift(() => copyNs.cleanup());
    const ns = copyNs.name;
    const source = await apps.readNamespacedDeployment({ name: 'sleepy', namespace: kit.ns });
    const labels = { ...source.metadata?.labels, 'sless.kube5s.ru/function-namespace': ns };
    const template = structuredClone(source.spec!.template);
    template.metadata = { labels: { ...template.metadata?.labels, 'sless.kube5s.ru/function-namespace': ns } };
    const body: V1Deployment = {
      metadata: { name: 'sleepy', namespace: ns, labels },
      spec: { ...source.spec!, replicas: 1, template },
    };
    await apps.createNamespacedDeployment({ namespace: ns, body });
    const svc = await core.readNamespacedService({ name: 'sleepy', namespace: kit.ns });
    await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: 'sleepy', namespace: ns, labels }, spec: { selector: svc.spec!.selector!, ports: svc.spec!.ports! } },
    });
    const fn = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural: 'functions', name: 'sleepy' })) as { spec: unknown };
    await custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'functions', body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'Function', metadata: { name: 'sleepy' }, spec: fn.spec } });

    const selector = Object.entries(svc.spec!.selector!).map(([k, v]) => `${k}=${v}`).join(',');
    const listPods = async (): Promise<V1Pod[]> => (await core.listNamespacedPod({ namespace: ns, labelSelector: selector })).items;
    const answers = async (url: string): Promise<boolean> =>
      fetch(`${url}/fn/${ns}/sleepy`, { signal: AbortSignal.timeout(2_000) }).then(
        async (r) => (await r.text(), r.status === 200),
        () => false,
      );
    const scale = (replicas: number) => apps.replaceNamespacedDeploymentScale({ name: 'sleepy', namespace: ns, body: { metadata: { name: 'sleepy', namespace: ns }, spec: { replicas } } });

    const phases = { scheduled: [] as number[], started: [] as number[], pods: [] as number[], service: [] as number[], ready: [] as number[] };
    for (let i = 0; i < wakes; i++) {
      // To zero: scale down, and do not wait out the preStop sleep of a pod nobody calls.
      await scale(0);
      for (const p of await listPods()) await core.deleteNamespacedPod({ name: p.metadata!.name!, namespace: ns, gracePeriodSeconds: 0 }).catch(() => undefined);
      while ((await listPods()).length > 0) await sleep(200);
      // Both replicas must see the function at zero before the next wake.
      await sleep(1_500);

      const t0 = performance.now();
      await scale(1);
      const seen: Partial<Record<keyof typeof phases, number>> = {};
      const pollFn = async (key: 'pods' | 'service', url: string) => {
        while (seen[key] === undefined && performance.now() - t0 < 120_000) {
          if (await answers(url)) seen[key] = performance.now() - t0;
          else await sleep(POLL_MS);
        }
      };
      const pollPods = async () => {
        while ((seen.ready === undefined || seen.pods === undefined || seen.service === undefined) && performance.now() - t0 < 120_000) {
          const pod = (await listPods())[0];
          const now = performance.now() - t0;
          if (pod?.spec?.nodeName && seen.scheduled === undefined) seen.scheduled = now;
          if (pod?.status?.containerStatuses?.[0]?.state?.running && seen.started === undefined) seen.started = now;
          if (pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && seen.ready === undefined) seen.ready = now;
          await sleep(POLL_MS);
        }
      };
      await Promise.all([pollFn('pods', pods_.url), pollFn('service', service_.url), pollPods()]);
      for (const k of Object.keys(phases) as Array<keyof typeof phases>) phases[k].push(seen[k] ?? NaN);
      const f = (k: keyof typeof phases) => `${k} ${(seen[k] ?? NaN).toFixed(0)}`;
      log(`wake ${i + 1}: ${f('scheduled')}, ${f('started')}, first answer via ${f('pods')}, via ${f('service')}, kubelet ${f('ready')} (ms after the scale write)`);
    }
    console.log(`\nreal-node wake of a node function, ${wakes} wakes, ms after the scale write (load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})`);
    show('pod scheduled', phases.scheduled);
    show('container started', phases.started);
    show('first answer through /fn (pods)', phases.pods);
    show('first answer through /fn (Service)', phases.service);
    show('kubelet Ready', phases.ready);
  } finally {
    for (const stop of stops) await stop().catch((e: unknown) => console.error('stop failed:', e));
  }
}
