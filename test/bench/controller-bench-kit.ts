// Pieces of the controller benchmark: /proc readings of the controller process, the controller process
// itself and the harness that plays kaniko.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import { AppsV1Api, BatchV1Api, type Informer, type KubeConfig, type KubernetesObject, type V1Deployment, type V1Job } from '@kubernetes/client-node';
import { makeJsonInformer } from '../../src/platform/kubernetes/api-client/json-watch.ts';
import PQueue from 'p-queue';
import { markDeploymentAvailable, markJobSucceeded } from '../helpers/kube-harness.ts';

export function procStatus(pid: number): Promise<{ rssMb: number; hwmMb: number; cpuMs: number }> {
  return Promise.all([readFile(`/proc/${pid}/status`, 'utf8'), readFile(`/proc/${pid}/stat`, 'utf8')]).then(([status, stat]) => {
    const kb = (name: string) => Number(status.match(new RegExp(`${name}:\\s+(\\d+)`))?.[1] ?? 0);
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024, cpuMs: (ticks * 1000) / 100 };
  });
}

/** Requests that change something (not GET, not WATCH), leader election left out. */
export function writesOf(counts: ReadonlyMap<string, number>, since: ReadonlyMap<string, number> = new Map()): Map<string, number> {
  const out = new Map<string, number>();
  for (const [k, v] of counts) {
    const d = v - (since.get(k) ?? 0);
    if (d > 0 && /^(POST|PUT|PATCH|DELETE) /.test(k) && !k.endsWith(' leases')) out.set(k, d);
  }
  return out;
}

export const total = (m: ReadonlyMap<string, number>): number => [...m.values()].reduce((a, b) => a + b, 0);

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface ControllerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  /** Its /metrics listener (SLESS_METRICS_PORT). */
  readonly metricsPort: number;
  readonly log: string[];
  /** SIGTERM, then SIGKILL after 15 s; resolves when it has exited. */
  stop(): Promise<void>;
  /** One sample from its /metrics: a gauge's value. */
  metric(name: string): Promise<number | undefined>;
}

/** `logFile`: every line the controller prints is appended there too (the in-memory tail keeps only the last 200 chunks). */
export async function startControllerProcess(opts: { bin: string; cwd: string; kubeconfig: string; env: NodeJS.ProcessEnv; logFile?: string }): Promise<ControllerProcess> {
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, [opts.bin, 'controller', '--port', String(port), '--metrics-port', String(metricsPort), '--kubeconfig', opts.kubeconfig], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const file = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
  const keep = (b: Buffer) => {
    file?.write(b);
    log.push(b.toString());
    if (log.length > 200) log.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => file?.end());
  return {
    child,
    pid: child.pid!,
    port,
    metricsPort,
    log,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
    async metric(name) {
      try {
        const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        const text = await res.text();
        const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
        return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * Plays kaniko and the Deployment controller: every build Job in `buildNamespace` gets a pod that printed
 * `digest` and a Complete status; every sless Deployment in `appNamespace` whose status lags behind its
 * generation gets the status of a finished rollout (Ready means serving: the controller waits for it).
 */
export function startBuildHarness(kc: KubeConfig, namespace: string, digest: string, log: (m: string) => void, appNamespace?: string) {
  const batch = kc.makeApiClient(BatchV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const finished = new Set<string>();
  const rolledOut = new Map<string, number>();
  const queue = new PQueue({ concurrency: 16 });
  let firstBuildSeenAt = 0;
  let lastBuildSeenAt = 0;
  let rollouts = 0;
  // Watches, not LISTs every 500 ms: at 1,000 functions those lists (MBs of Deployments and Jobs twice a
  // second) took the API server's CPU from the controller being measured.
  const onDeployment = (d: V1Deployment) => {
    const name = d.metadata?.name ?? '';
    const generation = d.metadata?.generation ?? 0;
    if ((d.status?.observedGeneration ?? 0) >= generation || rolledOut.get(name) === generation) return;
    rolledOut.set(name, generation);
    queue
      .add(async () => {
        await markDeploymentAvailable(kc, appNamespace ?? '', name, { seen: d });
        rollouts++;
      })
      .catch((err: unknown) => {
        rolledOut.delete(name);
        log(`harness: rollout of ${name}: ${err instanceof Error ? err.message : String(err)}; the next event retries`);
      });
  };
  const onJob = (job: V1Job) => {
    const name = job.metadata?.name ?? '';
    if (finished.has(name)) return;
    finished.add(name);
    lastBuildSeenAt = Date.now();
    firstBuildSeenAt ||= lastBuildSeenAt;
    queue.add(() => markJobSucceeded(kc, namespace, name, { terminationMessage: digest, seen: job })).catch((err: unknown) => {
      finished.delete(name);
      log(`harness: ${name}: ${err instanceof Error ? err.message : String(err)}; the next event retries`);
    });
  };
  const informers: Array<Informer<KubernetesObject>> = [];
  const jobs = makeJsonInformer<V1Job>(kc, `/apis/batch/v1/namespaces/${namespace}/jobs`, () => batch.listNamespacedJob({ namespace }));
  jobs.on('add', onJob);
  jobs.on('update', onJob);
  informers.push(jobs as unknown as Informer<KubernetesObject>);
  if (appNamespace) {
    const labelSelector = 'app.kubernetes.io/managed-by=sless';
    const deployments = makeJsonInformer<V1Deployment>(
      kc,
      `/apis/apps/v1/namespaces/${appNamespace}/deployments`,
      () => apps.listNamespacedDeployment({ namespace: appNamespace, labelSelector }),
      labelSelector,
    );
    deployments.on('add', onDeployment);
    deployments.on('update', onDeployment);
    informers.push(deployments as unknown as Informer<KubernetesObject>);
  }
  let running = true;
  for (const i of informers) {
    i.on('error', () => {
      if (running) setTimeout(() => void i.start().catch(() => undefined), 1_000);
    });
    void i.start().catch(() => undefined);
  }
  return {
    get builds() {
      return finished.size;
    },
    get firstBuildSeenAt() {
      return firstBuildSeenAt;
    },
    get lastBuildSeenAt() {
      return lastBuildSeenAt;
    },
    get rollouts() {
      return rollouts;
    },
    async stop() {
      running = false;
      await Promise.all(informers.map((i) => i.stop().catch(() => undefined)));
      await queue.onIdle();
    },
  };
}
