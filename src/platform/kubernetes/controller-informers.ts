// The controller's informers: the four sless kinds, and what the controller owns (Jobs, Deployments,
// Services, CronJobs labelled managed-by=sless; the build pods in the build namespace), each one per watched namespace or one cluster-wide,
// listed page by page and restarted with backoff on any error (api-client/resilient-informer.ts). What an
// event means (which keys it enqueues) is the controller's: it passes one handler per kind.
import type { IndexName } from './api-client/cache-index.ts';
import {
  AppsV1Api,
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesListObject,
  type KubernetesObject,
  type V1CronJob,
  type V1Deployment,
  type V1Job,
  type V1Pod,
  type V1Service,
} from '@kubernetes/client-node';
import { GROUP, LABELS } from './objects/meta.ts';
import {
  KINDS,
  type FunctionJobResource,
  type FunctionResource,
  type RepositoryResource,
  type SlessKind,
  type TriggerResource,
} from './objects/resources.ts';
import type { ControllerLogger } from './reconcilers/reconcile-context.ts';
import { apiMessage, VERSION } from './api-client/kube-client.ts';
import { InformerGroup } from './api-client/informer-group.ts';
import { ResilientInformer, type InformerEvent } from './api-client/resilient-informer.ts';
import { jobForCache, listAllPages, podForCache } from './api-client/slim.ts';
import type { Timers } from './api-client/timers.ts';

type AnyResource = KubernetesObject & { spec?: unknown; status?: unknown };

export interface ControllerInformers {
  repositories: InformerGroup<RepositoryResource & KubernetesObject>;
  functions: InformerGroup<FunctionResource & KubernetesObject>;
  triggers: InformerGroup<TriggerResource & KubernetesObject>;
  functionJobs: InformerGroup<FunctionJobResource & KubernetesObject>;
  jobs: InformerGroup<V1Job>;
  deployments: InformerGroup<V1Deployment>;
  services: InformerGroup<V1Service>;
  cronJobs: InformerGroup<V1CronJob>;
  /** Build pods in the build namespace, trimmed to their outcome (podForCache): no LIST per finished build. */
  buildPods: InformerGroup<V1Pod>;
}

export interface InformerSetup {
  readonly kubeConfig: KubeConfig;
  readonly logger: ControllerLogger;
  readonly resyncMs: number;
  /** Watch only these namespaces; empty: cluster-wide. */
  readonly watched: readonly string[];
  /** Where build Jobs run: their informer watches it beside the watched namespaces. */
  readonly buildNamespace: string;
  readonly timers?: Timers;
}

/** What each informer's events go to. */
export interface InformerHandlers {
  readonly repository: (e: InformerEvent, o: RepositoryResource & KubernetesObject) => void;
  readonly function: (e: InformerEvent, o: FunctionResource & KubernetesObject) => void;
  readonly trigger: (e: InformerEvent, o: TriggerResource & KubernetesObject) => void;
  readonly functionJob: (e: InformerEvent, o: FunctionJobResource & KubernetesObject) => void;
  readonly job: (o: V1Job, e: InformerEvent) => void;
  /** A build pod changed: its Function looks whether it succeeded before its Job says so. */
  readonly buildPod?: (o: V1Pod, e: InformerEvent) => void;
  /** A Deployment, Service or CronJob. */
  readonly owned: (o: KubernetesObject, e: InformerEvent) => void;
}

/** The handlers, given only objects whose namespace `scope` accepts (all of them without a scope). */
export function scopedHandlers(scope: ((namespace: string) => boolean) | undefined, on: InformerHandlers): InformerHandlers {
  if (!scope) return on;
  const inScope = (o: KubernetesObject): boolean => scope(o.metadata?.namespace ?? '');
  return {
    repository: (e, o) => void (inScope(o) && on.repository(e, o)),
    function: (e, o) => void (inScope(o) && on.function(e, o)),
    trigger: (e, o) => void (inScope(o) && on.trigger(e, o)),
    functionJob: (e, o) => void (inScope(o) && on.functionJob(e, o)),
    job: (o, e) => void (inScope(o) && on.job(o, e)),
    ...(on.buildPod ? { buildPod: (o: V1Pod, e: InformerEvent) => void (inScope(o) && on.buildPod?.(o, e)) } : {}),
    owned: (o, e) => void (inScope(o) && on.owned(o, e)),
  };
}

export function createInformers(setup: InformerSetup, on: InformerHandlers): ControllerInformers {
  const { kubeConfig, logger, resyncMs, watched } = setup;
  const custom = kubeConfig.makeApiClient(CustomObjectsApi);
  const batch = kubeConfig.makeApiClient(BatchV1Api);
  const onError = (name: string, err: unknown, delay: number) =>
    logger.warn(
      `InformerRestart: ${name} list/watch failed (${apiMessage(err)}); restarting in ${delay} ms`,
      { reason: 'InformerRestart' },
    );
  /** One informer per watched namespace, or one cluster-wide. */
  const scopes: ReadonlyArray<string | undefined> = watched.length > 0 ? watched : [undefined];
  const crdInformer = <T extends AnyResource>(kind: SlessKind, onEvent: (e: InformerEvent, o: T) => void, indexes: readonly IndexName[] = []) =>
    new InformerGroup<T>(
      scopes.map(
        (ns) =>
          new ResilientInformer<T>({
            kubeConfig,
            name: ns && watched.length > 1 ? `${KINDS[kind].plural} in ${ns}` : KINDS[kind].plural,
            path: `/apis/${GROUP}/${VERSION}/${ns ? `namespaces/${ns}/` : ''}${KINDS[kind].plural}`,
            list: () =>
              listAllPages(
                (page) =>
                  (ns
                    ? custom.listNamespacedCustomObject({
                        group: GROUP,
                        version: VERSION,
                        namespace: ns,
                        plural: KINDS[kind].plural,
                        ...page,
                      })
                    : custom.listClusterCustomObject({
                        group: GROUP,
                        version: VERSION,
                        plural: KINDS[kind].plural,
                        ...page,
                      })) as Promise<KubernetesListObject<T>>,
              ),
            resyncMs,
            onEvent,
            onError,
            indexes,
            ...(setup.timers ? { timers: setup.timers } : {}),
          }),
      ),
    );
  const selector = `${LABELS.managedBy}=sless`;
  const apps = kubeConfig.makeApiClient(AppsV1Api);
  const core = kubeConfig.makeApiClient(CoreV1Api);
  /** Informers over objects labelled managed-by=sless: in the watched namespace (plus `extraNamespaces`), or cluster-wide. */
  const owned = <T extends KubernetesObject>(
    plural: string,
    apiVersion: string,
    page: (
      ns: string | undefined,
      page: { limit: number; _continue?: string },
    ) => Promise<KubernetesListObject<T>>,
    onEvent: (o: T, e: InformerEvent) => void,
    extraNamespaces: readonly string[] = [],
    trim?: (o: T) => void,
    indexes: readonly IndexName[] = [],
  ) =>
    new InformerGroup<T>(
      (watched.length > 0 ? [...new Set([...watched, ...extraNamespaces])] : [undefined]).map((ns) => {
        const base = apiVersion === 'v1' ? '/api/v1' : `/apis/${apiVersion}`;
        return new ResilientInformer<T>({
          kubeConfig,
          name: ns ? `${plural} in ${ns}` : plural,
          path: ns ? `${base}/namespaces/${ns}/${plural}` : `${base}/${plural}`,
          list: () => listAllPages((p) => page(ns, p)),
          labelSelector: selector,
          onEvent: (e, o) => onEvent(o, e),
          onError,
          indexes,
          ...(trim ? { trim } : {}),
          ...(setup.timers ? { timers: setup.timers } : {}),
        });
      }),
    );
  return {
    repositories: crdInformer('FunctionRepository', on.repository),
    functions: crdInformer('Function', on.function),
    triggers: crdInformer('Trigger', on.trigger, ['functionRef']),
    functionJobs: crdInformer('FunctionJob', on.functionJob, ['functionRef']),
    jobs: owned<V1Job>(
      'jobs',
      'batch/v1',
      (ns, page) =>
        ns
          ? batch.listNamespacedJob({ namespace: ns, labelSelector: selector, ...page })
          : batch.listJobForAllNamespaces({ labelSelector: selector, ...page }),
      on.job,
      [setup.buildNamespace],
      jobForCache,
      ['runningBuildsOf'],
    ),
    deployments: owned<V1Deployment>(
      'deployments',
      'apps/v1',
      (ns, page) =>
        ns
          ? apps.listNamespacedDeployment({ namespace: ns, labelSelector: selector, ...page })
          : apps.listDeploymentForAllNamespaces({ labelSelector: selector, ...page }),
      on.owned,
    ),
    services: owned<V1Service>(
      'services',
      'v1',
      (ns, page) =>
        ns
          ? core.listNamespacedService({ namespace: ns, labelSelector: selector, ...page })
          : core.listServiceForAllNamespaces({ labelSelector: selector, ...page }),
      on.owned,
    ),
    cronJobs: owned<V1CronJob>(
      'cronjobs',
      'batch/v1',
      (ns, page) =>
        ns
          ? batch.listNamespacedCronJob({ namespace: ns, labelSelector: selector, ...page })
          : batch.listCronJobForAllNamespaces({ labelSelector: selector, ...page }),
      on.owned,
    ),
    // A build's Job events drive its Function; a pod's only when it succeeded (on.buildPod).
    buildPods: new InformerGroup<V1Pod>([
      new ResilientInformer<V1Pod>({
        kubeConfig,
        name: `pods in ${setup.buildNamespace}`,
        path: `/api/v1/namespaces/${setup.buildNamespace}/pods`,
        list: () => listAllPages((p) => core.listNamespacedPod({ namespace: setup.buildNamespace, labelSelector: BUILD_POD_SELECTOR, ...p })),
        labelSelector: BUILD_POD_SELECTOR,
        onEvent: (e, o) => on.buildPod?.(o, e),
        onError,
        trim: podForCache,
        indexes: ['job'],
        ...(setup.timers ? { timers: setup.timers } : {}),
      }),
    ]),
  };
}

/** The pods of build Jobs (objects/build-job.ts labels their template so). */
const BUILD_POD_SELECTOR = `${LABELS.managedBy}=sless,${LABELS.component}=build`;
