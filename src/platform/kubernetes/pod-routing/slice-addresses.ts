// What /fn reads of a function's EndpointSlices: every pod address (IP and the Service's `http` port)
// with the conditions the EndpointSlice controller copies from the pod (ready, serving, terminating).
// Pure: the informer (endpoint-slice-informer.ts) trims slices with trimEndpointSlice, the table
// (pod-table.ts) merges them with addressesOfSlices.
import type { V1EndpointSlice } from '@kubernetes/client-node';

/** The label the EndpointSlice controller puts on every slice of a Service (its name). */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
/** The Service port function pods serve on (objects/function-workload.ts names it so). */
export const SERVED_PORT_NAME = 'http';

export interface PodAddress {
  /** `ip:port` (IPv6 in brackets): the key of the address and the host part of its URL. */
  readonly hostPort: string;
  /** Kubelet's readiness (conditions.ready; unset means ready, as kube-proxy reads it). */
  readonly ready: boolean;
  /** The pod is being deleted: it leaves /fn's rotation at once, whatever else it says. */
  readonly terminating: boolean;
  /** The pod's name (targetRef), for logs. */
  readonly pod?: string;
}

/** A slice cut down to what addressesOfSlices reads, in place (the informer keeps thousands of them). */
export function trimEndpointSlice(slice: V1EndpointSlice): void {
  const meta = slice.metadata;
  if (meta) {
    const service = meta.labels?.[SERVICE_NAME_LABEL];
    slice.metadata = {
      ...(meta.name ? { name: meta.name } : {}),
      ...(meta.namespace ? { namespace: meta.namespace } : {}),
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
      ...(service ? { labels: { [SERVICE_NAME_LABEL]: service } } : {}),
    };
  }
  slice.ports = (slice.ports ?? []).filter((p) => p.name === SERVED_PORT_NAME || (slice.ports?.length ?? 0) === 1).map((p) => ({ name: p.name ?? '', port: p.port ?? 0 }));
  slice.endpoints = (slice.endpoints ?? []).map((e) => ({
    addresses: e.addresses,
    ...(e.conditions ? { conditions: { ready: e.conditions.ready, terminating: e.conditions.terminating } } : {}),
    ...(e.targetRef?.name ? { targetRef: { name: e.targetRef.name } } : {}),
  }));
}

/** The Service a slice belongs to (`namespace/name`), or undefined for a slice without the label. */
export function serviceOfSlice(slice: V1EndpointSlice): string | undefined {
  const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  const namespace = slice.metadata?.namespace;
  return service && namespace ? `${namespace}/${service}` : undefined;
}

/**
 * Every address of a Service's slices. One address may sit in two slices for a moment while the
 * EndpointSlice controller moves it: it is kept once, ready if either says so and terminating if
 * either says so (terminating wins: a pod going away never comes back). Slices of another address
 * type than IPv4/IPv6, or without the `http` port, carry nothing /fn can reach.
 */
export function addressesOfSlices(slices: Iterable<V1EndpointSlice>): PodAddress[] {
  const byKey = new Map<string, PodAddress>();
  for (const slice of slices) {
    if (slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
    const port = servedPort(slice);
    if (port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      // Every address of one endpoint is the same pod; the first is the one kube-proxy uses.
      const ip = endpoint.addresses[0];
      if (!ip) continue;
      const hostPort = slice.addressType === 'IPv6' ? `[${ip}]:${port}` : `${ip}:${port}`;
      const address: PodAddress = {
        hostPort,
        ready: endpoint.conditions?.ready ?? true,
        terminating: endpoint.conditions?.terminating ?? false,
        ...(endpoint.targetRef?.name ? { pod: endpoint.targetRef.name } : {}),
      };
      const seen = byKey.get(hostPort);
      byKey.set(
        hostPort,
        seen ? { ...address, ready: seen.ready || address.ready, terminating: seen.terminating || address.terminating } : address,
      );
    }
  }
  return [...byKey.values()].sort((a, b) => a.hostPort.localeCompare(b.hostPort));
}

function servedPort(slice: V1EndpointSlice): number | undefined {
  const ports = slice.ports ?? [];
  const named = ports.find((p) => p.name === SERVED_PORT_NAME) ?? (ports.length === 1 ? ports[0] : undefined);
  const port = named?.port;
  return port !== undefined && Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}
