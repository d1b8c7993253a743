// The preview namespace's I/O on the leader: read, create with the preview labels and the base's tenant
// rules (the reserved-name refusal and the controller's RoleBinding, tenant-access.ts; the per-namespace
// caps of settings apply to it as to every namespace), copy the Secrets env_from_secrets names
// (`secrets: inherit`), delete. A namespace without this preview's labels is never reused or deleted.
import type { V1Namespace } from '@kubernetes/client-node';
import { apiMessage, isStatus } from '../api-client/kube-client.ts';
import type { ReconcileContext } from './reconcile-context.ts';
import { isPreviewNamespace, previewNamespaceObject, type PreviewIdentity } from '../previews/preview-objects.ts';

export class PreviewNamespaces {
  constructor(private readonly ctx: Pick<ReconcileContext, 'kube' | 'tenants'>) {}

  /** The namespace, or undefined when there is none. */
  async read(name: string): Promise<V1Namespace | undefined> {
    try {
      return await this.ctx.kube.core.readNamespace({ name });
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw new Error(`cannot read namespace ${name}: ${apiMessage(err)}`, { cause: err });
    }
  }

  /** Whether `name` exists and is not this preview (a decision input: decidePreview's takenByOther). */
  async takenByOther(name: string, p: PreviewIdentity): Promise<boolean> {
    const ns = await this.read(name);
    return !!ns && !isPreviewNamespace(ns.metadata?.labels, p);
  }

  /** Creates the preview namespace when absent, then the base's tenant rules there. */
  async ensure(name: string, p: PreviewIdentity): Promise<void> {
    this.ctx.tenants.refuseReserved(name);
    const ns = await this.read(name);
    if (ns && !isPreviewNamespace(ns.metadata?.labels, p)) throw new Error(`namespace ${name} exists and is not this repository's preview`);
    if (ns?.metadata?.deletionTimestamp) throw new Error(`namespace ${name} is still being removed (an earlier preview of #${p.number}); retrying`);
    if (!ns) {
      try {
        await this.ctx.kube.core.createNamespace({ body: previewNamespaceObject(name, p) });
      } catch (err) {
        if (!isStatus(err, 409)) throw new Error(`cannot create the preview namespace ${name}: ${apiMessage(err)}`, { cause: err });
      }
    }
    await this.ctx.tenants.ensure(name);
  }

  /**
   * `secrets: inherit`: the Secrets of the base namespace that `names` lists, copied (type and data) into
   * the preview after the same check a function's env_from_secrets gets (tenant-rules.ts: never the
   * platform's own Secrets or git credentials). A Secret missing in the base is left out: the function's
   * own reconcile then says which one is missing, as in production.
   */
  async copySecrets(base: string, preview: string, names: readonly string[], opts: { readonly pullSecrets?: boolean } = {}): Promise<void> {
    // The image pull Secrets the operator put in the base (SLESS_IMAGE_PULL_SECRETS) are the platform's, copied unchecked.
    if (!opts.pullSecrets) await this.ctx.tenants.checkEnvSecrets(base, names);
    for (const name of new Set(names)) {
      let secret;
      try {
        secret = await this.ctx.kube.core.readNamespacedSecret({ namespace: base, name });
      } catch (err) {
        if (isStatus(err, 404)) continue;
        throw new Error(`cannot read Secret ${base}/${name} to copy it into ${preview}: ${apiMessage(err)}`, { cause: err });
      }
      const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: preview, labels: { 'app.kubernetes.io/managed-by': 'sless' } }, type: secret.type ?? 'Opaque', data: secret.data ?? {} };
      try {
        await this.ctx.kube.core.replaceNamespacedSecret({ namespace: preview, name, body });
      } catch (err) {
        if (!isStatus(err, 404)) throw new Error(`cannot copy Secret ${base}/${name} into ${preview}: ${apiMessage(err)}`, { cause: err });
        await this.ctx.kube.core.createNamespacedSecret({ namespace: preview, body });
      }
    }
  }

  /** Deletes the preview namespace (everything in it goes with it); answers whether one was there. */
  async remove(name: string, p: PreviewIdentity): Promise<boolean> {
    const ns = await this.read(name);
    if (!ns || !isPreviewNamespace(ns.metadata?.labels, p)) return false;
    if (ns.metadata?.deletionTimestamp) return true;
    try {
      await this.ctx.kube.core.deleteNamespace({ name });
    } catch (err) {
      if (!isStatus(err, 404)) throw new Error(`cannot delete the preview namespace ${name}: ${apiMessage(err)}`, { cause: err });
    }
    return true;
  }
}
