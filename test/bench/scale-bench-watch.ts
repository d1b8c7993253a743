// The scale benchmarks' view of the Functions and FunctionRepositories of their namespace: from one watch
// each, not a LIST of every Function twice a second (at 1,000 Functions those LISTs, MBs each, took the
// API server's CPU from the controller being measured; 100 repositories were 200 GETs a second). Also
// when each phase of a steady state happened: the n-th Function created, the n-th Ready. Triggers too: a
// function whose schedule has no CronJob yet is not running as its function.yaml says (the first runs
// called steady state while a third of the CronJobs and Trigger statuses were still to be written).
import { CustomObjectsApi, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { makeJsonInformer } from '../../src/platform/kubernetes/api-client/json-watch.ts';
import type { FunctionResource, RepositoryResource, TriggerResource } from '../../src/platform/kubernetes/objects/resources.ts';

const GROUP = 'sless.kube5s.ru';
const VERSION = 'v1alpha1';

export const isReady = (f: FunctionResource): boolean => f.status?.phase === 'Ready' && f.status.observedGeneration === f.metadata?.generation;
/** Reconciled at its generation: its CronJob applied (cron) or its URL reported (http). */
const triggerReady = (t: TriggerResource): boolean =>
  t.status?.observedGeneration === t.metadata?.generation && t.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
const repoReady = (r: RepositoryResource): boolean => r.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

export interface SlessWatch {
  /** The Functions as the watch shows them now, by name. */
  readonly functions: ReadonlyMap<string, FunctionResource>;
  readonly repositories: ReadonlyMap<string, RepositoryResource>;
  /** Ready at their generation. */
  readyCount(): number;
  reposReady(): number;
  /** Triggers Ready at their generation. */
  triggersReady(): number;
  /** ms (Date.now()) at which the watch first saw the n-th Function, the n-th Ready one, the n-th Ready Trigger (n from 1). */
  readonly createdAt: number[];
  readonly readyAt: number[];
  readonly triggerReadyAt: number[];
  stop(): Promise<void>;
}

/** Watches the Functions and FunctionRepositories of `namespace`; resolves once both have listed. */
export async function watchSlessObjects(kc: KubeConfig, namespace: string): Promise<SlessWatch> {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const functions = new Map<string, FunctionResource>();
  const repositories = new Map<string, RepositoryResource>();
  const everReady = new Set<string>();
  const createdAt: number[] = [];
  const readyAt: number[] = [];
  let ready = 0;
  const onFunction = (f: FunctionResource) => {
    const name = f.metadata?.name ?? '';
    const before = functions.get(name);
    if (!before) createdAt.push(Date.now());
    if (before && isReady(before)) ready--;
    functions.set(name, f);
    if (isReady(f)) {
      ready++;
      if (!everReady.has(name)) {
        everReady.add(name);
        readyAt.push(Date.now());
      }
    }
  };
  const onFunctionGone = (f: FunctionResource) => {
    const name = f.metadata?.name ?? '';
    const before = functions.get(name);
    if (before && isReady(before)) ready--;
    functions.delete(name);
  };
  const list = (plural: string) => () =>
    custom.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace, plural }) as Promise<KubernetesListObject<KubernetesObject>>;
  const path = (plural: string) => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/${plural}`;
  // The sless types carry their timestamps as the JSON strings they are; client-node's as Dates.
  const fnInformer = makeJsonInformer<KubernetesObject>(kc, path('functions'), list('functions'));
  fnInformer.on('add', (o) => onFunction(o as FunctionResource));
  fnInformer.on('update', (o) => onFunction(o as FunctionResource));
  fnInformer.on('delete', (o) => onFunctionGone(o as FunctionResource));
  const triggers = new Map<string, boolean>();
  const triggerReadyAt: number[] = [];
  const everTriggerReady = new Set<string>();
  const onTrigger = (o: KubernetesObject) => {
    const name = o.metadata?.name ?? '';
    const ok = triggerReady(o as TriggerResource);
    triggers.set(name, ok);
    if (ok && !everTriggerReady.has(name)) {
      everTriggerReady.add(name);
      triggerReadyAt.push(Date.now());
    }
  };
  const triggerInformer = makeJsonInformer<KubernetesObject>(kc, path('triggers'), list('triggers'));
  triggerInformer.on('add', onTrigger);
  triggerInformer.on('update', onTrigger);
  triggerInformer.on('delete', (o) => void triggers.delete(o.metadata?.name ?? ''));
  const repoInformer = makeJsonInformer<KubernetesObject>(kc, path('functionrepositories'), list('functionrepositories'));
  const onRepo = (o: KubernetesObject) => void repositories.set(o.metadata?.name ?? '', o as RepositoryResource);
  repoInformer.on('add', onRepo);
  repoInformer.on('update', onRepo);
  repoInformer.on('delete', (o) => void repositories.delete(o.metadata?.name ?? ''));
  const informers: Array<Informer<KubernetesObject>> = [fnInformer, triggerInformer, repoInformer];
  let running = true;
  for (const i of informers) {
    // client-node relists after 410 Gone only: restart on anything else, as the controller does.
    i.on('error', () => {
      if (running) setTimeout(() => void i.start().catch(() => undefined), 1_000);
    });
  }
  await Promise.all(informers.map((i) => i.start()));
  return {
    functions,
    repositories,
    readyCount: () => ready,
    reposReady: () => [...repositories.values()].filter(repoReady).length,
    triggersReady: () => [...triggers.values()].filter(Boolean).length,
    createdAt,
    readyAt,
    triggerReadyAt,
    async stop() {
      running = false;
      await Promise.all(informers.map((i) => i.stop().catch(() => undefined)));
    },
  };
}

/** `created 1st 2.1 s, 500th 40.2 s, 1000th 80.3 s` (seconds since `since`; `marks` as fractions of `total`). */
export function milestones(label: string, at: readonly number[], since: number, total: number, marks = [0, 0.25, 0.5, 0.75, 1]): string {
  const parts = marks.map((m) => Math.max(1, Math.round(m * total))).map((n) => (at[n - 1] === undefined ? `#${n} -` : `#${n} ${((at[n - 1]! - since) / 1000).toFixed(1)} s`));
  return `${label} ${parts.join(', ')}`;
}
