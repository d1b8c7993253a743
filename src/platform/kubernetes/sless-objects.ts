// Thin access to the sless custom objects (Function, Trigger, FunctionJob, FunctionRepository) for the
// /v1 side of KubernetesPlatform: every API server failure becomes a PlatformError that names the object.
import { CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { PlatformError } from '../types.ts';
import { apiStatusCode, toPlatformError } from './api-errors.ts';
import { API_VERSION, GROUP, LABELS } from './objects/meta.ts';
import { KINDS, type FunctionJobResource, type FunctionResource, type RepositoryResource, type SlessKind, type TriggerResource } from './objects/resources.ts';
import { repositoryOf } from './records.ts';
import { VERSION } from './api-client/kube-client.ts';

export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Labels every object made through /v1 carries. */
export const API_LABELS = { [LABELS.managedBy]: 'sless' } as const;

export type AnyResource = FunctionResource | TriggerResource | FunctionJobResource | RepositoryResource;

export class SlessObjects {
  private readonly custom: CustomObjectsApi;

  constructor(kubeConfig: KubeConfig) {
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  async get<T extends AnyResource>(kind: SlessKind, namespace: string, name: string, what: string): Promise<T> {
    try {
      return (await this.custom.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name })) as T;
    } catch (err) {
      throw toPlatformError(err, what);
    }
  }

  /** Like get, but undefined when the object does not exist. */
  async find<T extends AnyResource>(kind: SlessKind, namespace: string, name: string): Promise<T | undefined> {
    try {
      return await this.get<T>(kind, namespace, name, `${kind} ${namespace}/${name}`);
    } catch (err) {
      if (err instanceof PlatformError && err.code === 'not_found') return undefined;
      throw err;
    }
  }

  /** The objects of a kind in a namespace, sorted by name. */
  async list<T extends AnyResource>(kind: SlessKind, namespace: string, labelSelector?: string): Promise<T[]> {
    try {
      const list = (await this.custom.listNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: KINDS[kind].plural,
        ...(labelSelector ? { labelSelector } : {}),
      })) as { items: T[] };
      return list.items.sort((a, b) => compareNames(a.metadata?.name, b.metadata?.name));
    } catch (err) {
      throw toPlatformError(err, `${KINDS[kind].plural} in ${namespace}`);
    }
  }

  async create<T extends AnyResource>(kind: SlessKind, namespace: string, body: T, what: string): Promise<T> {
    try {
      return (await this.custom.createNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, body })) as T;
    } catch (err) {
      if (apiStatusCode(err) === 404) throw namespaceMissing(namespace, err);
      throw toPlatformError(err, what);
    }
  }

  async patch<T extends AnyResource>(kind: SlessKind, namespace: string, name: string, body: object, what: string): Promise<T> {
    try {
      return (await this.custom.patchNamespacedCustomObject(
        { group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body },
        mergePatch,
      )) as T;
    } catch (err) {
      throw toPlatformError(err, what);
    }
  }

  /** Replaces the whole object (its resourceVersion guards against a write in between: 409). Errors stay raw. */
  async replaceRaw<T extends AnyResource>(kind: SlessKind, namespace: string, name: string, body: T): Promise<T> {
    return (await this.custom.replaceNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural: KINDS[kind].plural, name, body })) as T;
  }

  /** Deletes; `Orphan` leaves what the object owns in place (ownerReferences removed by the garbage collector). */
  async remove(kind: SlessKind, namespace: string, name: string, what: string, propagationPolicy: 'Background' | 'Orphan' = 'Background'): Promise<void> {
    try {
      await this.custom.deleteNamespacedCustomObject({
        group: GROUP,
        version: VERSION,
        namespace,
        plural: KINDS[kind].plural,
        name,
        propagationPolicy,
      });
    } catch (err) {
      throw toPlatformError(err, what);
    }
  }
}

/** Refuses to change an object a FunctionRepository generates: the next sync would put it back. */
export function assertApiManaged(obj: AnyResource, what: string, todo: string): void {
  const repository = repositoryOf(obj);
  if (repository) {
    throw new PlatformError(
      'managed_by_git',
      `${what} is managed by the FunctionRepository ${obj.metadata?.namespace ?? ''}/${repository}; ${todo} in its git repository instead`,
      { repository },
    );
  }
}

/** An owner reference that lets the garbage collector remove `obj` with its owner (not its controller). */
export function ownedBy(owner: AnyResource): { apiVersion: string; kind: string; name: string; uid: string; blockOwnerDeletion: boolean } {
  const name = owner.metadata?.name;
  const uid = owner.metadata?.uid;
  if (!name || !uid) throw new PlatformError('unavailable', `the API server returned ${owner.kind ?? 'an object'} without name or uid`);
  return { apiVersion: owner.apiVersion ?? API_VERSION, kind: owner.kind ?? '', name, uid, blockOwnerDeletion: false };
}

/** Creating in a namespace that does not exist answers 404 too. */
export function namespaceMissing(namespace: string, cause: unknown): PlatformError {
  return new PlatformError('not_found', `namespace ${namespace} does not exist; create it first (POST /v1/namespaces/${namespace}/ensure)`, { cause });
}

function compareNames(a: string | undefined, b: string | undefined): number {
  const x = a ?? '';
  const y = b ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}
