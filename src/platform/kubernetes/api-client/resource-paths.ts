// Where an object lives on the API server, for the kinds the controller writes: client-node's
// KubernetesObjectApi finds a kind's plural by discovery, then (de)serializes every body through its model
// classes. The controller's kinds are few and fixed, so their paths are known here; any other kind is
// undefined and its caller keeps client-node's way.
import { GROUP, KINDS, VERSION } from '../crd-types.ts';

const CORE: Readonly<Record<string, string>> = {
  'v1/Service': 'services',
  'v1/Secret': 'secrets',
  'v1/ConfigMap': 'configmaps',
  'v1/Pod': 'pods',
  'v1/Event': 'events',
  'apps/v1/Deployment': 'deployments',
  'batch/v1/Job': 'jobs',
  'batch/v1/CronJob': 'cronjobs',
};

const PLURALS: ReadonlyMap<string, string> = new Map([
  ...Object.entries(CORE),
  ...Object.values(KINDS).map((k) => [`${GROUP}/${VERSION}/${k.kind}`, k.plural] as const),
]);

/**
 * `/api/v1/namespaces/ns/plural[/name]` or `/apis/group/version/namespaces/ns/plural[/name]` for a
 * namespaced kind the controller knows; undefined for any other kind (or no namespace).
 */
export function resourcePath(apiVersion: string | undefined, kind: string | undefined, namespace: string | undefined, name?: string): string | undefined {
  const plural = PLURALS.get(`${apiVersion}/${kind}`);
  if (!plural || !namespace) return undefined;
  const root = apiVersion!.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const collection = `${root}/namespaces/${encodeURIComponent(namespace)}/${plural}`;
  return name === undefined ? collection : `${collection}/${encodeURIComponent(name)}`;
}
