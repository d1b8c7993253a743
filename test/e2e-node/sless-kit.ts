// The end-to-end setup on the real node: the test images (test/images) pushed to the node's
// registry, real `sless controller` processes (controller-child.ts) scoped to a fresh namespace,
// a repository on the real test git server, and helpers to push, wait and call /fn.
//
//   const kit = await setupNodeKit('e2e-node-fn');
//   after(() => kit.dispose());
//   await kit.startController();
//   await kit.push({ 'functions/hello/function.yaml': ..., 'functions/hello/handler.js': ... });
//   await kit.createRepository('fns');
//   const fn = await kit.waitFunction('hello', (f) => f.status?.phase === 'Ready');
//   const res = await kit.callFn('hello');
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { GIT_CREDENTIALS_SECRET_TYPE } from '../../src/platform/kubernetes/objects/meta.ts';
import type { FunctionJobResource, RepositoryResource, FunctionResource } from '../../src/platform/kubernetes/objects/resources.ts';
import { createRepo, sharedGitServer, WorkClone, type FileSpec } from '../helpers/git-server.ts';
import { eventually, freshNamespace, getCustom, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { s3ControllerEnv } from '../helpers/test-s3.ts';
import { pushTestImages, type PushedImages } from '../images/images.ts';
import { requireNode } from './node-kit.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';
export const WEBHOOK_SECRET = 'e2e-node-webhook-secret';
const child = fileURLToPath(new URL('./controller-child.ts', import.meta.url));
const START_TIMEOUT_MS = 180_000;

export interface ControllerProcess {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
  /** Everything it printed (JSON log lines). */
  output(): string;
  stop(): Promise<void>;
  kill(): Promise<void>;
}

export interface NodeKit {
  readonly kc: KubeConfig;
  readonly ns: string;
  readonly buildNs: string;
  readonly images: PushedImages;
  readonly registry: string;
  readonly repoUrl: string;
  readonly clone: WorkClone;
  readonly controllers: ControllerProcess[];
  /** `env`: settings for this controller only, over the kit's (e.g. SLESS_ROUTE_TO_PODS). */
  startController(name?: string, env?: Readonly<Record<string, string>>): Promise<ControllerProcess>;
  /** The first running controller's URL (any replica serves /fn). */
  url(): string;
  push(files: Record<string, FileSpec>, message?: string): Promise<string>;
  /** A FunctionRepository on the kit's git repository, with a webhook secret (see webhook()). */
  createRepository(name: string, spec?: Record<string, unknown>): Promise<void>;
  /** A signed GitHub-style push webhook for `repository`, as a git host sends after a push. */
  webhook(repository: string): Promise<Response>;
  getFunction(name: string): Promise<FunctionResource | undefined>;
  getRepository(name: string): Promise<RepositoryResource | undefined>;
  waitFunction(name: string, done: (f: FunctionResource) => boolean, timeoutMs?: number): Promise<FunctionResource>;
  getFunctionJob(name: string): Promise<FunctionJobResource | undefined>;
  callFn(name: string, init?: RequestInit): Promise<Response>;
  buildJobs(fn?: string): Promise<V1Job[]>;
  dispose(): Promise<void>;
}

export interface NodeKitOptions {
  /** The S3 endpoint the controller uses (default the `s3` service's), e.g. a measuring proxy. */
  readonly s3Endpoint?: string;
  /** More SLESS_* settings for the controllers, over the kit's (e.g. SLESS_REGISTRY, SLESS_IMAGE_PULL_SECRETS). */
  readonly env?: Readonly<Record<string, string>>;
}

export async function setupNodeKit(prefix: string, options: NodeKitOptions = {}): Promise<NodeKit> {
  const { registry, hostAddress } = requireNode();
  const kc = testKubeConfig();
  const custom = kc.makeApiClient(CustomObjectsApi);
  const batch = kc.makeApiClient(BatchV1Api);
  const namespaces: TestNamespace[] = [await freshNamespace(kc, prefix), await freshNamespace(kc, `${prefix}-b`)];
  const [ns, buildNs] = namespaces.map((n) => n.name) as [string, string];
  const images = await pushTestImages(`${registry}/sless-test`);
  const repo = await createRepo(sharedGitServer(), prefix);
  const clone = await WorkClone.create(repo);
  const cacheDir = await mkdtemp(path.join(os.tmpdir(), 'sless-e2e-cache-'));
  const controllers: ControllerProcess[] = [];
  const env: Record<string, string> = {
    ...s3ControllerEnv(),
    ...(options.s3Endpoint ? { SLESS_S3_ENDPOINT: options.s3Endpoint } : {}),
    SLESS_KUBECONFIG: process.env.SLESS_TEST_KUBECONFIG ?? '',
    SLESS_AUTH_INSECURE: '1',
    SLESS_PORT: '0',
    SLESS_METRICS_PORT: '0',
    SLESS_REGISTRY: `${registry}/fn`,
    SLESS_KANIKO_IMAGE: images.kanikoImage,
    SLESS_BUILD_TOOLS_IMAGE: images.buildToolsImage,
    SLESS_RUNTIME_IMAGE_PREFIX: images.runtimeImagePrefix,
    SLESS_BUILD_NAMESPACE: buildNs,
    // The test git server listens on the node's bridge address, a private one.
    SLESS_GIT_ALLOWED_HOSTS: hostAddress,
    SLESS_CACHE_DIR: cacheDir,
    SLESS_TEST_WATCH_NAMESPACE: ns,
    // The controller's own namespace is reserved (no functions there): its Lease lives in the kit's build
    // namespace, one per kit, so controllers of tests running side by side never share a Lease.
    POD_NAMESPACE: buildNs,
    ...options.env,
  };
  const get = <T>(plural: string, name: string): Promise<T | undefined> => getCustom<T>(custom, ns, plural, name);

  const kit: NodeKit = {
    kc,
    ns,
    buildNs,
    images,
    registry,
    repoUrl: repo.url,
    clone,
    controllers,
    async startController(name = `c${controllers.length + 1}`, own = {}) {
      const proc = spawn(process.execPath, ['--import', 'tsx', child], {
        env: { ...process.env, ...env, ...own, POD_NAME: name },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      proc.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        if (process.env.SLESS_TEST_CONTROLLER_LOG === '1') process.stderr.write(`[${prefix}/${name}] ${b.toString()}`);
      });
      proc.stderr!.on('data', (b: Buffer) => (out += b.toString()));
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      // Loading the controller's modules through tsx alone took 25 s at load average 19 here.
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          // Never left behind: it would keep leading (and this test file's process alive).
          proc.kill('SIGKILL');
          reject(new Error(`controller ${name} did not start in ${START_TIMEOUT_MS / 1000} s:\n${out.slice(-3000)}`));
        }, START_TIMEOUT_MS);
        proc.stdout!.on('data', () => {
          const m = /^ready (\S+)$/m.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          }
        });
        proc.once('exit', (code) => {
          clearTimeout(timer);
          reject(new Error(`controller ${name} exited with ${code}:\n${out.slice(-3000)}`));
        });
      });
      const c: ControllerProcess = {
        name,
        url,
        process: proc,
        output: () => out,
        async stop() {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
          await exited;
          controllers.splice(controllers.indexOf(c), 1);
        },
        async kill() {
          if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
          await exited;
          controllers.splice(controllers.indexOf(c), 1);
        },
      };
      controllers.push(c);
      return c;
    },
    url() {
      const c = controllers[0];
      if (!c) throw new Error('no controller runs: call startController() first');
      return c.url;
    },
    async push(files, message = 'change') {
      await clone.write(files);
      const sha = await clone.commit(message);
      await clone.push();
      return sha;
    },
    async createRepository(name, spec = {}) {
      await kc.makeApiClient(CoreV1Api).createNamespacedSecret({
        namespace: ns,
        body: { metadata: { name: `${name}-git` }, type: GIT_CREDENTIALS_SECRET_TYPE, stringData: { webhookSecret: WEBHOOK_SECRET } },
      });
      await custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: 'functionrepositories',
        body: {
          apiVersion: `${GROUP}/${VERSION}`,
          kind: 'FunctionRepository',
          metadata: { name },
          spec: { url: repo.url, interval: '10s', secretRef: { name: `${name}-git` }, ...spec },
        },
      });
    },
    async webhook(repository) {
      const body = Buffer.from(JSON.stringify({ ref: 'refs/heads/main', after: (await clone.run('rev-parse', 'HEAD')).trim(), commits: [] }));
      const signature = `sha256=${createHmac('sha256', WEBHOOK_SECRET).update(body).digest('hex')}`;
      return fetch(`${kit.url()}/hooks/${ns}/${repository}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-github-event': 'push', 'x-github-delivery': randomUUID(), 'x-hub-signature-256': signature },
        body,
      });
    },
    getFunction: (name) => get<FunctionResource>('functions', name),
    getRepository: (name) => get<RepositoryResource>('functionrepositories', name),
    async waitFunction(name, done, timeoutMs = 240_000) {
      let last: FunctionResource | undefined;
      try {
        return await eventually(
          async () => {
            last = await kit.getFunction(name);
            if (!last || !done(last)) throw new Error(`Function ${ns}/${name} not there yet`);
            return last;
          },
          { timeoutMs, intervalMs: 500 },
        );
      } catch (error) {
        const tail = controllers[0]?.output().slice(-4000) ?? '';
        throw new Error(`${(error as Error).message}; status: ${JSON.stringify(last?.status)}\ncontroller log tail:\n${tail}`, { cause: error });
      }
    },
    getFunctionJob: (name) => get<FunctionJobResource>('functionjobs', name),
    async callFn(name, init) {
      // A controller that died leaves its port to whoever takes it next: say so rather than read
      // someone else's answer as the function's.
      const c = controllers[0];
      if (c && (c.process.exitCode !== null || c.process.signalCode !== null)) {
        throw new Error(`controller ${c.name} exited (${c.process.exitCode ?? c.process.signalCode}):\n${c.output().slice(-3000)}`);
      }
      return fetch(`${kit.url()}/fn/${ns}/${name}`, { signal: AbortSignal.timeout(30_000), ...init });
    },
    async buildJobs(fn) {
      const selector = [`sless.kube5s.ru/function-namespace=${ns}`, ...(fn ? [`sless.kube5s.ru/function=${fn}`] : [])].join(',');
      return (await batch.listNamespacedJob({ namespace: buildNs, labelSelector: selector })).items;
    },
    async dispose() {
      for (const c of [...controllers]) await c.stop().catch(() => undefined);
      const list = (await custom
        .listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'functions' })
        .catch(() => ({ items: [] }))) as { items?: FunctionResource[] };
      for (const f of list.items ?? []) {
        await custom
          .patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'functions', name: f.metadata?.name ?? '', body: [{ op: 'remove', path: '/metadata/finalizers' }] })
          .catch(() => undefined);
      }
      for (const n of namespaces) await n.cleanup().catch(() => undefined);
      await rm(cacheDir, { recursive: true, force: true });
      await rm(clone.dir, { recursive: true, force: true });
    },
  };
  return kit;
}

/** The last `tailLines` log lines of every container (init ones first) of the pods in `namespace` matching `selector`. */
export async function podLogs(kc: KubeConfig, namespace: string, selector: string, tailLines = 30): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
  const out: string[] = [];
  for (const p of pods.items) {
    for (const c of [...(p.spec?.initContainers ?? []), ...(p.spec?.containers ?? [])]) {
      const log = await core.readNamespacedPodLog({ namespace, name: p.metadata!.name!, container: c.name, tailLines }).catch((e: unknown) => String(e));
      out.push(`--- ${p.metadata?.name}/${c.name}\n${log}`);
    }
  }
  return out.join('\n');
}
