// What /fn and /hooks read on every replica, from watches instead of a GET per request (issue 11 item 6):
// Functions, the Deployments labelled managed-by=sless and FunctionRepositories (with their open previews), cluster-wide, each cut
// down to the few fields the lookups read (a hot function, an unknown name and a forged webhook then cost
// the API server nothing). A Deployment scaled to 0 is seen as soon as the watch delivers it, so a
// Function switched off answers 503 at once, never a stale "ready" that sends traffic to pods going away.
// Until every watch has listed (`synced`), callers fall back to reading (kubernetes-platform.ts); after
// that, an API server outage leaves the last state serving (the informers relist when it is back).
import { AppsV1Api, CustomObjectsApi, type KubeConfig, type KubernetesListObject, type KubernetesObject, type V1Deployment } from '@kubernetes/client-node';
import { VERSION } from './crd-types.ts';
import { GROUP, LABELS } from './objects/meta.ts';
import { KINDS, type FunctionResource, type RepositoryResource } from './objects/resources.ts';
import { ResilientInformer } from './api-client/resilient-informer.ts';
import { listAllPages } from './api-client/slim.ts';
import type { Timers } from './api-client/timers.ts';
import { DISABLED_ANNOTATION } from './scaling/workload-replicas.ts';
import { trimPreviewStatus } from './preview-status.ts';
import { PREVIEW_LABELS } from './previews/preview-objects.ts';

export interface ServingCacheOptions {
  readonly kubeConfig: KubeConfig;
  readonly onError?: (name: string, err: unknown, restartInMs: number) => void;
  readonly timers?: Timers;
}

/** Keeps what a watch needs (name, namespace, resourceVersion) and what a lookup reads (deletionTimestamp). */
const KEPT_META = new Set(['name', 'namespace', 'resourceVersion', 'uid', 'deletionTimestamp']);

function trimMeta(meta: object | undefined): void {
  if (!meta) return;
  const m = meta as Record<string, unknown>;
  for (const k of Object.keys(m)) if (!KEPT_META.has(k)) delete m[k];
}

/** A Function as /fn reads it: timeoutSec, scale.min (whether it may be at zero), phase and message, the preview it belongs to. */
export function trimFunction(fn: FunctionResource): void {
  // A preview's Function says so (kube-preview-serving.ts: once its preview is closed, it answers 404).
  const previewOf = fn.metadata?.labels?.[PREVIEW_LABELS.of];
  trimMeta(fn.metadata);
  if (fn.metadata && previewOf !== undefined) fn.metadata.labels = { [PREVIEW_LABELS.of]: previewOf };
  const timeoutSec = fn.spec?.timeoutSec;
  const min = fn.spec?.scale?.min;
  (fn as { spec?: unknown }).spec = { ...(timeoutSec !== undefined ? { timeoutSec } : {}), ...(min !== undefined ? { scale: { min } } : {}) };
  const phase = fn.status?.phase;
  const message = fn.status?.message;
  (fn as { status?: unknown }).status = { ...(phase ? { phase } : {}), ...(message ? { message } : {}) };
}

/** A Deployment as /fn reads it: desired and available replicas, and whether http is disabled. */
export function trimDeployment(d: V1Deployment): void {
  const disabled = d.metadata?.annotations?.[DISABLED_ANNOTATION];
  trimMeta(d.metadata);
  if (d.metadata && disabled !== undefined) d.metadata.annotations = { [DISABLED_ANNOTATION]: disabled };
  const replicas = d.spec?.replicas;
  (d as { spec?: unknown }).spec = replicas !== undefined ? { replicas } : {};
  const available = d.status?.availableReplicas;
  (d as { status?: unknown }).status = available !== undefined ? { availableReplicas: available } : {};
}

/**
 * A FunctionRepository as /hooks reads it (its branch and Secret), and as /fn and /v1 read its open
 * pull-request previews (spec.previews.ttl, status.previews: preview-status.ts).
 */
export function trimRepository(r: RepositoryResource): void {
  trimMeta(r.metadata);
  const branch = r.spec?.branch;
  const secretRef = r.spec?.secretRef?.name;
  const ttl = (r.spec as { previews?: { ttl?: unknown } } | undefined)?.previews?.ttl;
  (r as { spec?: unknown }).spec = {
    ...(branch ? { branch } : {}),
    ...(secretRef ? { secretRef: { name: secretRef } } : {}),
    ...(typeof ttl === 'string' ? { previews: { ttl } } : {}),
  };
  const previews = trimPreviewStatus(r.status);
  if (previews) (r as { status?: unknown }).status = previews;
  else delete (r as { status?: unknown }).status;
}

export class ServingCache {
  readonly functions: ResilientInformer<FunctionResource & KubernetesObject>;
  readonly deployments: ResilientInformer<V1Deployment>;
  readonly repositories: ResilientInformer<RepositoryResource & KubernetesObject>;
  private listed = false;

  constructor(opts: ServingCacheOptions) {
    const { kubeConfig } = opts;
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    const apps = kubeConfig.makeApiClient(AppsV1Api);
    const common = { kubeConfig, onEvent: () => undefined, ...(opts.onError ? { onError: opts.onError } : {}), ...(opts.timers ? { timers: opts.timers } : {}) };
    const crd = <T extends KubernetesObject>(plural: string, trim: (o: T) => void) =>
      new ResilientInformer<T>({
        ...common,
        name: `${plural} (serving)`,
        path: `/apis/${GROUP}/${VERSION}/${plural}`,
        list: () => listAllPages((page) => custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural, ...page }) as Promise<KubernetesListObject<T>>),
        trim,
      });
    this.functions = crd<FunctionResource & KubernetesObject>(KINDS.Function.plural, trimFunction);
    this.repositories = crd<RepositoryResource & KubernetesObject>(KINDS.FunctionRepository.plural, trimRepository);
    const selector = `${LABELS.managedBy}=sless`;
    this.deployments = new ResilientInformer<V1Deployment>({
      ...common,
      name: 'deployments (serving)',
      path: '/apis/apps/v1/deployments',
      labelSelector: selector,
      list: () => listAllPages((page) => apps.listDeploymentForAllNamespaces({ labelSelector: selector, ...page })),
      trim: trimDeployment,
    });
  }

  /** True once every watch has listed: from then on lookups are answered from here. */
  get synced(): boolean {
    return this.listed;
  }

  /** Starts the watches; resolves once all of them have listed (each retries with backoff until it has). */
  async start(): Promise<void> {
    await Promise.all([this.functions.start(), this.deployments.start(), this.repositories.start()]);
    this.listed = true;
  }

  async stop(): Promise<void> {
    await Promise.all([this.functions.stop(), this.deployments.stop(), this.repositories.stop()]);
  }
}
