// Shared setup for the controller suites (test/integration/kube-*.test.ts): a real apiserver (service
// `kube`), a real SeaweedFS (service `s3`, or a private one that a test can stop), the real git server
// (service `git`), and the real Controller scoped to a fresh namespace. kube-controller-manager (when the
// kube service runs it) provides the job controller and the garbage collector; the kubelet harness in
// test/helpers/kube.ts plays kaniko and the pods.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppsV1Api, BatchV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig, type V1Job } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { S3ArtifactStore } from '../../src/build/s3-artifact-store.ts';
import { Controller } from '../../src/platform/kubernetes/controller.ts';
import type { ControllerLogger } from '../../src/platform/kubernetes/reconcilers/reconcile-context.ts';
import type { FunctionJobResource, FunctionResource, RepositoryResource, TriggerResource } from '../../src/platform/kubernetes/objects/resources.ts';
import type { ControllerSettings } from '../../src/platform/kubernetes/settings.ts';
import { createMemoryBuildLog } from '../../src/store/memory-log.ts';
import type { BuildLog } from '../../src/store/types.ts';
import { createRepo, sharedGitServer, WorkClone, type FileSpec } from '../helpers/git-server.ts';
import { controllersRunning, eventually, freshNamespace, getCustom, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { markDeploymentAvailable, markPodsReady } from '../helpers/kube-harness.ts';
import { sharedS3, type S3Access } from '../helpers/test-s3.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';

export { sharedS3, type S3Access } from '../helpers/test-s3.ts';

export const DIGEST_A = `sha256:${'a'.repeat(64)}`;
export const DIGEST_B = `sha256:${'b'.repeat(64)}`;

/** A function folder: function.yaml + handler.js. */
/** A Node.js function with a package.json: its build is kaniko's (fetch, kaniko, push), the Job these tests play. */
export function nodeFunction(name: string, extra: { env?: Record<string, string>; body?: string; yaml?: string } = {}): Record<string, FileSpec> {
  const env = Object.entries(extra.env ?? {}).map(([k, v]) => `  ${k}: "${v}"`);
  return {
    [`functions/${name}/function.yaml`]: `name: ${name}\nruntime: nodejs20\n${env.length ? `env:\n${env.join('\n')}\n` : ''}${extra.yaml ?? ''}`,
    [`functions/${name}/handler.js`]: extra.body ?? `exports.handle = async () => ({ hello: '${name}' });\n`,
    [`functions/${name}/package.json`]: `{ "name": "${name}", "private": true }\n`,
  };
}

export interface Kit {
  readonly kc: KubeConfig;
  readonly ns: string;
  readonly buildNs: string;
  readonly settings: ControllerSettings;
  readonly clone: WorkClone;
  readonly repoUrl: string;
  readonly logs: string[];
  /** The BuildLog every Controller of this kit writes (it outlives controller restarts, like PostgreSQL). */
  readonly buildLog: BuildLog;
  /** The metrics registry every Controller of this kit registers on (as /metrics would serve it). */
  readonly registry: Registry;
  controller?: Controller;
  /**
   * `as`: a kubeconfig the controller uses instead of the admin one (an impersonated ServiceAccount);
   * `watchAll`: it watches every namespace (those it creates itself, previews', too), as in production,
   * acting only on the kit's own and their previews'.
   */
  startController(as?: KubeConfig, opts?: { readonly watchAll?: boolean }): Promise<Controller>;
  stopController(): Promise<void>;
  /** A second namespace (another tenant) the kit's controllers also watch: make it before startController. */
  addNamespace(prefix: string): Promise<string>;
  createRepository(name: string, spec?: Record<string, unknown>): Promise<void>;
  getFunction(name: string): Promise<FunctionResource | undefined>;
  listFunctions(): Promise<FunctionResource[]>;
  getRepository(name: string): Promise<RepositoryResource>;
  getTrigger(name: string): Promise<TriggerResource | undefined>;
  getFunctionJob(name: string): Promise<FunctionJobResource | undefined>;
  buildJobs(fn?: string): Promise<V1Job[]>;
  /** Plays the kubelet for these functions' Deployments (once they exist): their pods Ready, the Deployment Available. */
  serve(...names: string[]): Promise<void>;
  /** The same in another namespace (a preview's). */
  serveIn(namespace: string, ...names: string[]): Promise<void>;
  dispose(): Promise<void>;
}

export async function setupKit(prefix: string, s3: S3Access = sharedS3(), overrides: Partial<ControllerSettings> = {}): Promise<Kit> {
  const kc = testKubeConfig();
  const namespaces: TestNamespace[] = [await freshNamespace(kc, prefix), await freshNamespace(kc, `${prefix}-builds`)];
  const [ns, buildNs] = namespaces.map((n) => n.name) as [string, string];
  const cacheDir = await mkdtemp(path.join(os.tmpdir(), 'sless-kube-cache-'));
  const repo = await createRepo(sharedGitServer(), prefix);
  const clone = await WorkClone.create(repo);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const batch = kc.makeApiClient(BatchV1Api);
  const logs: string[] = [];
  // SLESS_TEST_CONTROLLER_LOG=1 echoes the controller's log lines to stderr while debugging a suite.
  const echo = process.env.SLESS_TEST_CONTROLLER_LOG === '1';
  const at = (level: string) => (m: string) => {
    logs.push(`${level} ${m}`);
    if (echo) process.stderr.write(`[controller ${prefix}] ${level} ${m}\n`);
  };
  const logger: ControllerLogger = { info: at('info'), warn: at('warn'), error: at('error') };
  const settings: ControllerSettings = {
    registry: 'registry.test:5000/sless',
    kanikoImage: 'martizih/kaniko:v1.28.3',
    buildNamespace: buildNs,
    runtimeImagePrefix: 'registry.test:5000/runtimes',
    s3: { endpoint: s3.endpoint, bucket: s3.bucket, region: s3.region, credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey } },
    clusterDomain: 'cluster.local',
    cacheDir,
    resyncMs: 60_000,
    // The git server of the tests listens on loopback, which the controller refuses unless allowed.
    ...overrides,
    git: { allowedHosts: [new URL(repo.url).host], ...overrides.git },
    // Suites start more builds in one namespace than production allows at once (kube-builds: twenty)
    // and sync more often than production lets one repository (its sync share): no waits but the tests'.
    limits: { buildsPerNamespace: 1000, syncShare: 1, ...overrides.limits },
  };
  const get = <T>(plural: string, name: string): Promise<T | undefined> => getCustom<T>(custom, ns, plural, name);
  const kit: Kit = {
    kc,
    ns,
    buildNs,
    settings,
    clone,
    repoUrl: repo.url,
    logs,
    buildLog: createMemoryBuildLog(),
    registry: new Registry(),
    async startController(as, opts = {}) {
      const store = new S3ArtifactStore({
        bucket: s3.bucket,
        endpoint: s3.endpoint,
        region: s3.region,
        credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
        maxAttempts: 1,
        connectTimeoutMs: 1000,
      });
      kit.controller = new Controller({
        kubeConfig: as ?? kc,
        registry: kit.registry,
        logger,
        settings,
        store,
        // Watching all, it still acts only on this kit's namespaces and their previews': other test files share the API server.
        ...(opts.watchAll
          ? { namespaceScope: (n: string) => namespaces.some((t) => t.name === n) || n.startsWith(`${ns}-pr-`) }
          : { watchNamespace: namespaces.filter((n) => n.name !== buildNs).map((n) => n.name) }),
        backoff: { baseMs: 200, maxMs: 2_000 },
        buildLog: kit.buildLog,
      });
      await kit.controller.start();
      return kit.controller;
    },
    async stopController() {
      await kit.controller?.stop();
      kit.controller = undefined;
    },
    async addNamespace(other) {
      const n = await freshNamespace(kc, other);
      namespaces.push(n);
      return n.name;
    },
    async createRepository(name, spec = {}) {
      await custom.createNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace: ns,
        plural: 'functionrepositories',
        body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'FunctionRepository', metadata: { name }, spec: { url: repo.url, interval: '1m', ...spec } },
      });
    },
    getFunction: (name) => get<FunctionResource>('functions', name),
    async listFunctions() {
      const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'functions' })) as { items: FunctionResource[] };
      return list.items;
    },
    async getRepository(name) {
      const r = await get<RepositoryResource>('functionrepositories', name);
      if (!r) throw new Error(`FunctionRepository ${ns}/${name} does not exist`);
      return r;
    },
    getTrigger: (name) => get<TriggerResource>('triggers', name),
    getFunctionJob: (name) => get<FunctionJobResource>('functionjobs', name),
    async buildJobs(fn) {
      const selector = [`sless.kube5s.ru/function-namespace=${ns}`, ...(fn ? [`sless.kube5s.ru/function=${fn}`] : [])].join(',');
      return (await batch.listNamespacedJob({ namespace: buildNs, labelSelector: selector })).items;
    },
    serve: (...names) => kit.serveIn(ns, ...names),
    async serveIn(ns, ...names) {
      const appsApi = kc.makeApiClient(AppsV1Api);
      await Promise.all(
        names.map(async (name) => {
          await eventually(() => appsApi.readNamespacedDeployment({ namespace: ns, name }), { timeoutMs: 60_000 });
          if (!controllersRunning()) return markDeploymentAvailable(kc, ns, name, { timeoutMs: 60_000 });
          // Until the rollout is complete: ready whatever pods exist (the new ReplicaSet's appear as it scales up).
          await eventually(
            async () => {
              const d = await appsApi.readNamespacedDeployment({ namespace: ns, name });
              const selector = Object.entries(d.spec?.selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`).join(',');
              const want = d.spec?.replicas ?? 1;
              if (want > 0) await markPodsReady(kc, ns, selector, { timeoutMs: 5_000 });
              const s = d.status ?? {};
              const done = (s.observedGeneration ?? 0) >= (d.metadata?.generation ?? 0) && (s.updatedReplicas ?? 0) === want && (s.availableReplicas ?? 0) === want && (s.replicas ?? 0) === want;
              if (!done) throw new Error(`Deployment ${ns}/${name} is still rolling out: ${JSON.stringify(s)}`);
            },
            { timeoutMs: 60_000, intervalMs: 300 },
          );
        }),
      );
    },
    async dispose() {
      await kit.stopController();
      // Functions carry a finalizer that only a running controller removes: drop it so the namespace can go.
      for (const f of await kit.listFunctions().catch(() => [])) {
        await custom
          .patchNamespacedCustomObject(
            { group: GROUP, version: VERSION, namespace: ns, plural: 'functions', name: f.metadata?.name ?? '', body: [{ op: 'remove', path: '/metadata/finalizers' }] },
          )
          .catch(() => undefined);
      }
      // So do FunctionRepositories with prune: false.
      const repos = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'functionrepositories' }).catch(() => ({ items: [] }))) as {
        items: RepositoryResource[];
      };
      for (const r of repos.items) {
        if (!r.metadata?.finalizers?.length) continue;
        await custom
          .patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: ns, plural: 'functionrepositories', name: r.metadata.name ?? '', body: [{ op: 'remove', path: '/metadata/finalizers' }] })
          .catch(() => undefined);
      }
      for (const n of namespaces) await n.cleanup();
      await rm(cacheDir, { recursive: true, force: true });
      await rm(clone.dir, { recursive: true, force: true });
    },
  };
  return kit;
}

export function apps(kc: KubeConfig): AppsV1Api {
  return kc.makeApiClient(AppsV1Api);
}
export function core(kc: KubeConfig): CoreV1Api {
  return kc.makeApiClient(CoreV1Api);
}
export function batchApi(kc: KubeConfig): BatchV1Api {
  return kc.makeApiClient(BatchV1Api);
}
export function customApi(kc: KubeConfig): CustomObjectsApi {
  return kc.makeApiClient(CustomObjectsApi);
}

/** One JSON Patch operation (RFC 6902). */
export type JsonPatchOp = { op: 'add' | 'replace' | 'remove' | 'test'; path: string; value?: unknown };

/** JSON-patches the sless object `plural`/`name` in the kit's namespace (as a user's `kubectl patch --type=json` would). */
export async function patchCustom(kit: { readonly kc: KubeConfig; readonly ns: string }, plural: string, name: string, ops: JsonPatchOp[]): Promise<void> {
  await customApi(kit.kc).patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: kit.ns, plural, name, body: ops });
}

/** Condition `type` of an object's status. */
export function conditionOf(obj: { status?: { conditions?: Array<{ type: string; status: string; reason: string; message: string }> } } | undefined, type = 'Ready') {
  return obj?.status?.conditions?.find((c) => c.type === type);
}
