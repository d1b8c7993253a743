// One watch of the EndpointSlices of sless's function Services, cluster-wide (the EndpointSlice
// controller copies the Service's labels, managed-by=sless among them, onto its slices), trimmed to
// addresses, conditions and the `http` port: /fn's pod routing costs no API request per call.
import { DiscoveryV1Api, type KubeConfig, type V1EndpointSlice } from '@kubernetes/client-node';
import { LABELS } from '../objects/meta.ts';
import { ResilientInformer, type InformerEvent } from '../api-client/resilient-informer.ts';
import { listAllPages } from '../api-client/slim.ts';
import type { Timers } from '../api-client/timers.ts';
import { trimEndpointSlice } from './slice-addresses.ts';

export const FUNCTION_SLICE_SELECTOR = `${LABELS.managedBy}=sless`;

export interface EndpointSliceInformerOptions {
  readonly kubeConfig: KubeConfig;
  readonly onEvent: (event: InformerEvent, slice: V1EndpointSlice) => void;
  readonly onError?: (name: string, err: unknown, restartInMs: number) => void;
  readonly timers?: Timers;
}

export function endpointSliceInformer(opts: EndpointSliceInformerOptions): ResilientInformer<V1EndpointSlice> {
  const discovery = opts.kubeConfig.makeApiClient(DiscoveryV1Api);
  return new ResilientInformer<V1EndpointSlice>({
    kubeConfig: opts.kubeConfig,
    name: 'endpointslices (serving)',
    path: '/apis/discovery.k8s.io/v1/endpointslices',
    labelSelector: FUNCTION_SLICE_SELECTOR,
    list: () => listAllPages((page) => discovery.listEndpointSliceForAllNamespaces({ labelSelector: FUNCTION_SLICE_SELECTOR, ...page })),
    trim: trimEndpointSlice,
    onEvent: opts.onEvent,
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.timers ? { timers: opts.timers } : {}),
  });
}
