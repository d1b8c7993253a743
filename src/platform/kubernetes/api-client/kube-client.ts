// The thin adapter between the reconcilers and the API server: server-side apply with field manager
// `sless`, status merge patches on the status subresource, NotFound-tolerant reads and deletes, events and
// pod logs. Everything else in the controller is decisions over plain objects. The writes of the kinds the
// controller knows (resource-paths.ts) go as plain JSON (json-api.ts); others through client-node.
import {
  ApiException,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
  type V1Pod,
} from '@kubernetes/client-node';
import { VERSION } from '../crd-types.ts';
import { FIELD_MANAGER, GROUP } from '../objects/meta.ts';
import { KINDS, type SlessKind } from '../objects/resources.ts';
import { EventRecorder, type EventRecorderOptions, type EventTarget } from './event-recorder.ts';
import { CONTENT_TYPES, JsonApi } from './json-api.ts';
import { resourcePath } from './resource-paths.ts';

export { VERSION };

export function isStatus(err: unknown, code: number): boolean {
  return err instanceof ApiException && err.code === code;
}

/** The API server's message from an ApiException body (a JSON Status string), else the error's message. */
export function apiMessage(err: unknown): string {
  if (err instanceof ApiException) {
    try {
      const status = JSON.parse(String(err.body)) as { message?: string };
      if (status.message) return `${status.message} (HTTP ${err.code})`;
    } catch {
      // not JSON: fall through
    }
    return `HTTP ${err.code}`;
  }
  return err instanceof Error ? err.message : String(err);
}

function pathOf(obj: EventTarget): string | undefined {
  return obj.metadata?.name ? resourcePath(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name) : undefined;
}

function describe(obj: EventTarget): string {
  return `${obj.kind ?? '?'} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name ?? '?'}`;
}

export type { EventTarget };

export class KubeClient {
  readonly objects: KubernetesObjectApi;
  readonly core: CoreV1Api;
  readonly batch: BatchV1Api;
  readonly custom: CustomObjectsApi;
  private readonly json: JsonApi;
  /** Counts API requests made through this client (for the benchmark and metrics). */
  requests = 0;
  /** The same, per operation (`apply:Function`, `status:Trigger`, `event`, ...). */
  readonly requestsByOperation: Record<string, number> = {};

  private note(operation: string): void {
    this.requests++;
    this.requestsByOperation[operation] = (this.requestsByOperation[operation] ?? 0) + 1;
  }

  /** Events by outcome and object (public for tests and the controller's forget-on-delete). */
  readonly events: EventRecorder;

  /** `events`: the recorder's window and update interval (tests shorten them). */
  constructor(
    readonly kubeConfig: KubeConfig,
    eventOptions: Pick<EventRecorderOptions, 'windowMs' | 'updateEveryMs'> = {},
  ) {
    this.objects = KubernetesObjectApi.makeApiClient(kubeConfig);
    this.json = new JsonApi(kubeConfig);
    this.core = kubeConfig.makeApiClient(CoreV1Api);
    this.events = new EventRecorder({
      ...eventOptions,
      sink: {
        create: async (namespace, body) => {
          this.note('event');
          const created = await this.core.createNamespacedEvent({ namespace, body });
          return created.metadata?.name ? { name: created.metadata.name } : undefined;
        },
        update: async (namespace, name, count, lastTimestamp, message) => {
          this.note('event');
          await this.core.patchNamespacedEvent(
            { namespace, name, body: { count, lastTimestamp, ...(message !== undefined ? { message } : {}) } },
            setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
          );
        },
      },
    });
    this.batch = kubeConfig.makeApiClient(BatchV1Api);
    this.custom = kubeConfig.makeApiClient(CustomObjectsApi);
  }

  /** Server-side apply: the object as we want it; fields we no longer send are dropped from our ownership. */
  async apply<T extends EventTarget>(obj: T): Promise<T> {
    this.note(`apply:${obj.kind ?? '?'}`);
    try {
      const path = pathOf(obj);
      if (path) return await this.json.send<T>('PATCH', `${path}?fieldManager=${FIELD_MANAGER}&force=true`, obj, CONTENT_TYPES.apply);
      const body = obj as unknown as KubernetesObject;
      return (await this.objects.patch(body, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply)) as unknown as T;
    } catch (err) {
      throw new Error(`apply ${describe(obj)} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  /** Creates obj; answers 'exists' instead of failing when an object of that name is already there. */
  async createIfAbsent(obj: EventTarget): Promise<'created' | 'exists'> {
    this.note('createIfAbsent');
    try {
      const collection = resourcePath(obj.apiVersion, obj.kind, obj.metadata?.namespace);
      if (collection) await this.json.send('POST', `${collection}?fieldManager=${FIELD_MANAGER}`, obj);
      else await this.objects.create(obj as unknown as KubernetesObject, undefined, undefined, FIELD_MANAGER);
      return 'created';
    } catch (err) {
      if (isStatus(err, 409)) return 'exists';
      throw new Error(`create ${describe(obj)} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  async read<T extends KubernetesObject>(apiVersion: string, kind: string, namespace: string, name: string): Promise<T | undefined> {
    this.note(`read:${kind}`);
    try {
      return await this.objects.read<T>({ apiVersion, kind, metadata: { name, namespace } });
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw new Error(`read ${kind} ${namespace}/${name} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  /** Deletes with background propagation; a missing object counts as deleted. */
  async delete(obj: EventTarget): Promise<void> {
    this.note('delete');
    try {
      const path = pathOf(obj);
      if (path) await this.json.send('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' });
      else await this.objects.delete(obj as unknown as KubernetesObject, undefined, undefined, undefined, undefined, 'Background');
    } catch (err) {
      if (isStatus(err, 404)) return;
      throw new Error(`delete ${describe(obj)} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  /** JSON merge patch of an object's main resource (finalizers, annotations); 'missing' when it is gone. */
  async mergePatch(obj: EventTarget, patch: Record<string, unknown>): Promise<'patched' | 'missing'> {
    this.note('mergePatch');
    const extraMeta = (patch.metadata ?? {}) as Record<string, unknown>;
    const target = {
      ...patch,
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: { ...extraMeta, name: obj.metadata?.name, namespace: obj.metadata?.namespace },
    };
    try {
      const path = pathOf(target);
      if (path) await this.json.send('PATCH', `${path}?fieldManager=${FIELD_MANAGER}`, target, CONTENT_TYPES.merge);
      else await this.objects.patch(target, undefined, undefined, FIELD_MANAGER, undefined, PatchStrategy.MergePatch);
      return 'patched';
    } catch (err) {
      if (isStatus(err, 404)) return 'missing';
      throw new Error(`patch ${describe(target)} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  /**
   * Removes annotations of an object only while each still holds the value given (a JSON patch of
   * `test` + `remove` pairs): 'changed' when one was rewritten meanwhile (nothing removed), 'missing' when gone.
   */
  async removeAnnotationsIf(obj: EventTarget, expected: Readonly<Record<string, string>>): Promise<'removed' | 'changed' | 'missing'> {
    this.note('jsonPatch');
    const path = pathOf({ apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata?.name, namespace: obj.metadata?.namespace } });
    if (!path) throw new Error(`no API path for ${describe(obj)}`);
    const pointer = (key: string) => `/metadata/annotations/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
    const ops = Object.entries(expected).flatMap(([key, value]) => [
      { op: 'test', path: pointer(key), value },
      { op: 'remove', path: pointer(key) },
    ]);
    try {
      await this.json.send('PATCH', `${path}?fieldManager=${FIELD_MANAGER}`, ops, CONTENT_TYPES.jsonPatch);
      return 'removed';
    } catch (err) {
      if (isStatus(err, 404)) return 'missing';
      // A failed `test` (or a key already gone) is 422 Unprocessable / 409 Conflict.
      if (isStatus(err, 422) || isStatus(err, 409)) return 'changed';
      throw new Error(`patch ${describe(obj)} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  /** Merge patch of a sless object's status subresource; a vanished object is not an error. */
  async patchStatus(kind: SlessKind, namespace: string, name: string, status: object): Promise<void> {
    this.note(`status:${kind}`);
    try {
      const path = `${resourcePath(`${GROUP}/${VERSION}`, KINDS[kind].kind, namespace, name)!}/status`;
      await this.json.send('PATCH', path, { status }, CONTENT_TYPES.merge);
    } catch (err) {
      if (isStatus(err, 404)) return;
      throw new Error(`patch status of ${kind} ${namespace}/${name} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  /** A Secret's type and data, decoded; undefined when it does not exist. */
  async readSecret(namespace: string, name: string): Promise<{ type: string; data: Record<string, string> } | undefined> {
    this.note('readSecret');
    try {
      const secret = await this.core.readNamespacedSecret({ name, namespace });
      const data: Record<string, string> = {};
      for (const [k, v] of Object.entries(secret.data ?? {})) data[k] = Buffer.from(v, 'base64').toString('utf8');
      for (const [k, v] of Object.entries(secret.stringData ?? {})) data[k] = v;
      return { type: secret.type ?? 'Opaque', data };
    } catch (err) {
      if (isStatus(err, 404)) return undefined;
      throw new Error(`read Secret ${namespace}/${name} failed: ${apiMessage(err)}`, { cause: err });
    }
  }

  async listPods(namespace: string, labelSelector: string): Promise<V1Pod[]> {
    this.note('listPods');
    const list = await this.core.listNamespacedPod({ namespace, labelSelector });
    return list.items;
  }

  /** The last lines of a container's log, at most maxBytes; '' when there is none (pod gone, never started). */
  async podLogTail(namespace: string, pod: string, container: string, maxBytes: number): Promise<string> {
    this.note('podLogTail');
    try {
      return await this.core.readNamespacedPodLog({ name: pod, namespace, container, tailLines: 50, limitBytes: maxBytes });
    } catch {
      return '';
    }
  }

  /**
   * A core/v1 Event on target, aggregated (event-recorder.ts): the first occurrence of an outcome creates
   * it, repeats only count (one series update a minute at most). Failures are swallowed (best effort).
   */
  async event(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    await this.events.record(target, type, reason, message);
  }

  /** A routine outcome of `member`, counted into one Event of its owner per reason (event-recorder.ts). */
  async ownerEvent(owner: EventTarget, reason: string, member: string, message: string): Promise<void> {
    await this.events.aggregate(owner, reason, member, message);
  }
}
