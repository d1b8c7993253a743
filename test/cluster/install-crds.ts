// Applies every CustomResourceDefinition in crds/ and waits until the apiserver serves them
// (condition Established=True, then a LIST from its watch cache succeeds), so that the first test
// can create and list objects right away.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ApiException,
  ApiextensionsV1Api,
  CustomObjectsApi,
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

export interface InstallCrdsOptions {
  /** The CRDs to install (default: crds/). */
  crds?: V1CustomResourceDefinition[];
  timeoutMs?: number;
}

export async function installCrds(kc: KubeConfig, options: InstallCrdsOptions = {}): Promise<string[]> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const api = kc.makeApiClient(ApiextensionsV1Api);
  const crds = options.crds ?? (await readCrds());
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
      await sleep(100);
    }
  }
  await waitUntilListed(kc, crds, deadline, timeoutMs);
  return crds.map((c) => c.metadata?.name ?? '');
}

/** Established is not yet served: the API server builds a CRD's storage at the first request after
 * it and answers 429 "storage is (re)initializing" until its watch cache is filled (a test file run
 * right after the service started got that). A LIST with resourceVersion=0 is served from that cache
 * only, so once it succeeds for every served version, lists and watches of the kind are served. */
async function waitUntilListed(kc: KubeConfig, crds: V1CustomResourceDefinition[], deadline: number, timeoutMs: number): Promise<void> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (const crd of crds) {
    const { group, names } = crd.spec;
    for (const version of crd.spec.versions.filter((v) => v.served)) {
      for (;;) {
        try {
          await custom.listClusterCustomObject({ group, version: version.name, plural: names.plural, resourceVersion: '0', limit: 1 });
          break;
        } catch (error) {
          if (!(error instanceof ApiException) || error.code !== 429) {
            throw new Error(`listing ${names.plural}.${group}/${version.name} failed: ${describe(error)}`, { cause: error });
          }
          if (Date.now() > deadline) {
            throw new Error(`${names.plural}.${group}/${version.name} is not served after ${timeoutMs} ms: ${describe(error)}`, { cause: error });
          }
          await sleep(100);
        }
      }
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
