// Controller benchmark (not part of npm test):
//   node --import tsx test/bench/controller.bench.ts [--functions 1000] [--repositories 1]
//        [--sless-bin dist-bin/sless.js] [--soak-seconds 0] [--push-every 10] [--cpu-prof DIR] [--controller-log FILE]
// R FunctionRepositories with N/R function folders each on a real git server, reconciled by a real
// `sless controller` process (one replica) against a real kube-apiserver and SeaweedFS. Nothing runs
// containers here, so a harness plays kaniko: every build Job gets a pod that "printed" an image
// digest, and a Job status that says Complete. Reported, each beside what it is compared with:
//   - steady state: seconds from creating the repositories to every Function Ready at its generation
//     and every repository Ready;
//   - API requests the controller made per function, counted exactly by a counting HTTP proxy between
//     the controller and the API server (by verb and resource), with and without leader election;
//   - the controller's RSS at steady state and its peak (VmHWM);
//   - a no-change sync: wall time, API requests, controller CPU;
//   - a push to one function of repository 0 (its sync requested as the webhook does) → that Function's
//     new codeHash, with every other repository asked to sync at the same moment (busy);
//   - a controller restart: to the first no-change sync, with the builds and writes it made (goal 0, 0);
//   - optionally a soak: a push every --push-every seconds for --soak-seconds, RSS and event-loop p99
//     sampled from the controller's /metrics.
// Starts its own cluster (without kube-controller-manager, so only the controller and the harness talk
// to the API server), S3 server and git server unless SLESS_TEST_* variables point at running ones, and
// stops all of it on success, failure and SIGTERM (bench-lifecycle.ts).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CustomObjectsApi, KubeConfig, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { FunctionResource, RepositoryResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { createRepo, startGitServer, WorkClone } from '../helpers/git-server.ts';
import { freshNamespace } from '../helpers/kube.ts';
import type { TestService } from '../run.ts';
import { runBench, type BenchLifecycle } from './bench-lifecycle.ts';
import { countingProxy, procStatus, startBuildHarness, startControllerProcess, total, writesOf, writesPerObject, type ControllerProcess } from './controller-bench-kit.ts';

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '500' },
    repositories: { type: 'string', default: '1' },
    timeout: { type: 'string', default: '900' },
    // e.g. a bin/sless.js beside a compiled dist/ (npm run build), to measure the image's memory rather than tsx's
    'sless-bin': { type: 'string' },
    'soak-seconds': { type: 'string', default: '0' },
    'push-every': { type: 'string', default: '10' },
    // A folder for V8 CPU profiles of the controller (--cpu-prof; written when each controller process exits).
    'cpu-prof': { type: 'string' },
    // A file that receives everything the controller prints (at SLESS_LOG_LEVEL, warn unless set).
    'controller-log': { type: 'string' },
  },
});
const N = Number(values.functions);
const R = Math.max(1, Number(values.repositories));
const PER_REPO = Math.ceil(N / R);
const TIMEOUT_MS = Number(values.timeout) * 1000;
const SOAK_S = Number(values['soak-seconds']);
const PUSH_EVERY_S = Number(values['push-every']);
const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';
const root = fileURLToPath(new URL('../..', import.meta.url));
const DIGEST = `sha256:${'c'.repeat(64)}`;
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

async function service(life: BenchLifecycle, modulePath: string, wanted: string): Promise<void> {
  if (process.env[wanted]) return;
  const { service: s } = (await import(modulePath)) as { service: TestService };
  const t0 = Date.now();
  const started = await s.start();
  life.onStop(started.stop);
  Object.assign(process.env, started.env);
  log(`${s.name} up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

function functionFiles(i: number, variant = 0): Record<string, string> {
  const name = `fn-${String(i).padStart(4, '0')}`;
  return {
    [`functions/${name}/function.yaml`]: `name: ${name}\nruntime: nodejs20\nenv:\n  INDEX: "${i}"\nschedules:\n  - name: nightly\n    cron: "0 3 * * *"\n`,
    [`functions/${name}/handler.js`]: `exports.handle = async () => ({ i: ${i}, v: ${variant} });\n`,
  };
}

const summary = (counts: ReadonlyMap<string, number>, top = 12) =>
  [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

runBench(async (life) => {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'sless-bench-'));
  life.onStop(() => rm(tmp, { recursive: true, force: true }));
  // Only the controller and the harness should talk to the API server.
  process.env.SLESS_TEST_KUBE_CONTROLLERS ??= '0';
  await service(life, '../services/kube.ts', 'SLESS_TEST_KUBECONFIG');
  await service(life, '../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT');
  const gitServer = await startGitServer();
  life.onStop(async () => {
    await gitServer.stop();
    await rm(gitServer.root, { recursive: true, force: true });
  });
  const need = (name: string): string => {
    const v = process.env[name];
    if (!v) throw new Error(`${name} is not set after starting the services`);
    return v;
  };

  const kc = new KubeConfig();
  kc.loadFromFile(need('SLESS_TEST_KUBECONFIG'));
  const custom = kc.makeApiClient(CustomObjectsApi);
  const ns = await freshNamespace(kc, 'bench');
  const buildNs = await freshNamespace(kc, 'bench-builds');
  const system = await freshNamespace(kc, 'bench-system');
  life.onStop(async () => {
    for (const n of [ns, buildNs, system]) await n.cleanup().catch(() => undefined);
  });

  // The test cluster's service range is a /24; N functions need N Services. A second ServiceCIDR
  // (GA since Kubernetes 1.33) widens it without restarting the API server.
  await kc
    .makeApiClient(NetworkingV1Api)
    .createServiceCIDR({ body: { metadata: { name: 'sless-bench' }, spec: { cidrs: ['10.96.0.0/20'] } } })
    .catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });

  let t0 = Date.now();
  const repos: Array<{ name: string; url: string; clone: WorkClone; first: number; count: number }> = [];
  for (let r = 0; r < R; r++) {
    const first = r * PER_REPO;
    const count = Math.min(PER_REPO, N - first);
    if (count <= 0) break;
    const repo = await createRepo(gitServer, `bench-controller-${r}`);
    const clone = await WorkClone.create(repo);
    life.onStop(() => rm(clone.dir, { recursive: true, force: true }));
    const files: Record<string, string> = {};
    for (let i = first; i < first + count; i++) Object.assign(files, functionFiles(i));
    await clone.write(files);
    await clone.commitAndPush(`${count} functions`);
    repos.push({ name: `bench-${r}`, url: repo.url, clone, first, count });
  }
  log(`${repos.length} repositories with ${N} functions pushed in ${Date.now() - t0} ms; load average ${load()}`);

  // The controller process talks to the API server through the counting proxy.
  const proxy = await countingProxy(new URL(kc.getCurrentCluster()!.server));
  life.onStop(() => proxy.close());
  const viaProxy = new KubeConfig();
  const user = kc.getCurrentUser()!;
  // client-node refuses plain http unless TLS checks are off (there is no TLS to check on loopback).
  viaProxy.loadFromOptions({
    clusters: [{ name: 'proxy', server: proxy.url, skipTLSVerify: true }],
    users: [user],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: user.name }],
    currentContext: 'proxy',
  });
  const kubeconfigPath = path.join(tmp, 'kubeconfig');
  await writeFile(kubeconfigPath, viaProxy.exportConfig());
  // The image's Node options (deploy/Dockerfile `ENV NODE_OPTIONS=...`): the controller runs as the image runs it.
  const imageNodeOptions = /^ENV NODE_OPTIONS=(.*)$/m.exec(await readFile(path.join(root, 'deploy/Dockerfile'), 'utf8'))?.[1]?.trim() ?? '';
  const nodeOptions = [process.env.NODE_OPTIONS ?? '', imageNodeOptions, values['cpu-prof'] ? `--cpu-prof --cpu-prof-dir=${path.resolve(values['cpu-prof'])}` : ''].filter(Boolean).join(' ');
  log(`controller NODE_OPTIONS: ${nodeOptions || '(none)'}`);
  const controllerEnv = {
    SLESS_AUTH_INSECURE: '1',
    SLESS_S3_ENDPOINT: need('SLESS_TEST_S3_ENDPOINT'),
    SLESS_S3_BUCKET: need('SLESS_TEST_S3_BUCKET'),
    AWS_ACCESS_KEY_ID: need('SLESS_TEST_S3_ACCESS_KEY'),
    AWS_SECRET_ACCESS_KEY: need('SLESS_TEST_S3_SECRET_KEY'),
    SLESS_REGISTRY: 'registry.bench:5000/sless',
    SLESS_BUILD_NAMESPACE: buildNs.name,
    // Kept across the restart below, as the volume in deploy/ keeps it across pod restarts.
    SLESS_CACHE_DIR: path.join(tmp, 'cache'),
    SLESS_GIT_ALLOWED_HOSTS: '127.0.0.1',
    // The defaults (500 per repository, 1,000 per namespace) are below what the benchmark asks for.
    SLESS_MAX_FUNCTIONS_PER_REPOSITORY: String(Math.max(500, PER_REPO)),
    SLESS_MAX_FUNCTIONS_PER_NAMESPACE: String(Math.max(1000, N * 2)),
    // The harness finishes every build at once; production lets one namespace run 10 at a time.
    SLESS_MAX_BUILDS_PER_NAMESPACE: String(N * 2),
    SLESS_LOG_LEVEL: process.env.SLESS_LOG_LEVEL ?? 'warn',
    POD_NAMESPACE: system.name,
    POD_NAME: 'bench-controller',
    ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
  };
  let controller: ControllerProcess | undefined;
  life.onStop(() => controller?.stop());
  const startController = async (): Promise<ControllerProcess> => {
    const watchesBefore = [...proxy.counts.entries()].filter(([k]) => k.startsWith('WATCH ')).reduce((a, [, v]) => a + v, 0);
    const c = await startControllerProcess({ bin: values['sless-bin'] ?? path.join(root, 'bin/sless.js'), cwd: root, kubeconfig: kubeconfigPath, env: controllerEnv, ...(values['controller-log'] ? { logFile: path.resolve(values['controller-log']) } : {}) });
    controller = c;
    // Wait until it leads and its informers watch (tsx compiles the sources first when there is no dist/).
    for (const t = Date.now(); [...proxy.counts.entries()].filter(([k]) => k.startsWith('WATCH ')).reduce((a, [, v]) => a + v, 0) - watchesBefore < 5; ) {
      if (c.child.exitCode !== null) throw new Error(`the controller exited with ${c.child.exitCode}:\n${c.log.join('').slice(-4000)}`);
      if (Date.now() - t > 180_000) throw new Error(`the controller did not start watching within 180 s:\n${c.log.join('').slice(-4000)}`);
      await sleep(200);
    }
    return c;
  };
  const started = Date.now();
  let c = await startController();
  const startMs = Date.now() - started;
  await sleep(1000);
  const idle = await procStatus(c.pid);
  log(`controller pid ${c.pid} watching after ${startMs} ms, RSS ${idle.rssMb.toFixed(0)} MB before any work; ${proxy.total()} requests so far`);

  const harness = startBuildHarness(kc, buildNs.name, DIGEST, log, ns.name);
  life.onStop(() => harness.stop());
  const getRepo = async (name: string) =>
    (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functionrepositories', name })) as RepositoryResource & {
      status?: { lastHandledRequestedAt?: string };
    };
  const listFunctions = async () =>
    ((await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functions' })) as { items: FunctionResource[] }).items;
  const requestSync = (name: string, at: string) =>
    custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: ns.name, plural: 'functionrepositories', name, body: { metadata: { annotations: { [`${GROUP}/requestedAt`]: at } } } },
      mergePatch,
    );

  const before = proxy.total();
  const countsBeforeRepo = new Map(proxy.counts);
  const objectsBeforeRepo = new Map(proxy.perObject);
  t0 = Date.now();
  for (const r of repos) {
    await custom.createNamespacedCustomObject({
      group: GROUP,
      version: VERSION,
      namespace: ns.name,
      plural: 'functionrepositories',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name: r.name }, spec: { url: r.url, interval: '10m' } },
    });
  }
  let peakHwm = 0;
  let lastReport = 0;
  for (;;) {
    if (Date.now() - t0 > TIMEOUT_MS) throw new Error(`no steady state after ${TIMEOUT_MS / 1000} s; controller log tail:\n${c.log.join('').slice(-4000)}`);
    const list = await listFunctions();
    const ready = list.filter((f) => f.status?.phase === 'Ready' && f.status.observedGeneration === f.metadata?.generation).length;
    let reposReady = 0;
    for (const r of repos) if ((await getRepo(r.name)).status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True') reposReady++;
    peakHwm = Math.max(peakHwm, (await procStatus(c.pid)).hwmMb);
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      log(`${((Date.now() - t0) / 1000).toFixed(0)} s: ${list.length} Functions, ${ready} Ready, ${harness.builds} builds, ${reposReady}/${repos.length} repositories ready`);
    }
    if (list.length === N && ready === N && reposReady === repos.length) break;
    await sleep(500);
  }
  const steadySec = (Date.now() - t0) / 1000;
  const lastBuildSec = (harness.lastBuildSeenAt - t0) / 1000;
  await sleep(2000);
  const steady = await procStatus(c.pid);
  const requests = proxy.total() - before;
  const countsAtSteady = new Map(proxy.counts);
  log(`steady state in ${steadySec.toFixed(1)} s (last build Job appeared at ${lastBuildSec.toFixed(1)} s); ${harness.builds} build Jobs; load average ${load()}`);
  const leases = [...countsAtSteady].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0);
  const leasesBefore = [...countsBeforeRepo].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0);
  const work = requests - (leases - leasesBefore);
  log(`API requests by the controller: ${requests} = ${(requests / N).toFixed(2)} per function; without leader election ${work} = ${(work / N).toFixed(2)} per function; at start (lists, watches, lease) ${before}`);
  const delta = (since: ReadonlyMap<string, number>) =>
    new Map([...proxy.counts].map(([k, v]): [string, number] => [k, v - (since.get(k) ?? 0)]).filter(([, v]) => v > 0));
  log(`  by verb/resource: ${summary(delta(countsBeforeRepo))}`);
  log(`  writes per object: ${writesPerObject(proxy.perObject, objectsBeforeRepo)}`);
  log(`controller RSS ${steady.rssMb.toFixed(0)} MB at steady state, peak ${Math.max(peakHwm, steady.hwmMb).toFixed(0)} MB; CPU ${(steady.cpuMs / 1000).toFixed(1)} s`);

  /** Requests a sync of `name` and waits until its status says it handled it. */
  const syncOnce = async (name: string): Promise<number> => {
    const at = new Date().toISOString();
    const t1 = Date.now();
    await requestSync(name, at);
    for (;;) {
      if ((await getRepo(name)).status?.lastHandledRequestedAt === at) return Date.now() - t1;
      if (Date.now() - t1 > 120_000) throw new Error(`a sync of ${name} did not finish within 120 s`);
      await sleep(50);
    }
  };

  // A no-change sync of repository 0.
  const resync: number[] = [];
  for (let round = 0; round < 3; round++) {
    const countsBefore = new Map(proxy.counts);
    const cpuBefore = (await procStatus(c.pid)).cpuMs;
    const wall = await syncOnce(repos[0]!.name);
    await sleep(1000);
    const cpu = (await procStatus(c.pid)).cpuMs - cpuBefore;
    resync.push(wall);
    log(`no-change sync ${round + 1}: ${wall} ms wall, ${total(delta(countsBefore))} API requests (${summary(delta(countsBefore))}), controller CPU ${cpu.toFixed(0)} ms`);
  }

  // One push: a code change in repository 0's first function, its sync requested while every other repository is asked to sync too.
  const pushLatency: number[] = [];
  let variant = 1;
  const pushOne = async (busy: boolean): Promise<number> => {
    const r = repos[0]!;
    const name = `fn-${String(r.first).padStart(4, '0')}`;
    const oldHash = (await listFunctions()).find((f) => f.metadata?.name === name)?.spec?.codeHash;
    await r.clone.write(functionFiles(r.first, variant++));
    await r.clone.commitAndPush(`change ${name}`);
    const t1 = Date.now();
    const at = new Date().toISOString();
    await requestSync(r.name, at);
    if (busy) await Promise.all(repos.slice(1).map((o) => requestSync(o.name, at)));
    for (;;) {
      const fn = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functions', name })) as FunctionResource;
      if (fn.spec?.codeHash && fn.spec.codeHash !== oldHash) return Date.now() - t1;
      if (Date.now() - t1 > 120_000) throw new Error(`the push to ${name} did not reach its Function within 120 s`);
      await sleep(25);
    }
  };
  for (let round = 0; round < 3; round++) pushLatency.push(await pushOne(repos.length > 1));
  log(`push → Function updated: ${pushLatency.join(', ')} ms${repos.length > 1 ? ` (every other of the ${repos.length} repositories asked to sync at the same moment)` : ''}`);

  // Wait for the pushed builds to settle before the restart.
  for (const t = Date.now(); ; ) {
    const list = await listFunctions();
    if (list.every((f) => f.status?.phase === 'Ready' && f.status.observedGeneration === f.metadata?.generation)) break;
    if (Date.now() - t > 120_000) throw new Error('the pushed functions did not become Ready within 120 s');
    await sleep(500);
  }
  await sleep(3000);

  // Restart: stop the controller, start a new one over the same git cache, time the first no-change sync of every repository.
  await c.stop();
  const buildsBeforeRestart = harness.builds;
  const countsBeforeRestart = new Map(proxy.counts);
  const objectsBeforeRestart = new Map(proxy.perObject);
  const restartAt = Date.now();
  c = await startController();
  await Promise.all(repos.map((r) => syncOnce(r.name)));
  const restartMs = Date.now() - restartAt;
  await sleep(5000);
  const restartWrites = writesOf(proxy.counts, countsBeforeRestart);
  // Our own sync requests are writes of the benchmark, not of the controller; status writes of the synced repositories are expected.
  log(
    `restart → first no-change sync of all ${repos.length} repositories: ${restartMs} ms; ${harness.builds - buildsBeforeRestart} rebuilds; ${total(restartWrites)} writes (${summary(restartWrites)})`,
  );
  if (total(restartWrites) > 0) log(`  restart writes per object: ${writesPerObject(proxy.perObject, objectsBeforeRestart)}`);

  const soak: Array<{ t: number; rssMb: number; loopP99Ms: number | undefined }> = [];
  if (SOAK_S > 0) {
    const end = Date.now() + SOAK_S * 1000;
    let nextPush = Date.now();
    while (Date.now() < end) {
      if (Date.now() >= nextPush) {
        nextPush += PUSH_EVERY_S * 1000;
        const r = repos[variant % repos.length]!;
        await r.clone.write(functionFiles(r.first, variant++));
        await r.clone.commitAndPush('soak');
        await requestSync(r.name, new Date().toISOString());
      }
      const lag = await c.metric('nodejs_eventloop_lag_p99_seconds');
      soak.push({ t: Math.round((Date.now() - end) / 1000 + SOAK_S), rssMb: Math.round((await procStatus(c.pid)).rssMb), loopP99Ms: lag === undefined ? undefined : Math.round(lag * 1000) });
      await sleep(5000);
    }
    const firstHalf = soak.slice(0, Math.floor(soak.length / 2)).map((s) => s.rssMb);
    const secondHalf = soak.slice(Math.floor(soak.length / 2)).map((s) => s.rssMb);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    log(
      `soak ${SOAK_S} s, a push every ${PUSH_EVERY_S} s: RSS mean ${mean(firstHalf).toFixed(0)} MB first half, ${mean(secondHalf).toFixed(0)} MB second half; event-loop p99 max ${Math.max(...soak.map((s) => s.loopP99Ms ?? 0))} ms`,
    );
  }

  console.log(
    JSON.stringify({
      functions: N,
      repositories: repos.length,
      loadAverage: load(),
      steadyStateSeconds: Number(steadySec.toFixed(1)),
      apiRequestsPerFunction: Number((requests / N).toFixed(2)),
      apiRequestsPerFunctionWithoutLease: Number((work / N).toFixed(2)),
      controllerRssMb: Math.round(steady.rssMb),
      controllerPeakRssMb: Math.round(Math.max(peakHwm, steady.hwmMb)),
      noChangeSyncMs: resync,
      pushToFunctionMs: pushLatency,
      restartToNoChangeSyncMs: restartMs,
      restartRebuilds: harness.builds - buildsBeforeRestart,
      restartWrites: total(restartWrites),
      ...(soak.length ? { soak } : {}),
    }),
  );
});
