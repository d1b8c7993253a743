// The I/O of copying the base namespace's ResourceQuotas and LimitRanges into a preview namespace
// (decisions: previews/preview-limits.ts). The controller's ClusterRole lists both kinds everywhere and
// writes them; the admission policy sless-controller-preview-limits (deploy/base/rbac.yaml) lets those
// writes through only in preview namespaces and only on objects labelled managed-by=sless.
import type { CoreV1Api, V1LimitRange, V1ObjectMeta, V1ResourceQuota } from '@kubernetes/client-node';
import { apiMessage, isStatus } from '../api-client/kube-client.ts';
import { LIMIT_KINDS, planLimitCopies, type LimitCopy, type LimitCopyPlan, type LimitKind, type LimitObject } from '../previews/preview-limits.ts';
import type { PreviewIdentity } from '../previews/preview-objects.ts';

type LimitBody = V1ResourceQuota | V1LimitRange;

interface KindApi {
  list(namespace: string): Promise<{ items: Array<{ metadata?: V1ObjectMeta; spec?: unknown }> }>;
  create(namespace: string, body: LimitBody): Promise<unknown>;
  replace(namespace: string, name: string, body: LimitBody): Promise<unknown>;
  delete(namespace: string, name: string): Promise<unknown>;
}

function kindApis(core: CoreV1Api): Record<LimitKind, KindApi> {
  return {
    ResourceQuota: {
      list: (namespace) => core.listNamespacedResourceQuota({ namespace }),
      create: (namespace, body) => core.createNamespacedResourceQuota({ namespace, body: body as V1ResourceQuota }),
      replace: (namespace, name, body) => core.replaceNamespacedResourceQuota({ namespace, name, body: body as V1ResourceQuota }),
      delete: (namespace, name) => core.deleteNamespacedResourceQuota({ namespace, name }),
    },
    LimitRange: {
      list: (namespace) => core.listNamespacedLimitRange({ namespace }),
      create: (namespace, body) => core.createNamespacedLimitRange({ namespace, body: body as V1LimitRange }),
      replace: (namespace, name, body) => core.replaceNamespacedLimitRange({ namespace, name, body: body as V1LimitRange }),
      delete: (namespace, name) => core.deleteNamespacedLimitRange({ namespace, name }),
    },
  };
}

export class PreviewLimitsCopy {
  private readonly apis: Record<LimitKind, KindApi>;

  constructor(core: CoreV1Api) {
    this.apis = kindApis(core);
  }

  /** Every ResourceQuota and LimitRange of `namespace` (`purpose` says why, for the error). */
  async list(namespace: string, purpose: string): Promise<LimitObject[]> {
    const all: LimitObject[] = [];
    for (const kind of LIMIT_KINDS) {
      let items;
      try {
        ({ items } = await this.apis[kind].list(namespace));
      } catch (err) {
        throw new Error(`cannot list the ${kind}s of namespace ${namespace} ${purpose}: ${apiMessage(err)}`, { cause: err });
      }
      for (const o of items) {
        const { name, labels, resourceVersion } = o.metadata ?? {};
        if (name) all.push({ kind, name, spec: o.spec ?? {}, ...(labels ? { labels } : {}), ...(resourceVersion ? { resourceVersion } : {}) });
      }
    }
    return all;
  }

  /**
   * Makes the preview's copies equal to `base` (the base namespace's objects, as list() read them): creates,
   * updates, deletes. Throws at the first write the API server refuses, naming the object and both namespaces.
   */
  async sync(base: readonly LimitObject[], preview: string, p: PreviewIdentity): Promise<LimitCopyPlan> {
    const plan = planLimitCopies(base, await this.list(preview, 'to compare them with their base'), p);
    // The spec is the base object's of the same kind, as the API server listed it.
    const body = (c: LimitCopy) =>
      ({
        apiVersion: 'v1',
        kind: c.kind,
        metadata: { name: c.name, namespace: preview, labels: { ...c.labels }, ...(c.resourceVersion ? { resourceVersion: c.resourceVersion } : {}) },
        spec: c.spec,
      }) as LimitBody;
    for (const c of plan.create) {
      try {
        await this.apis[c.kind].create(preview, body(c));
      } catch (err) {
        throw new Error(`cannot copy ${c.kind} ${p.namespace}/${c.name} into the preview namespace ${preview}: ${apiMessage(err)}`, { cause: err });
      }
    }
    for (const c of plan.update) {
      try {
        await this.apis[c.kind].replace(preview, c.name, body(c));
      } catch (err) {
        throw new Error(`cannot update ${c.kind} ${preview}/${c.name} to equal ${p.namespace}/${c.name}: ${apiMessage(err)}`, { cause: err });
      }
    }
    for (const d of plan.delete) {
      try {
        await this.apis[d.kind].delete(preview, d.name);
      } catch (err) {
        if (!isStatus(err, 404)) throw new Error(`cannot delete ${d.kind} ${preview}/${d.name} (${p.namespace}/${d.name} is gone): ${apiMessage(err)}`, { cause: err });
      }
    }
    return plan;
  }
}
