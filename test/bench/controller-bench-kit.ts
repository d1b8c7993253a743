// Pieces of the controller benchmark: a counting proxy in front of the API server, /proc readings of the
// controller process, the controller process itself and the harness that plays kaniko.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { BatchV1Api, type KubeConfig } from '@kubernetes/client-node';
import PQueue from 'p-queue';
import { markJobSucceeded } from '../helpers/kube.ts';

/** Forwards every request to the API server and counts it by `VERB resource`; watches stream through. */
export async function countingProxy(target: URL): Promise<{ url: string; counts: Map<string, number>; total(): number; close(): Promise<void> }> {
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
  readonly log: string[];
  /** SIGTERM, then SIGKILL after 15 s; resolves when it has exited. */
  stop(): Promise<void>;
  /** One sample from its /metrics: a gauge's value. */
  metric(name: string): Promise<number | undefined>;
}

export async function startControllerProcess(opts: { bin: string; cwd: string; kubeconfig: string; env: NodeJS.ProcessEnv }): Promise<ControllerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [opts.bin, 'controller', '--port', String(port), '--kubeconfig', opts.kubeconfig], {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log: string[] = [];
  const keep = (b: Buffer) => {
    log.push(b.toString());
    if (log.length > 200) log.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    child,
    pid: child.pid!,
    port,
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
        const res = await fetch(`http://127.0.0.1:${port}/metrics`);
        const text = await res.text();
        const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
        return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** Plays kaniko: every build Job in `namespace` gets a pod that printed `digest` and a Complete status. */
export function startBuildHarness(kc: KubeConfig, namespace: string, digest: string, log: (m: string) => void) {
  const batch = kc.makeApiClient(BatchV1Api);
  const finished = new Set<string>();
  const queue = new PQueue({ concurrency: 16 });
  let lastBuildSeenAt = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const jobs = await batch.listNamespacedJob({ namespace }).catch(() => ({ items: [] }));
      for (const job of jobs.items) {
        const name = job.metadata?.name ?? '';
        if (finished.has(name)) continue;
        finished.add(name);
        lastBuildSeenAt = Date.now();
        queue.add(() => markJobSucceeded(kc, namespace, name, { terminationMessage: digest })).catch((err: unknown) => {
          finished.delete(name);
          log(`harness: ${name}: ${err instanceof Error ? err.message : String(err)}; will retry`);
        });
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    get builds() {
      return finished.size;
    },
    get lastBuildSeenAt() {
      return lastBuildSeenAt;
    },
    async stop() {
      running = false;
      await loop;
      await queue.onIdle();
    },
  };
}
