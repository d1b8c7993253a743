// Where /fn sends a call on Kubernetes, decided from the Function and its Deployment: as the watches of
// serving-cache.ts hold them, or read with two GETs before those have listed.
import type { AppsV1Api, V1Deployment } from '@kubernetes/client-node';
import type { Endpoint } from '../types.ts';
import { apiStatusCode, toPlatformError } from './api-errors.ts';
import { serviceBaseUrl } from './objects/function-workload.ts';
import { ANNOTATIONS } from './objects/meta.ts';
import type { FunctionResource } from './objects/resources.ts';
import { CRD_DEFAULTS } from './objects/crd-defaults.ts';
import type { SlessObjects } from './sless-objects.ts';

export interface LoadEndpointDeps {
  readonly objects: SlessObjects;
  readonly apps: AppsV1Api;
  readonly clusterDomain: string;
}

/**
 * A function answers when its Deployment has an available replica, whatever its phase: during a
 * rebuild, or after a failed one, the previous image keeps serving. The Function reconciler scales the
 * Deployment to 0 when every http Trigger is disabled, so 0 desired replicas means "disabled" (and a
 * Deployment running only for queue Triggers carries ANNOTATIONS.httpDisabled). Pure: the
 * watches (serving-cache.ts) and the GET fallback below both decide with it.
 */
export function endpointOf(
  fn: FunctionResource | undefined,
  deployment: V1Deployment | undefined,
  namespace: string,
  name: string,
  clusterDomain: string,
): Endpoint {
  if (!fn || fn.metadata?.deletionTimestamp) return { kind: 'not-found' };
  const timeoutSec = fn.spec?.timeoutSec ?? CRD_DEFAULTS.timeoutSec;
  const phase = fn.status?.phase ?? 'Pending';
  const state = `${phase}${fn.status?.message ? `: ${fn.status.message}` : ''}`;
  if (!deployment) return { kind: 'not-ready', reason: phase === 'Ready' ? 'its Deployment is not there yet' : state };
  if (deployment.spec?.replicas === 0) return { kind: 'disabled' };
  const running: Endpoint =
    (deployment.status?.availableReplicas ?? 0) < 1
      ? { kind: 'not-ready', reason: phase === 'Ready' ? `0 of ${deployment.spec?.replicas ?? 1} replicas available yet` : state }
      : { kind: 'ready', baseUrl: serviceBaseUrl(namespace, name, clusterDomain), timeoutSec };
  // Running for its queue Triggers only: /fn answers 503, deliveries go where it runs.
  if (deployment.metadata?.annotations?.[ANNOTATIONS.httpDisabled] === 'true') return { kind: 'disabled', forQueues: running };
  return running;
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
