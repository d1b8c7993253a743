// What a write costs the API server, by kind and by how it is sent (not part of npm test):
//   node --import tsx test/bench/apiserver-cost.bench.ts [--objects 300] [--concurrency 8] [--kinds Deployment,Service]
// Against the test services' real kube-apiserver (started alone, SLESS_TEST_KUBE_CONTROLLERS=0, unless
// SLESS_TEST_KUBECONFIG points at a running one), for each kind the controller writes (Deployment,
// Service, build Job, CronJob, Function, Trigger; the objects from the controller's own builders) N
// objects are written in a fresh namespace, each way in turn:
//   - create: server-side apply of an absent object (what the controller does) vs POST;
//   - change: server-side apply of a changed object vs the same change as a JSON merge patch;
//   - unchanged: server-side apply of the object as it is (a no-op write);
// and the API server's and etcd's CPU (/proc/<pid>/stat, less their idle rate) per request is printed
// side by side. Then the client's side for Deployments: this process's CPU per request through
// client-node (KubernetesObjectApi: model classes both ways) vs the raw JSON client, and the model
// (de)serialization alone. Requests go from one keep-alive pool, `--concurrency` at a time.
import { parseArgs } from 'node:util';
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import PQueue from 'p-queue';
import { reuseConnections } from '../../src/platform/kubernetes/api-client/reuse-connections.ts';
import { runBench } from './bench-lifecycle.ts';
import { cpuMsOf, KIND_CASES, nameOf, pidsOf, rawClient, type KindCase, type RawClient } from './apiserver-cost-kit.ts';
import { loadAverage, log, sleep } from './scale-bench.ts';

const { values } = parseArgs({
  options: {
    objects: { type: 'string', default: '300' },
    concurrency: { type: 'string', default: '8' },
    kinds: { type: 'string' },
  },
});
const N = Number(values.objects);
const CONCURRENCY = Number(values.concurrency);
const kinds = values.kinds ? KIND_CASES.filter((k) => values.kinds!.split(',').includes(k.kind)) : KIND_CASES;
const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';
const Q = '?fieldManager=sless';

interface Cost {
  apiserverMs: number;
  etcdMs: number;
  selfMs: number;
  wallMs: number;
}

runBench(async (life) => {
  if (!process.env.SLESS_TEST_KUBECONFIG) {
    process.env.SLESS_TEST_KUBE_CONTROLLERS ??= '0';
    const { service } = await import('../services/kube.ts');
    const started = await service.start();
    life.onStop(started.stop);
    Object.assign(process.env, started.env);
  }
  const kc = new KubeConfig();
  kc.loadFromFile(process.env.SLESS_TEST_KUBECONFIG!);
  reuseConnections(kc);
  const raw = rawClient(kc);
  life.onStop(() => raw.close());
  const [apiserver] = await pidsOf('kube-apiserver');
  const [etcd] = await pidsOf('etcd');
  if (!apiserver || !etcd) throw new Error('no kube-apiserver or etcd process found on this machine');
  // N Services need N cluster IPs at a time: the test cluster's range is a /24 (as scale-bench.ts widens it).
  await raw.send('POST', '/apis/networking.k8s.io/v1/servicecidrs', JSON.stringify({ metadata: { name: 'sless-bench' }, spec: { cidrs: ['10.96.0.0/20'] } }), undefined, [409]);

  // What the API server and etcd spend with nothing asked of them (leases, compaction, their own loops).
  const idle0 = { a: await cpuMsOf(apiserver), e: await cpuMsOf(etcd), t: Date.now() };
  await sleep(5000);
  const idleRate = { a: ((await cpuMsOf(apiserver)) - idle0.a) / (Date.now() - idle0.t), e: ((await cpuMsOf(etcd)) - idle0.e) / (Date.now() - idle0.t) };
  log(`idle: kube-apiserver ${(idleRate.a * 1000).toFixed(0)} ms/s, etcd ${(idleRate.e * 1000).toFixed(0)} ms/s; load average ${loadAverage()}`);

  /** Runs `one(i)` for i < N, `CONCURRENCY` at a time; the CPU each process spent meanwhile, per request. */
  const measure = async (one: (i: number) => Promise<unknown>): Promise<Cost> => {
    await sleep(300);
    const before = { a: await cpuMsOf(apiserver), e: await cpuMsOf(etcd), s: process.cpuUsage(), t: Date.now() };
    const queue = new PQueue({ concurrency: CONCURRENCY });
    await Promise.all(Array.from({ length: N }, (_, i) => queue.add(() => one(i))));
    const wall = Date.now() - before.t;
    await sleep(300); // work the API server finishes after answering (watch cache, etcd's fsync batches)
    const span = Date.now() - before.t;
    const self = process.cpuUsage(before.s);
    return {
      apiserverMs: Math.max(0, (await cpuMsOf(apiserver)) - before.a - idleRate.a * span) / N,
      etcdMs: Math.max(0, (await cpuMsOf(etcd)) - before.e - idleRate.e * span) / N,
      selfMs: (self.user + self.system) / 1000 / N,
      wallMs: wall / N,
    };
  };
  let nsCount = 0;
  const namespace = async (): Promise<string> => {
    const name = `cost-${process.pid}-${nsCount++}`;
    await raw.send('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name } }));
    return name;
  };
  const rows: Array<[string, string, Cost]> = [];
  const row = (kind: string, way: string, cost: Cost) => {
    rows.push([kind, way, cost]);
    log(`${kind.padEnd(10)} ${way.padEnd(28)} kube-apiserver ${cost.apiserverMs.toFixed(2)} ms, etcd ${cost.etcdMs.toFixed(2)} ms, client ${cost.selfMs.toFixed(2)} ms per request; ${cost.wallMs.toFixed(1)} ms wall per request`);
  };

  for (const k of kinds) {
    const applyPath = (ns: string, i: number) => `${k.collection(ns)}/${nameOf(k.object(ns, i))}${Q}&force=true`;
    // create: apply (absent) in one namespace, POST in another
    const nsApply = await namespace();
    row(k.kind, 'create: apply (absent)', await measure((i) => raw.send('PATCH', applyPath(nsApply, i), JSON.stringify(k.object(nsApply, i)), APPLY)));
    const nsPost = await namespace();
    row(k.kind, 'create: POST', await measure((i) => raw.send('POST', `${k.collection(nsPost)}${Q}`, JSON.stringify(k.object(nsPost, i)))));
    // unchanged: apply the same again (over the applied ones)
    row(k.kind, 'unchanged: apply', await measure((i) => raw.send('PATCH', applyPath(nsApply, i), JSON.stringify(k.object(nsApply, i)), APPLY)));
    // change: apply over the applied ones, merge patch over the POSTed ones
    row(k.kind, 'change: apply', await measure((i) => raw.send('PATCH', applyPath(nsApply, i), JSON.stringify(k.changed(nsApply, i)), APPLY)));
    row(
      k.kind,
      'change: merge patch',
      await measure((i) => raw.send('PATCH', `${k.collection(nsPost)}/${nameOf(k.object(nsPost, i))}${Q}`, JSON.stringify(k.mergePatch(nsPost, i)), MERGE)),
    );
    row(k.kind, 'change: apply over POSTed', await measure((i) => raw.send('PATCH', applyPath(nsPost, i), JSON.stringify(k.changed(nsPost, i)), APPLY)));
    await deleteAll(raw, k, [nsApply, nsPost]);
  }

  // The client's side: the same applies through client-node vs the raw client, and the model classes alone.
  const dep = KIND_CASES.find((k) => k.kind === 'Deployment')!;
  const api = KubernetesObjectApi.makeApiClient(kc);
  const nsClient = await namespace();
  await api.patch(dep.object(nsClient, 0) as KubernetesObject, undefined, undefined, 'sless', true, PatchStrategy.ServerSideApply); // discovery, once
  row('Deployment', 'client-node apply (absent)', await measure((i) => api.patch(dep.object(nsClient, i + 1) as KubernetesObject, undefined, undefined, 'sless', true, PatchStrategy.ServerSideApply)));
  const nsRaw = await namespace();
  row('Deployment', 'raw JSON apply (absent)', await measure((i) => raw.send('PATCH', `${dep.collection(nsRaw)}/${nameOf(dep.object(nsRaw, i))}${Q}&force=true`, JSON.stringify(dep.object(nsRaw, i)), APPLY)));
  const answer = (await raw.send('GET', `${dep.collection(nsRaw)}/${nameOf(dep.object(nsRaw, 0))}`)).json as Record<string, unknown>;
  const text = JSON.stringify(answer);
  const body = dep.object(nsRaw, 0);
  const per = (f: () => unknown, n = 2000) => {
    for (let i = 0; i < 200; i++) f();
    const t = process.cpuUsage();
    for (let i = 0; i < n; i++) f();
    const d = process.cpuUsage(t);
    return (d.user + d.system) / 1000 / n;
  };
  log(
    `Deployment in process, per object: client-node request body ${per(() => JSON.stringify(ObjectSerializer.serialize(body, 'V1Deployment'))).toFixed(3)} ms vs JSON.stringify ${per(() => JSON.stringify(body)).toFixed(3)} ms; ` +
      `answer (${text.length} bytes, managedFields included) ${per(() => ObjectSerializer.deserialize(JSON.parse(text), 'V1Deployment')).toFixed(3)} ms vs JSON.parse ${per(() => JSON.parse(text)).toFixed(3)} ms`,
  );
  await deleteAll(raw, dep, [nsClient, nsRaw]);

  console.log('\nper request, CPU ms (kube-apiserver / etcd / client), wall ms; N =', N, 'concurrency', CONCURRENCY, 'load average', loadAverage());
  console.log('| kind | way | kube-apiserver | etcd | client | wall |\n| --- | --- | --- | --- | --- | --- |');
  for (const [kind, way, c] of rows) console.log(`| ${kind} | ${way} | ${c.apiserverMs.toFixed(2)} | ${c.etcdMs.toFixed(2)} | ${c.selfMs.toFixed(2)} | ${c.wallMs.toFixed(1)} |`);
});

/** Deletes the kind's objects in those namespaces (their Service IPs freed) and the namespaces. */
async function deleteAll(raw: RawClient, k: KindCase, namespaces: string[]): Promise<void> {
  for (const ns of namespaces) {
    if (k.kind === 'Service') {
      const list = (await raw.send('GET', k.collection(ns))).json as { items: Array<{ metadata: { name: string } }> };
      const queue = new PQueue({ concurrency: 8 });
      await Promise.all(list.items.map((s) => queue.add(() => raw.send('DELETE', `${k.collection(ns)}/${s.metadata.name}`, undefined, undefined, [404]))));
    } else await raw.send('DELETE', k.collection(ns), undefined, undefined, [404, 405]);
    await raw.send('DELETE', `/api/v1/namespaces/${ns}`, undefined, undefined, [404]);
  }
}
