// The setting of the scale benchmarks (restart, repositories, soak): R FunctionRepositories with N/R
// function folders each on a real git server, a real kube-apiserver (without kube-controller-manager, so
// only the controller and the harness talk to it) and SeaweedFS, a real `sless controller` process (one
// replica) talking to the API server directly, and the harness that plays kaniko and the Deployment
// controller. The controller's API requests are read from its own /metrics (sless_kube_requests_total): a
// counting proxy in this process cost ~40 s of CPU in a 1,000-function run, CPU the measured run shared.
// Everything it starts is stopped through the BenchLifecycle (bench-lifecycle.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CustomObjectsApi, KubeConfig, NetworkingV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { FunctionResource, RepositoryResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { controllerMemoryEnv } from '../helpers/controller-pod-env.ts';
import { createRepo, startGitServer, WorkClone } from '../helpers/git-server.ts';
import { startGitServerProcess } from './git-server-child.ts';
import { freshNamespace } from '../helpers/kube.ts';
import type { TestService } from '../run.ts';
import type { BenchLifecycle } from './bench-lifecycle.ts';
import { reuseConnections } from '../../src/platform/kubernetes/api-client/reuse-connections.ts';
import { procStatus, startBuildHarness, startControllerProcess, total, type ControllerProcess } from './controller-bench-kit.ts';
import { cpuBetween, formatCpu, sampleCpu, type CpuSample } from './scale-bench-cpu.ts';
import { kubeRequests } from './scale-bench-probes.ts';
import { milestones, watchSlessObjects } from './scale-bench-watch.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';
const DIGEST = `sha256:${'c'.repeat(64)}`;
const root = fileURLToPath(new URL('../..', import.meta.url));
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const log = (msg: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
export const loadAverage = () => os.loadavg().map((l) => l.toFixed(1)).join(' ');

export interface BenchRepo {
  readonly name: string;
  readonly url: string;
  readonly clone: WorkClone;
  /** Index of its first function (fn-<first>); it holds `count`. */
  readonly first: number;
  readonly count: number;
}

export interface ScaleBenchOptions {
  readonly functions: number;
  readonly repositories: number;
  /** A bin/sless.js beside a compiled dist/ (the image runs the compiled build); default this tree's. */
  readonly slessBin?: string;
  /** A folder for V8 CPU profiles of every controller process (written as each exits). */
  readonly cpuProf?: string;
  /** Repository sync interval (spec.interval). */
  readonly interval?: string;
  /** A file that receives everything each controller process prints. */
  readonly controllerLog?: string;
  /** Each function with a nightly schedule (default) or HTTP only. */
  readonly schedule?: boolean;
}

export function functionName(i: number): string {
  return `fn-${String(i).padStart(4, '0')}`;
}

/** Each bench function has an http Trigger and, unless `schedule` is false, one schedule (a cron Trigger with its CronJob). */
export function triggersPerFunction(schedule = true): number {
  return schedule ? 2 : 1;
}

/** One function folder: a Node handler and (by default) a nightly schedule. */
export function functionFiles(i: number, variant = 0, schedule = true): Record<string, string> {
  const name = functionName(i);
  const schedules = schedule ? `schedules:\n  - name: nightly\n    cron: "0 3 * * *"\n` : '';
  return {
    [`functions/${name}/function.yaml`]: `name: ${name}\nruntime: nodejs20\nenv:\n  INDEX: "${i}"\n${schedules}`,
    [`functions/${name}/handler.js`]: `exports.handle = async () => ({ i: ${i}, v: ${variant} });\n`,
  };
}

async function service(life: BenchLifecycle, modulePath: string, wanted: string): Promise<void> {
  if (process.env[wanted]) return;
  const { service: s } = (await import(modulePath)) as { service: TestService };
  const t0 = Date.now();
  const started = await s.start();
  life.onStop(started.stop);
  Object.assign(process.env, started.env);
  log(`${s.name} up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

export type ScaleBench = Awaited<ReturnType<typeof setUpScaleBench>>;

export async function setUpScaleBench(life: BenchLifecycle, opts: ScaleBenchOptions) {
  const N = opts.functions;
  const perRepo = Math.ceil(N / Math.max(1, opts.repositories));
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'sless-bench-'));
  life.onStop(() => rm(tmp, { recursive: true, force: true }));
  process.env.SLESS_TEST_KUBE_CONTROLLERS ??= '0';
  await service(life, '../services/kube.ts', 'SLESS_TEST_KUBECONFIG');
  await service(life, '../services/s3.ts', 'SLESS_TEST_S3_ENDPOINT');
  // In a process of its own unless SLESS_BENCH_GIT_IN_PROCESS=1 (as before 2026-12-02: git-server-process.ts says why).
  const gitServer = process.env.SLESS_BENCH_GIT_IN_PROCESS === '1' ? await startGitServer() : await startGitServerProcess();
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
  // One keep-alive connection for the benchmark's and the harness's requests (client-node makes a new
  // connection, and a TLS handshake on both sides, per call otherwise: CPU the API server shares).
  reuseConnections(kc);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const ns = await freshNamespace(kc, 'bench');
  const buildNs = await freshNamespace(kc, 'bench-builds');
  const system = await freshNamespace(kc, 'bench-system');
  life.onStop(async () => {
    for (const n of [ns, buildNs, system]) await n.cleanup().catch(() => undefined);
  });
  // The test cluster's service range is a /24; N functions need N Services (a second ServiceCIDR widens it).
  await kc
    .makeApiClient(NetworkingV1Api)
    .createServiceCIDR({ body: { metadata: { name: 'sless-bench' }, spec: { cidrs: ['10.96.0.0/20'] } } })
    .catch((err: { code?: number }) => {
      if (err.code !== 409) throw err;
    });

  const t0 = Date.now();
  const repos: BenchRepo[] = [];
  for (let r = 0; r * perRepo < N; r++) {
    const first = r * perRepo;
    const count = Math.min(perRepo, N - first);
    const repo = await createRepo(gitServer, `bench-${r}`);
    const clone = await WorkClone.create(repo);
    life.onStop(() => rm(clone.dir, { recursive: true, force: true }));
    const files: Record<string, string> = {};
    for (let i = first; i < first + count; i++) Object.assign(files, functionFiles(i, 0, opts.schedule));
    await clone.write(files);
    await clone.commitAndPush(`${count} functions`);
    repos.push({ name: `bench-${r}`, url: repo.url, clone, first, count });
  }
  log(`${repos.length} repositories with ${N} functions pushed in ${Date.now() - t0} ms; load average ${loadAverage()}`);

  // The controller talks to the API server directly, with the services' kubeconfig.
  const kubeconfigPath = need('SLESS_TEST_KUBECONFIG');
  // The controller runs with the pod's memory settings (deploy/: the image's ENV overlaid by the StatefulSet's);
  // the caller's NODE_OPTIONS and MALLOC_ARENA_MAX come after them (a variant to measure), and then
  // SLESS_BENCH_CONTROLLER_NODE_OPTIONS: flags for the controller alone (a smaller heap limit, a heap
  // snapshot signal), which NODE_OPTIONS would also give the bench's own process.
  const pod = await controllerMemoryEnv();
  const arenas = process.env.MALLOC_ARENA_MAX ?? pod.MALLOC_ARENA_MAX;
  const cpuProf = opts.cpuProf ? `--cpu-prof --cpu-prof-dir=${path.resolve(opts.cpuProf)}` : '';
  const controllerEnv: NodeJS.ProcessEnv = {
    SLESS_AUTH_INSECURE: '1',
    SLESS_S3_ENDPOINT: need('SLESS_TEST_S3_ENDPOINT'),
    SLESS_S3_BUCKET: need('SLESS_TEST_S3_BUCKET'),
    AWS_ACCESS_KEY_ID: need('SLESS_TEST_S3_ACCESS_KEY'),
    AWS_SECRET_ACCESS_KEY: need('SLESS_TEST_S3_SECRET_KEY'),
    SLESS_REGISTRY: 'registry.bench:5000/sless',
    SLESS_BUILD_NAMESPACE: buildNs.name,
    // Kept across restarts, as the volume in deploy/ keeps it across pod restarts.
    SLESS_CACHE_DIR: path.join(tmp, 'cache'),
    SLESS_GIT_ALLOWED_HOSTS: '127.0.0.1',
    SLESS_MAX_FUNCTIONS_PER_REPOSITORY: String(Math.max(500, perRepo)),
    SLESS_MAX_FUNCTIONS_PER_NAMESPACE: String(Math.max(1000, N * 2)),
    SLESS_LOG_LEVEL: 'warn',
    POD_NAMESPACE: system.name,
    POD_NAME: 'bench-controller',
    NODE_OPTIONS: [pod.NODE_OPTIONS ?? '', process.env.NODE_OPTIONS ?? '', process.env.SLESS_BENCH_CONTROLLER_NODE_OPTIONS ?? '', cpuProf].filter(Boolean).join(' '),
    ...(arenas === undefined ? {} : { MALLOC_ARENA_MAX: arenas }),
  };

  let controller: ControllerProcess | undefined;
  life.onStop(() => controller?.stop());
  /** API requests of the controller processes stopped so far (each one's last scrape, just before its SIGTERM). */
  const stoppedRequests = new Map<string, number>();
  /** The controllers' API requests by `VERB resource`, summed over the processes this bench ran (each counts from 0). */
  const apiRequests = async (): Promise<Map<string, number>> => {
    const out = new Map(stoppedRequests);
    if (controller) for (const [k, v] of await kubeRequests(controller)) out.set(k, (out.get(k) ?? 0) + v);
    return out;
  };
  const harness = startBuildHarness(kc, buildNs.name, DIGEST, log, ns.name);
  life.onStop(() => harness.stop());
  const watch = await watchSlessObjects(kc, ns.name);
  life.onStop(() => watch.stop());
  const cpuLabels = (): Map<number, string> => new Map(controller ? [[controller.pid, 'controller']] : []);

  const getRepo = async (name: string) =>
    (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functionrepositories', name })) as RepositoryResource & {
      status?: { lastHandledRequestedAt?: string };
    };
  const listFunctions = async () =>
    ((await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functions' })) as { items: FunctionResource[] }).items;
  const getFunction = async (name: string) =>
    (await custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns.name, plural: 'functions', name })) as FunctionResource;
  /** Asks for a sync as /hooks does: the requestedAt annotation, and a push webhook's head (requestedRevision) when given. */
  const requestSync = (name: string, at: string, head?: string) =>
    custom.patchNamespacedCustomObject(
      {
        group: GROUP,
        version: VERSION,
        namespace: ns.name,
        plural: 'functionrepositories',
        name,
        body: { metadata: { annotations: { [`${GROUP}/requestedAt`]: at, [`${GROUP}/requestedRevision`]: head ?? null } } },
      },
      mergePatch,
    );
  /** Waits until the repository's status says it handled the sync request `at`; answers ms since `since`. */
  const handled = async (name: string, at: string, since: number, timeoutMs = 120_000): Promise<number> => {
    // From the watch: 100 repositories each polled by GET every 50 ms were 2,000 requests a second.
    for (;;) {
      const status = watch.repositories.get(name)?.status as { lastHandledRequestedAt?: string } | undefined;
      if (status?.lastHandledRequestedAt === at) return Date.now() - since;
      if (Date.now() - since > timeoutMs) throw new Error(`the sync of ${name} requested at ${at} did not finish within ${timeoutMs / 1000} s`);
      await sleep(10);
    }
  };

  return {
    kc,
    ns: ns.name,
    buildNs: buildNs.name,
    repos,
    apiRequests,
    harness,
    get controller(): ControllerProcess {
      if (!controller) throw new Error('no controller is running');
      return controller;
    },
    /** Starts a controller process; resolves once it leads and its informers watch. */
    async startController(extraEnv: NodeJS.ProcessEnv = {}): Promise<ControllerProcess> {
      const c = await startControllerProcess({
        bin: opts.slessBin ?? path.join(root, 'bin/sless.js'),
        cwd: root,
        kubeconfig: kubeconfigPath,
        env: { ...controllerEnv, ...extraEnv },
        ...(opts.controllerLog ? { logFile: path.resolve(opts.controllerLog) } : {}),
      });
      controller = c;
      // Leading, with the controller's nine informers (the build pods' among them) watching (the serving cache's three watch before it leads).
      const watches = async () => [...(await kubeRequests(c).catch(() => new Map<string, number>()))].filter(([k]) => k.startsWith('WATCH ')).reduce((a, [, v]) => a + v, 0);
      for (const t = Date.now(); (await watches()) < 12; ) {
        if (c.child.exitCode !== null) throw new Error(`the controller exited with ${c.child.exitCode}:\n${c.log.join('').slice(-4000)}`);
        if (Date.now() - t > 180_000) throw new Error(`the controller did not start watching within 180 s:\n${c.log.join('').slice(-4000)}`);
        await sleep(100);
      }
      return c;
    },
    async stopController(): Promise<void> {
      const c = controller;
      if (!c) return;
      // What it sent up to now; its shutdown's few requests (the Lease released) go uncounted.
      for (const [k, v] of await kubeRequests(c).catch(() => new Map<string, number>())) stoppedRequests.set(k, (stoppedRequests.get(k) ?? 0) + v);
      const t = Date.now();
      await c.stop();
      controller = undefined;
      if (c.child.signalCode === 'SIGKILL') {
        log(`the controller did not exit within 15 s of SIGTERM (killed after ${Date.now() - t} ms); its last output:\n${c.log.join('').slice(-3000)}`);
      }
    },
    async createRepositories(): Promise<void> {
      for (const r of repos) {
        await custom.createNamespacedCustomObject({
          group: GROUP,
          version: VERSION,
          namespace: ns.name,
          plural: 'functionrepositories',
          body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name: r.name }, spec: { url: r.url, interval: opts.interval ?? '10m' } },
        });
      }
    },
    /**
     * Until every Function is Ready at its generation and every repository Ready (from the watch); answers
     * seconds since `since`. Logs every 10 s the counts, the requests the controller made and the CPU
     * each process spent meanwhile; at the end the phases and the CPU of the whole run per function.
     */
    async steadyState(since: number, timeoutMs: number, expected = N): Promise<{ seconds: number; peakHwmMb: number; cpu: ReturnType<typeof cpuBetween> }> {
      let peakHwmMb = 0;
      let lastReport = Date.now();
      const cpuStart = await sampleCpu(cpuLabels());
      let cpuLast: CpuSample = cpuStart;
      let requestsLast = total(await apiRequests());
      const report = async (): Promise<CpuSample> => {
        const now = await sampleCpu(cpuLabels());
        const building = [...watch.functions.values()].filter((f) => f.status?.phase === 'Building').length;
        const requests = total(await apiRequests());
        log(
          `${((Date.now() - since) / 1000).toFixed(0)} s: ${watch.functions.size} Functions, ${building} Building, ${watch.readyCount()} Ready, ${watch.triggersReady()} Triggers ready, ${harness.builds} builds, ${harness.rollouts} rollouts, ` +
            `${watch.reposReady()}/${repos.length} repositories ready; controller requests +${requests - requestsLast}; load ${loadAverage()}\n    CPU: ${formatCpu(cpuBetween(cpuLast, now))}`,
        );
        requestsLast = requests;
        cpuLast = now;
        return now;
      };
      for (;;) {
        if (Date.now() - since > timeoutMs) throw new Error(`no steady state after ${timeoutMs / 1000} s; controller log tail:\n${controller?.log.join('').slice(-4000)}`);
        if (controller) peakHwmMb = Math.max(peakHwmMb, (await procStatus(controller.pid)).hwmMb);
        const done =
          watch.functions.size === expected &&
          watch.readyCount() === expected &&
          watch.triggersReady() === expected * triggersPerFunction(opts.schedule) &&
          watch.reposReady() === repos.length;
        if (done) {
          const seconds = (Date.now() - since) / 1000;
          const end = await report();
          const cpu = cpuBetween(cpuStart, end);
          const s = (t: number) => `${((t - since) / 1000).toFixed(1)} s`;
          log(
            `phases: ${milestones('Functions created', watch.createdAt, since, expected)}; build Jobs ${harness.builds} from ${s(harness.firstBuildSeenAt)} to ${s(harness.lastBuildSeenAt)}; ${milestones('Ready', watch.readyAt, since, expected)}; ${milestones('Triggers ready', watch.triggerReadyAt, since, expected * triggersPerFunction(opts.schedule))}`,
          );
          log(`CPU from the repositories' creation to steady state: ${formatCpu(cpu, expected)}`);
          return { seconds, peakHwmMb, cpu };
        }
        if (Date.now() - lastReport > 10_000) {
          lastReport = Date.now();
          await report();
        }
        await sleep(200);
      }
    },
    /** The Functions and repositories as the benchmark's watch shows them. */
    watch,
    getRepo,
    getFunction,
    listFunctions,
    requestSync,
    handled,
    /** Requests a sync of `name` now and waits until it is handled; answers its wall time. */
    async syncOnce(name: string, timeoutMs?: number): Promise<number> {
      const at = new Date().toISOString();
      const t = Date.now();
      await requestSync(name, at);
      return handled(name, at, t, timeoutMs);
    },
  };
}
