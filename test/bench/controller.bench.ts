// Controller benchmark (not part of npm test):
//   node --import tsx test/bench/controller.bench.ts [--functions 500] [--sless-bin path/to/bin/sless.js]
// One FunctionRepository with N function folders on a real git server, reconciled by a real
// `sless controller` process (bin/sless.js, one replica) against a real kube-apiserver and SeaweedFS.
// Nothing runs containers here, so a harness plays kaniko: every build Job gets a pod that "printed" an
// image digest, and a Job status that says Complete. Reported:
//   - seconds from creating the FunctionRepository to steady state (every Function Ready at its
//     generation, the repository Ready), and how long until the last build Job appeared;
//   - API requests the controller made, per function, counted exactly by a counting HTTP proxy between
//     the controller and the API server (by verb and resource);
//   - the controller's RSS at steady state and its peak (VmHWM);
//   - the cost of a no-change sync: wall time, API requests and CPU time of the controller.
// Starts its own cluster (without kube-controller-manager, so only the controller and the harness talk
// to the API server), S3 server and git server unless SLESS_TEST_* variables point at running ones.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { BatchV1Api, CustomObjectsApi, KubeConfig, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import type { FunctionResource, RepositoryResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { createRepo, startGitServer, WorkClone } from '../helpers/git-server.ts';
import { freshNamespace, markJobSucceeded } from '../helpers/kube.ts';
import type { TestService } from '../run.ts';

const { values } = parseArgs({
  options: {
    functions: { type: 'string', default: '500' },
    timeout: { type: 'string', default: '900' },
    // e.g. a bin/sless.js beside a compiled dist/ (npm run build), to measure the image's memory rather than tsx's
    'sless-bin': { type: 'string' },
  },
});
const N = Number(values.functions);
const TIMEOUT_MS = Number(values.timeout) * 1000;
const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';
const root = fileURLToPath(new URL('../..', import.meta.url));
const DIGEST = `sha256:${'c'.repeat(64)}`;

const stops: Array<() => Promise<void>> = [];
const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);

async function service(modulePath: string, wanted: string): Promise<void> {
  if (process.env[wanted]) return;
  const { service: s } = (await import(modulePath)) as { service: TestService };
  const t0 = Date.now();
  const started = await s.start();
  stops.push(started.stop);
  Object.assign(process.env, started.env);
  log(`${s.name} up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

/** Forwards every request to the API server and counts it by `VERB resource`; watches stream through. */
async function countingProxy(target: URL): Promise<{ url: string; counts: Map<string, number>; total(): number; close(): Promise<void> }> {
  const counts = new Map<string, number>();
  const agent = new https.Agent({ keepAlive: true, rejectUnauthorized: false });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const parts = url.pathname.split('/').filter(Boolean);
    const watch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    // /api/v1/namespaces/ns/pods/name -> pods ; /apis/group/v/namespaces/ns/functions/name/status -> functions/status
    const nsIdx = parts.indexOf('namespaces');
    const rest = nsIdx >= 0 && parts.length > nsIdx + 2 ? parts.slice(nsIdx + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
    const resource = rest.length >= 3 ? `${rest[0]}/${rest[2]}` : (rest[0] ?? url.pathname);
    const verb = watch ? 'WATCH' : req.method === 'GET' && rest.length < 2 ? 'LIST' : (req.method ?? '?');
    const key = `${verb} ${resource}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const upstream = https.request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    counts,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

function procStatus(pid: number): Promise<{ rssMb: number; hwmMb: number; cpuMs: number }> {
  return Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')]).then(([status, stat]) => {
    const kb = (name: string) => Number(status.match(new RegExp(`${name}:\\s+(\\d+)`))?.[1] ?? 0);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024, cpuMs: (ticks * 1000) / 100 };
  });
}

function functionFiles(i: number): Record<string, string> {
  const name = `fn-${String(i).padStart(4, '0')}`;
  return {
    [`functions/${name}/function.yaml`]: `runtime: nodejs20\nenv:\n  INDEX: "${i}"\nschedules:\n  - name: nightly\n    cron: "0 3 * * *"\n`,
    [`functions/${name}/handler.js`]: `exports.handle = async () => ({ i: ${i} });\n`,
  };
}

const summary = (counts: Map<string, number>, top = 12) =>
  [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');

let child: ChildProcess | undefined;
const tmp = await mkdtemp(path.join(os.tmpdir(), 'sless-bench-'));
try {
  // Only the controller and the harness should talk to the API server.
  process.env.SLESS_TEST_KUBE_CONTROLLERS ??= '0';
  await service('../services/kube.ts', 'SLESS_TEST_KUBECONFIG');
  await service('../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT');
  const gitServer = await startGitServer();
  stops.push(async () => {
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
  const batch = kc.makeApiClient(BatchV1Api);
  const ns = await freshNamespace(kc, 'bench');
  const buildNs = await freshNamespace(kc, 'bench-builds');
  const system = await freshNamespace(kc, 'bench-system');

  // The test cluster's service range is a /24; N functions need N Services. A second ServiceCIDR
  // (GA since Kubernetes 1.33) widens it without restarting the API server.
  await kc
    .makeApiClient(NetworkingV1Api)
    .createServiceCIDR({ body: { metadata: { name: 'sless-bench' }, spec: { cidrs: ['10.96.0.0/20'] } } })
    .catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });

  let t0 = Date.now();
  const repo = await createRepo(gitServer, 'bench-controller');
  const clone = await WorkClone.create(repo);
  stops.push(() => rm(clone.dir, { recursive: true, force: true }));
  const files: Record<string, string> = {};
  for (let i = 0; i < N; i++) Object.assign(files, functionFiles(i));
  await clone.write(files);
  await clone.commitAndPush(`${N} functions`);
  log(`repository with ${N} functions pushed in ${Date.now() - t0} ms`);

  // The controller process talks to the API server through the counting proxy.
  const proxy = await countingProxy(new URL(kc.getCurrentCluster()!.server));
  stops.push(() => proxy.close());
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

  child = spawn(process.execPath, [values['sless-bin'] ?? path.join(root, 'bin/sless.js'), 'controller', '--port', '0', '--kubeconfig', kubeconfigPath], {
    cwd: root,
    env: {
      ...process.env,
      SLESS_AUTH_INSECURE: '1',
      SLESS_S3_ENDPOINT: need('SLESS_TEST_S3_ENDPOINT'),
      SLESS_S3_BUCKET: need('SLESS_TEST_S3_BUCKET'),
      AWS_ACCESS_KEY_ID: need('SLESS_TEST_S3_ACCESS_KEY'),
      AWS_SECRET_ACCESS_KEY: need('SLESS_TEST_S3_SECRET_KEY'),
      SLESS_REGISTRY: 'registry.bench:5000/sless',
      SLESS_BUILD_NAMESPACE: buildNs.name,
      SLESS_CACHE_DIR: path.join(tmp, 'cache'),
      SLESS_GIT_ALLOWED_HOSTS: '127.0.0.1',
      SLESS_LOG_LEVEL: 'warn',
      POD_NAMESPACE: system.name,
      POD_NAME: 'bench-controller',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const childLog: string[] = [];
  const keep = (b: Buffer) => {
    childLog.push(b.toString());
    if (childLog.length > 200) childLog.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const pid = child.pid!;
  // Wait until it leads and its informers watch (tsx compiles the sources first when there is no dist/).
  for (const t = Date.now(); [...proxy.counts.keys()].filter((k) => k.startsWith('WATCH ')).length < 5; ) {
    if (Date.now() - t > 120_000) throw new Error(`the controller did not start watching within 120 s:\n${childLog.join('').slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 1000));
  const idle = await procStatus(pid);
  log(`controller pid ${pid} started, RSS ${idle.rssMb.toFixed(0)} MB before any work; ${proxy.total()} requests so far`);

  // Harness: finish every build Job as kaniko would (pod terminated with the digest, Job Complete).
  const finished = new Set<string>();
  const harness = new PQueue({ concurrency: 16 });
  let lastBuildSeenAt = 0;
  let harnessRunning = true;
  const harnessLoop = (async () => {
    while (harnessRunning) {
      const jobs = await batch.listNamespacedJob({ namespace: buildNs.name });
      for (const job of jobs.items) {
        const name = job.metadata?.name ?? '';
        if (finished.has(name)) continue;
        finished.add(name);
        lastBuildSeenAt = Date.now();
        harness.add(() => markJobSucceeded(kc, buildNs.name, name, { terminationMessage: DIGEST })).catch((err: unknown) => {
          finished.delete(name);
          log(`harness: ${name}: ${err instanceof Error ? err.message : String(err)}; will retry`);
        });
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();

  const before = proxy.total();
  const countsBeforeRepo = new Map(proxy.counts);
  t0 = Date.now();
  await custom.createNamespacedCustomObject({
    group: GROUP,
    version: VERSION,
    namespace: ns.name,
    plural: 'functionrepositories',
    body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name: 'bench' }, spec: { url: repo.url, interval: '10m' } },
  });
  let peakHwm = 0;
  let lastReport = 0;
  for (;;) {
    if (Date.now() - t0 > TIMEOUT_MS) throw new Error(`no steady state after ${TIMEOUT_MS / 1000} s; controller log tail:\n${childLog.join('').slice(-4000)}`);
    const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functions' })) as { items: FunctionResource[] };
    const ready = list.items.filter((f) => f.status?.phase === 'Ready' && f.status.observedGeneration === f.metadata?.generation).length;
    const repoObj = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functionrepositories', name: 'bench' })) as RepositoryResource;
    const repoReady = repoObj.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    peakHwm = Math.max(peakHwm, (await procStatus(pid)).hwmMb);
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      log(`${((Date.now() - t0) / 1000).toFixed(0)} s: ${list.items.length} Functions, ${ready} Ready, ${finished.size} builds, repository ready=${repoReady}`);
    }
    if (list.items.length === N && ready === N && repoReady) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const steadySec = (Date.now() - t0) / 1000;
  const lastBuildSec = (lastBuildSeenAt - t0) / 1000;
  await new Promise((r) => setTimeout(r, 2000));
  const steady = await procStatus(pid);
  const requests = proxy.total() - before;
  const countsAtSteady = new Map(proxy.counts);
  log(`steady state in ${steadySec.toFixed(1)} s (last build Job appeared at ${lastBuildSec.toFixed(1)} s); ${finished.size} build Jobs`);
  const leases = [...countsAtSteady].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0);
  const leasesBefore = [...countsBeforeRepo].filter(([k]) => k.endsWith(' leases')).reduce((a, [, v]) => a + v, 0);
  const work = requests - (leases - leasesBefore);
  log(`API requests by the controller: ${requests} = ${(requests / N).toFixed(2)} per function; without leader election ${work} = ${(work / N).toFixed(2)} per function; at start (lists, watches, lease) ${before}`);
  log(`  by verb/resource: ${summary(countsAtSteady)}`);
  log(`controller RSS ${steady.rssMb.toFixed(0)} MB at steady state, peak ${Math.max(peakHwm, steady.hwmMb).toFixed(0)} MB; CPU ${(steady.cpuMs / 1000).toFixed(1)} s`);

  // A no-change sync: request one and wait for the repository to report it.
  const resync: number[] = [];
  for (let round = 0; round < 3; round++) {
    const beforeResync = proxy.total();
    const cpuBefore = (await procStatus(pid)).cpuMs;
    const countsBefore = new Map(proxy.counts);
    const at = new Date().toISOString();
    const t1 = Date.now();
    await custom.patchNamespacedCustomObject(
      { group: GROUP, version: VERSION, namespace: ns.name, plural: 'functionrepositories', name: 'bench', body: { metadata: { annotations: { [`${GROUP}/requestedAt`]: at } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    for (;;) {
      const r = (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functionrepositories', name: 'bench' })) as RepositoryResource & {
        status?: { lastHandledRequestedAt?: string };
      };
      if (r.status?.lastHandledRequestedAt === at) break;
      if (Date.now() - t1 > 60_000) throw new Error('a no-change sync did not finish within 60 s');
      await new Promise((res) => setTimeout(res, 50));
    }
    const wall = Date.now() - t1;
    await new Promise((r) => setTimeout(r, 1000));
    const cpu = (await procStatus(pid)).cpuMs - cpuBefore;
    const delta = new Map([...proxy.counts].map(([k, v]) => [k, v - (countsBefore.get(k) ?? 0)]).filter(([, v]) => (v as number) > 0) as Array<[string, number]>);
    resync.push(wall);
    log(`no-change sync ${round + 1}: ${wall} ms wall, ${proxy.total() - beforeResync} API requests (${summary(delta)}), controller CPU ${cpu.toFixed(0)} ms`);
  }

  harnessRunning = false;
  await harnessLoop;
  await harness.onIdle();
  console.log(
    JSON.stringify({
      functions: N,
      steadyStateSeconds: Number(steadySec.toFixed(1)),
      apiRequestsPerFunction: Number((requests / N).toFixed(2)),
      apiRequestsPerFunctionWithoutLease: Number((work / N).toFixed(2)),
      controllerRssMb: Math.round(steady.rssMb),
      controllerPeakRssMb: Math.round(Math.max(peakHwm, steady.hwmMb)),
      noChangeSyncMs: resync,
    }),
  );
  for (const n of [ns, buildNs, system]) await n.cleanup().catch(() => undefined);
} finally {
  child?.kill('SIGTERM');
  if (child && child.exitCode === null) await new Promise((r) => child?.once('exit', r));
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await rm(tmp, { recursive: true, force: true });
}
