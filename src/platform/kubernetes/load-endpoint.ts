// Where /fn sends a call on Kubernetes, decided from the Function and its Deployment: as the watches of
// serving-cache.ts hold them, or read with two GETs before those have listed.
import type { AppsV1Api, V1Deployment } from '@kubernetes/client-node';
import type { Endpoint, ReplicaPicker } from '../types.ts';
import { apiStatusCode, toPlatformError } from './api-errors.ts';
import { serviceBaseUrl } from './objects/function-workload.ts';
import type { FunctionResource } from './objects/resources.ts';
import { functionSpecDefaults } from './objects/crd-defaults.ts';
import type { SlessObjects } from './sless-objects.ts';
import { liveWorkloadOf } from './scaling/workload-replicas.ts';

export interface LoadEndpointDeps {
  readonly objects: SlessObjects;
  readonly apps: AppsV1Api;
  readonly clusterDomain: string;
}

/**
 * A function answers when its Deployment has an available replica, whatever its phase: during a
 * rebuild, or after a failed one, the previous image keeps serving. The Function reconciler scales the
 * Deployment to 0 and marks it http-disabled when every http Trigger is disabled (a function with queue
 * Triggers keeps running, marked the same: /fn answers 503, deliveries go where it runs); unmarked, 0
 * replicas is a function scaled to zero ("idle": /fn holds the call and wakes it). Pure: the
 * watches (serving-cache.ts) and the GET fallback below both decide with it.
 *
 * `pods` (pod-routing/, when /fn reaches pods directly): the function's pods as the EndpointSlice watch
 * and /fn's own probes see them. Given, calls go to a pod picked per call; and a function whose
 * Deployment counts no available replica yet is ready as soon as one of its pods answers /fn's probe
 * (a first start, a wake from zero), before the kubelet's next probe and the Deployment status say so.
 */
export function endpointOf(
  fn: FunctionResource | undefined,
  deployment: V1Deployment | undefined,
  namespace: string,
  name: string,
  clusterDomain: string,
  pods?: ReplicaPicker & { readonly serving: boolean },
): Endpoint {
  if (!fn || fn.metadata?.deletionTimestamp) return { kind: 'not-found' };
  const { timeoutSec } = functionSpecDefaults(fn.spec);
  const phase = fn.status?.phase ?? 'Pending';
  const state = `${phase}${fn.status?.message ? `: ${fn.status.message}` : ''}`;
  if (!deployment) return { kind: 'not-ready', reason: phase === 'Ready' ? 'its Deployment is not there yet' : state };
  const replicas = pods ? { replicas: pods } : {};
  const ready: Endpoint = { kind: 'ready', baseUrl: serviceBaseUrl(namespace, name, clusterDomain), timeoutSec, ...replicas };
  const available = (deployment.status?.availableReplicas ?? 0) >= 1 || pods?.serving === true;
  // Disabled is not idle: a Deployment the reconciler switched off is never woken (scaling/workload-replicas.ts);
  // one that runs for its queue Triggers only still tells deliveries where it runs.
  if (liveWorkloadOf(deployment)?.disabled) {
    if (!deployment.spec?.replicas) return { kind: 'disabled' };
    return { kind: 'disabled', forQueues: available ? ready : { kind: 'not-ready', reason: `0 of ${deployment.spec.replicas} replicas available yet` } };
  }
  // At zero: /fn holds the call (activator).
  if (deployment.spec?.replicas === 0) return { kind: 'idle', timeoutSec };
  if (!available) {
    // Waking from zero (a replica asked for, none answering yet): /fn keeps holding the call.
    if (phase === 'Ready' && fn.spec?.scale?.min === 0) return { kind: 'idle', timeoutSec };
    return { kind: 'not-ready', reason: phase === 'Ready' ? `0 of ${deployment.spec?.replicas ?? 1} replicas available yet` : state };
  }
  return ready;
}

/** The same from two GETs: until the watches have listed (the EndpointCache in front of it keeps them rare). */
export async function loadEndpoint(deps: LoadEndpointDeps, namespace: string, name: string): Promise<Endpoint> {
  const fn = await deps.objects.find<FunctionResource>('Function', namespace, name);
  if (!fn || fn.metadata?.deletionTimestamp) return { kind: 'not-found' };
  let deployment: V1Deployment | undefined;
  try {
    deployment = await deps.apps.readNamespacedDeployment({ name, namespace });
  } catch (err) {
    if (apiStatusCode(err) !== 404) throw toPlatformError(err, `Deployment ${namespace}/${name}`);
  }
  return endpointOf(fn, deployment, namespace, name, deps.clusterDomain);
}
