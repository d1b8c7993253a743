// Applies every CustomResourceDefinition in crds/ and waits until the apiserver serves them
// (condition Established=True), so that the first test can create objects right away.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  ApiextensionsV1Api,
  loadAllYaml,
  type KubeConfig,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';

export const CRD_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'crds');

/** The YAML text of each CRD file, in name order. */
export async function readCrdFiles(dir = CRD_DIR): Promise<Array<{ file: string; text: string }>> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
  return Promise.all(files.map(async (file) => ({ file, text: await readFile(path.join(dir, file), 'utf8') })));
}

/** The CRDs as client models. Plain parsed YAML would not do: the client's serializer only knows
 * its model property names (`_enum`, `_default`, `xKubernetesValidations`) and would silently drop
 * `enum`, `default` and `x-kubernetes-validations` from the request. */
export async function readCrds(dir = CRD_DIR): Promise<V1CustomResourceDefinition[]> {
  return (await readCrdFiles(dir))
    .flatMap(({ text }) => loadAllYaml(text) as Array<{ kind?: string }>)
    .filter((o): o is V1CustomResourceDefinition => o.kind === 'CustomResourceDefinition');
}

export async function installCrds(kc: KubeConfig, timeoutMs = 30_000): Promise<string[]> {
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const crds = await readCrds();
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    try {
      await api.createCustomResourceDefinition({ body: crd });
    } catch (error) {
      if (!(error instanceof ApiException) || error.code !== 409) {
        throw new Error(`applying CRD ${name} failed: ${describe(error)}`, { cause: error });
      }
      const current = await api.readCustomResourceDefinition({ name });
      await api.replaceCustomResourceDefinition({
        name,
        body: { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata?.resourceVersion } },
      });
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const crd of crds) {
    const name = crd.metadata?.name ?? '';
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name });
      const established = current.status?.conditions?.find((c) => c.type === 'Established');
      if (established?.status === 'True') break;
      if (Date.now() > deadline) {
        throw new Error(`CRD ${name} is not Established after ${timeoutMs} ms: ${JSON.stringify(current.status?.conditions)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return crds.map((c) => c.metadata?.name ?? '');
}

function describe(error: unknown): string {
  if (error instanceof ApiException) {
    try {
      return (JSON.parse(String(error.body)) as { message?: string }).message ?? String(error.body);
    } catch {
      return String(error.body);
    }
  }
  return error instanceof Error ? error.message : String(error);
}
