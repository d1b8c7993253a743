// Pieces of apiserver-cost.bench.ts: CPU of a process found by its program name (/proc), a raw JSON
// client (undici, one keep-alive pool, no model classes) and the controller's own objects by kind.
import { readdir, readFile } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, request } from 'undici';
import { functionDeployment, functionService } from '../../src/platform/kubernetes/objects/function-workload.ts';
import { buildJob } from '../../src/platform/kubernetes/objects/build-job.ts';
import { triggerCronJob } from '../../src/platform/kubernetes/objects/job-workloads.ts';
import { repositoryObjects } from '../../src/platform/kubernetes/objects/repository-objects.ts';
import { stamped } from '../../src/platform/kubernetes/objects/drift.ts';
import { fn as fixtureFn, settings } from '../../src/platform/kubernetes/objects/test-fixtures.ts';
import type { FunctionManifest } from '../../src/manifest/types.ts';

/** Clock ticks per second of /proc's utime/stime. */
const HZ = 100;

/** pids whose program (argv[0]'s file name) starts with `prefix` (`kube-apiserver`, `etcd`), below this process first. */
export async function pidsOf(prefix: string): Promise<number[]> {
  const found: Array<{ pid: number; ppid: number }> = [];
  const parents = new Map<number, number>();
  for (const d of await readdir('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = await readFile(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(d), ppid);
      const argv0 = (await readFile(`/proc/${d}/cmdline`, 'utf8')).split('\0')[0] ?? '';
      if (argv0.slice(argv0.lastIndexOf('/') + 1).startsWith(prefix)) found.push({ pid: Number(d), ppid });
    } catch {
      // exited meanwhile
    }
  }
  // Other helpers' clusters may run on the same machine: ours (a descendant of this process) come first.
  const ours = (pid: number): boolean => {
    for (let p = pid; p > 1; p = parents.get(p) ?? 0) if (p === process.pid) return true;
    return false;
  };
  return found.sort((a, b) => Number(ours(b.pid)) - Number(ours(a.pid))).map((f) => f.pid);
}

/** CPU ms (user + system) a process has spent so far. */
export async function cpuMsOf(pid: number | 'self'): Promise<number> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / HZ;
}

export interface RawClient {
  /** Sends body (already JSON) and answers the parsed answer; throws on a status >= 300 unless `ok` allows it. */
  send(method: string, path: string, body?: string, contentType?: string, ok?: number[]): Promise<{ status: number; json: unknown }>;
  close(): Promise<void>;
}

/** JSON over one undici pool with the kubeconfig's server, CA and bearer token. */
export function rawClient(kc: KubeConfig): RawClient {
  const cluster = kc.getCurrentCluster();
  const token = kc.getCurrentUser()?.token;
  if (!cluster || !token) throw new Error('raw client: the kubeconfig needs a current cluster and a token user');
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString() : undefined;
  const agent = new Agent({ connect: ca ? { ca } : { rejectUnauthorized: false }, keepAliveTimeout: 30_000 });
  return {
    async send(method, path, body, contentType = 'application/json', ok = []) {
      const res = await request(cluster.server + path, {
        method: method as 'GET',
        body,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body ? { 'content-type': contentType } : {}) },
        dispatcher: agent,
      });
      const text = await res.body.text();
      if (res.statusCode >= 300 && !ok.includes(res.statusCode)) throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
      return { status: res.statusCode, json: text ? JSON.parse(text) : undefined };
    },
    close: () => agent.close(),
  };
}

export interface KindCase {
  readonly kind: string;
  /** Collection path in a namespace. */
  collection(ns: string): string;
  /** The i-th object as the controller would write it. */
  object(ns: string, i: number): Record<string, unknown>;
  /** The same object after a change the controller makes (a new image / code hash). */
  changed(ns: string, i: number): Record<string, unknown>;
  /** That change as a JSON merge patch. */
  mergePatch(ns: string, i: number): Record<string, unknown>;
}

const manifest = (i: number): FunctionManifest => ({
  name: `fn-${String(i).padStart(4, '0')}`,
  runtime: 'nodejs20',
  entrypoint: 'handler.handle',
  memoryMb: 256,
  timeoutSec: 30,
  env: { INDEX: String(i) },
  envFromSecrets: [],
  include: [],
  ignore: [],
  http: { enabled: true },
  schedules: [{ name: 'nightly', cron: '0 3 * * *' }],
  jobs: [],
});

const repo = (ns: string) => ({ metadata: { name: 'bench-0', namespace: ns, uid: '00000000-0000-4000-8000-000000000001' } });
const src = (i: number, v: number) => ({
  manifest: manifest(i),
  codeHash: `sha256:${String(v).repeat(64).slice(0, 64)}`,
  path: `functions/fn-${i}`,
  revision: `r${v}`,
  s3Bucket: 'ctx',
  s3Key: `contexts/${v}-${i}.tar.gz`,
});
const fnOf = (ns: string, i: number) => ({ ...fixtureFn, metadata: { name: `fn-${String(i).padStart(4, '0')}`, namespace: ns, uid: `uid-${i}` } });
const image = (v: number) => `registry.bench:5000/sless/fn@sha256:${String(v).repeat(64).slice(0, 64)}`;
const plain = (o: object) => JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
const hashOf = (o: Record<string, unknown>) => ((o.metadata as { annotations?: Record<string, string> }).annotations ?? {})['sless.kube5s.ru/applied-hash'];

function workload(kind: string, collection: (ns: string) => string, make: (ns: string, i: number, v: number) => object, patch: (changed: Record<string, unknown>) => Record<string, unknown>): KindCase {
  return {
    kind,
    collection,
    object: (ns, i) => plain(make(ns, i, 1)),
    changed: (ns, i) => plain(make(ns, i, 2)),
    mergePatch: (ns, i) => patch(plain(make(ns, i, 2))),
  };
}

export const KIND_CASES: KindCase[] = [
  workload(
    'Deployment',
    (ns) => `/apis/apps/v1/namespaces/${ns}/deployments`,
    (ns, i, v) => stamped(functionDeployment(settings, fnOf(ns, i), { imageRef: image(v), httpEnabled: true, replicas: 1 })),
    (c) => {
      const spec = c.spec as { template: { spec: { containers: Array<{ name: string; image: string }> } } };
      // A merge patch replaces a list whole: the containers go entire, as the change needs.
      return { metadata: { annotations: { 'sless.kube5s.ru/applied-hash': hashOf(c) } }, spec: { template: { spec: { containers: spec.template.spec.containers } } } };
    },
  ),
  workload(
    'Service',
    (ns) => `/api/v1/namespaces/${ns}/services`,
    (ns, i, v) => {
      const s = functionService(fnOf(ns, i));
      return stamped({ ...s, metadata: { ...s.metadata, annotations: { ...s.metadata?.annotations, 'bench/v': String(v) } } });
    },
    (c) => ({ metadata: { annotations: (c.metadata as { annotations: object }).annotations } }),
  ),
  workload(
    'Job',
    (ns) => `/apis/batch/v1/namespaces/${ns}/jobs`,
    (ns, i, v) => {
      const j = buildJob(settings, { namespace: ns, name: `fn-${i}`, buildKey: `k${i}`, contextUrl: `http://s3.local:8333/ctx/contexts/${i}.tar.gz?X-Amz-Signature=${'f'.repeat(64)}` });
      // A Job's pod template cannot change: the change is a label, as the controller's own Job writes are.
      return { ...j, metadata: { ...j.metadata, namespace: ns, labels: { ...j.metadata?.labels, 'bench/v': String(v) } } };
    },
    (c) => ({ metadata: { labels: { 'bench/v': (c.metadata as { labels: Record<string, string> }).labels['bench/v'] } } }),
  ),
  workload(
    'CronJob',
    (ns) => `/apis/batch/v1/namespaces/${ns}/cronjobs`,
    (ns, i, v) => {
      const fn = fnOf(ns, i);
      const trigger = { metadata: { name: `${fn.metadata.name}-cron-nightly`, namespace: ns }, spec: { type: 'cron' as const, functionRef: fn.metadata.name, schedule: '0 3 * * *', enabled: true } };
      return stamped(triggerCronJob(settings, fn, trigger, image(v)));
    },
    (c) => {
      const spec = c.spec as { jobTemplate: { spec: { template: { spec: { containers: unknown[] } } } } };
      return {
        metadata: { annotations: { 'sless.kube5s.ru/applied-hash': hashOf(c) } },
        spec: { jobTemplate: { spec: { template: { spec: { containers: spec.jobTemplate.spec.template.spec.containers } } } } },
      };
    },
  ),
  workload(
    'Function',
    (ns) => `/apis/sless.kube5s.ru/v1alpha1/namespaces/${ns}/functions`,
    (ns, i, v) => repositoryObjects(repo(ns), src(i, v)).fn,
    (c) => {
      const spec = c.spec as Record<string, unknown>;
      return { spec: { codeHash: spec.codeHash, s3Key: spec.s3Key, source: spec.source } };
    },
  ),
  workload(
    'Trigger',
    (ns) => `/apis/sless.kube5s.ru/v1alpha1/namespaces/${ns}/triggers`,
    (ns, i, v) => {
      const t = repositoryObjects(repo(ns), src(i, 1)).triggers.find((x) => x.spec?.type === 'cron')!;
      return { ...t, metadata: { ...t.metadata, labels: { ...t.metadata?.labels, 'bench/v': String(v) } } };
    },
    (c) => ({ metadata: { labels: { 'bench/v': (c.metadata as { labels: Record<string, string> }).labels['bench/v'] } } }),
  ),
];

export function nameOf(obj: Record<string, unknown>): string {
  return (obj.metadata as { name: string }).name;
}
