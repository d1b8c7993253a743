// Shared setup for the KubernetesPlatform suites: the real API server (service `kube`), the real
// SeaweedFS (service `s3`), a fresh namespace, and a platform with the endpoint cache turned off so every
// resolveEndpoint reads the API server.
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { S3ArtifactStore } from '../../src/build/s3-artifact-store.ts';
import { KubernetesPlatform, type KubernetesPlatformOptions } from '../../src/platform/kubernetes/kubernetes-platform.ts';
import type { CodeFile } from '../../src/platform/types.ts';
import type { ControllerSettings } from '../../src/platform/kubernetes/settings.ts';
import { testControllerSettings } from '../helpers/controller-settings.ts';
import { freshNamespace, testKubeConfig, type TestNamespace } from '../helpers/kube.ts';
import { s3ControllerEnv, sharedS3 } from '../helpers/test-s3.ts';

export const GROUP = 'sless.kube5s.ru';
export const VERSION = 'v1alpha1';

export interface PlatformKit {
  readonly kc: KubeConfig;
  readonly ns: string;
  readonly store: S3ArtifactStore;
  readonly platform: KubernetesPlatform;
  readonly custom: CustomObjectsApi;
  readonly core: CoreV1Api;
  readonly apps: AppsV1Api;
  dispose(): Promise<void>;
}

export function testS3Store(): S3ArtifactStore {
  const s3 = sharedS3();
  return new S3ArtifactStore({ bucket: s3.bucket, endpoint: s3.endpoint, region: s3.region, credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey } });
}

function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this suite through \`npm test\` (it starts the kube and s3 services)`);
  return v;
}

/** The settings of a `sless controller` under test: the test S3, a test registry, the given build namespace. */
export function controllerTestEnv(jwtSecret: string, buildNamespace: string): Record<string, string> {
  return {
    SLESS_JWT_SECRET: jwtSecret,
    ...s3ControllerEnv(),
    SLESS_REGISTRY: 'registry.test:5000/sless',
    SLESS_BUILD_NAMESPACE: buildNamespace,
    SLESS_LOG_LEVEL: 'warn',
  };
}

/** The kubeconfig the kube test service wrote. */
export function testKubeconfigPath(): string {
  return requireEnv('SLESS_TEST_KUBECONFIG');
}

/** The platform's settings over the test S3 store; `overrides` change what a test needs (limits). */
export function platformSettings(store: S3ArtifactStore, overrides: Partial<ControllerSettings> = {}): KubernetesPlatformOptions['settings'] {
  return testControllerSettings({
    clusterDomain: 'cluster.test',
    runtimeImagePrefix: 'registry.test:5000/runtimes',
    s3: { bucket: process.env.SLESS_TEST_S3_BUCKET ?? store.location, region: 'us-east-1' },
    publicBaseUrl: 'https://fn.example.test/',
    ...overrides,
  });
}

export async function setupPlatformKit(prefix: string, options: Partial<KubernetesPlatformOptions> = {}): Promise<PlatformKit> {
  const kc = testKubeConfig();
  const namespace: TestNamespace = await freshNamespace(kc, prefix);
  const store = testS3Store();
  const platform = new KubernetesPlatform({
    kubeConfig: kc,
    store,
    settings: platformSettings(store),
    endpointTtl: { readyMs: 0, otherMs: 0 },
    ...options,
  });
  return {
    kc,
    ns: namespace.name,
    store,
    platform,
    custom: kc.makeApiClient(CustomObjectsApi),
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    dispose: () => namespace.cleanup(),
  };
}

/** Functions carry a finalizer only a running controller removes: drop it from every Function of a namespace so the namespace can go. */
export async function dropFunctionFinalizers(kc: KubeConfig, namespace: string): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const list = (await custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'functions' })) as { items: Array<{ metadata?: { name?: string } }> };
  for (const f of list.items) {
    await custom
      .patchNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: 'functions', name: f.metadata?.name ?? '', body: [{ op: 'remove', path: '/metadata/finalizers' }] })
      .catch(() => undefined);
  }
}

export function file(path: string, content: string, mode: CodeFile['mode'] = '100644'): CodeFile {
  return { path, mode, content: Buffer.from(content) };
}

/** A small node function with a helper module, an executable script and a symlink. */
export const NODE_CODE: readonly CodeFile[] = [
  file('handler.js', "exports.handle = async (e) => ({ hello: e.name ?? 'world' });\n"),
  file('lib/util.js', 'module.exports = (x) => x * 2;\n'),
  file('bin/run.sh', '#!/bin/sh\necho hi\n', '100755'),
  file('current.js', 'handler.js', '120000'),
];
