// Helpers for suites that run against the real test cluster (the `kube` service, test/services/kube.ts).
//
//   const kc = testKubeConfig();                          // admin client config; fails clearly if unset
//   const ns = await freshNamespace(kc, 'fn-reconcile');  // random namespace for this test
//   after(() => ns.cleanup());
//   const fn = await eventually(async () => {              // retry until it stops throwing
//     const f = await getFunction(...);
//     assert.equal(f.status?.phase, 'Ready');
//     return f;
//   }, { timeoutMs: 20_000 });
//
// The kubelet harness (pods Running/Ready, Jobs Complete/Failed) is in kube-harness.ts.
import { randomBytes } from 'node:crypto';
import { ApiException, CoreV1Api, KubeConfig, type CustomObjectsApi } from '@kubernetes/client-node';

/** The sless object `plural`/`name` in `namespace`, or undefined when there is none (404). */
export async function getCustom<T>(custom: CustomObjectsApi, namespace: string, plural: string, name: string): Promise<T | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ group: 'sless.kube5s.ru', version: 'v1alpha1', namespace, plural, name })) as T;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

export function testKubeConfig(): KubeConfig {
  const file = process.env.SLESS_TEST_KUBECONFIG;
  if (!file) {
    throw new Error(
      'SLESS_TEST_KUBECONFIG is not set: run this suite through `npm test` (it starts the kube service), ' +
        'or `npm run cluster:up` and SLESS_TEST_KUBECONFIG=.sless-test/kubeconfig',
    );
  }
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
}

/** Whether kube-controller-manager runs in the test cluster (set by the kube service). */
export function controllersRunning(): boolean {
  return process.env.SLESS_TEST_KUBE_CONTROLLERS !== '0';
}

export interface TestNamespace {
  readonly name: string;
  /** Deletes the namespace (without controllers it stays Terminating, which is harmless). */
  cleanup(): Promise<void>;
}

export async function freshNamespace(kc: KubeConfig, prefix: string): Promise<TestNamespace> {
  const base = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 50);
  const name = `${base || 'test'}-${randomBytes(4).toString('hex')}`;
  const core = kc.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name, labels: { 'sless-test': 'true' } } } });
  return {
    name,
    cleanup: async () => {
      try {
        await core.deleteNamespace({ name });
      } catch (error) {
        if (!(error instanceof ApiException && error.code === 404)) throw error;
      }
    },
  };
}

export interface EventuallyOptions {
  readonly timeoutMs?: number;
  readonly intervalMs?: number;
}

/** Calls fn until it resolves (without throwing) and returns its value; on timeout rethrows the
 * last error, so the failing assertion is what the test report shows. */
export async function eventually<T>(fn: () => Promise<T> | T, options: EventuallyOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 20_000;
  const intervalMs = options.intervalMs ?? 100;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      if (Date.now() + intervalMs > deadline) {
        if (error instanceof Error) error.message = `after ${timeoutMs} ms: ${error.message}`;
        throw error;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
