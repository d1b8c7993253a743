// What the informer caches keep: only the fields the controller reads. managedFields (server-side apply's
// per-field ownership, often larger than the object itself) and kubectl's last-applied annotation are
// dropped from every cached object, in place, as it arrives. LISTs come in pages (both spellings of the
// continue token followed), so a first list of
// thousands of objects never arrives as one huge response.
import type { KubernetesListObject, KubernetesObject, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Strips what no reconciler reads; returns the same object. */
export function slimObject<T extends KubernetesObject>(obj: T): T {
  const meta = obj.metadata as (KubernetesObject['metadata'] & { managedFields?: unknown }) | undefined;
  if (meta) {
    delete meta.managedFields;
    if (meta.annotations?.[LAST_APPLIED] !== undefined) {
      const { [LAST_APPLIED]: _dropped, ...rest } = meta.annotations;
      meta.annotations = rest;
    }
  }
  return obj;
}

/**
 * What the Job cache keeps of a Job: metadata and status. No reconciler reads a Job's spec (its pod
 * template: a build's containers, arguments, presigned context URL and volumes, most of the object);
 * a thousand build Jobs kept it all. In place; returns the same object.
 */
export function jobForCache<T extends KubernetesObject & { spec?: unknown }>(job: T): T {
  delete job.spec;
  return job;
}

/**
 * What the build pod cache keeps of a pod: what a finished build is read for (its phase and reason, each
 * container's name and terminated/lastState.terminated: the digest in the push step's termination
 * message, exit codes, OOMKilled) and the metadata that finds it (labels, creation time). The spec and
 * everything else go. In place; returns the same object.
 */
export function podForCache(pod: V1Pod): V1Pod {
  delete pod.spec;
  const status = pod.status;
  if (status) {
    const keep = (cs: V1ContainerStatus[] | undefined) =>
      cs?.map(
        (c) =>
          ({
            name: c.name,
            ...(c.state?.terminated ? { state: { terminated: c.state.terminated } } : {}),
            ...(c.lastState?.terminated ? { lastState: { terminated: c.lastState.terminated } } : {}),
          }) as V1ContainerStatus,
      );
    const init = keep(status.initContainerStatuses);
    const main = keep(status.containerStatuses);
    pod.status = {
      ...(status.phase ? { phase: status.phase } : {}),
      ...(status.reason ? { reason: status.reason } : {}),
      ...(init ? { initContainerStatuses: init } : {}),
      ...(main ? { containerStatuses: main } : {}),
    };
  }
  return pod;
}

export const PAGE_SIZE = 500;

/**
 * Lists page by page (`limit` + `continue`) and answers one list: the items of every page and the first
 * page's resourceVersion (all pages of one LIST come from the same snapshot, so a watch from there
 * misses nothing).
 */
export async function listAllPages<T extends KubernetesObject>(
  page: (opts: { limit: number; _continue?: string }) => Promise<KubernetesListObject<T>>,
  transform: (o: T) => T = (o) => o,
  limit = PAGE_SIZE,
): Promise<KubernetesListObject<T>> {
  const first = await page({ limit });
  const items = first.items.map(transform);
  let next = continueOf(first);
  while (next) {
    const more = await page({ limit, _continue: next });
    for (const o of more.items) items.push(transform(o));
    next = continueOf(more);
  }
  const { continue: _raw, ...meta } = (first.metadata ?? {}) as NonNullable<typeof first.metadata> & { continue?: string };
  return { ...first, metadata: { ...meta, _continue: undefined }, items };
}

/**
 * The continue token: typed lists (ObjectSerializer) name it `_continue`, the plain JSON of custom object
 * lists `continue`. Reading only the first cached just the first page of every CRD kind past 500 objects.
 */
function continueOf(list: KubernetesListObject<KubernetesObject>): string | undefined {
  const meta = list.metadata as { _continue?: string; continue?: string } | undefined;
  return meta?._continue || meta?.continue || undefined;
}
