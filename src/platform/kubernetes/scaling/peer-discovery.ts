// Where the leader finds the other controller replicas' counts (issue 29): the EndpointSlices of the
// metrics Service (deploy/base/metrics-service.yaml, `sless-controller-metrics` in the controller's
// namespace) list every controller pod that serves, with its address and metrics port. Read at most
// once per REFRESH_MS (the leader gathers every 2 s; pods come and go far less often). A replica that
// leaves the list is still asked until it stops answering (counts-gatherer.ts grace), so a terminating
// replica draining its calls keeps counting.
import type { JsonApi } from '../api-client/json-api.ts';
import { COUNTS_PATH } from './counts-endpoint.ts';

export const METRICS_SERVICE = 'sless-controller-metrics';
const REFRESH_MS = 10_000;

interface EndpointSliceList {
  items?: Array<{
    addressType?: string;
    ports?: Array<{ name?: string; port?: number }>;
    endpoints?: Array<{ addresses?: string[]; conditions?: { ready?: boolean; serving?: boolean }; targetRef?: { name?: string } }>;
  }>;
}

/** The counts URLs of the pods in `list` other than `selfPod` (pure). */
export function peerUrls(list: EndpointSliceList, selfPod: string | undefined): string[] {
  const urls: string[] = [];
  for (const slice of list.items ?? []) {
    const port = slice.ports?.find((p) => p.name === 'metrics')?.port ?? slice.ports?.[0]?.port;
    if (!port) continue;
    for (const ep of slice.endpoints ?? []) {
      if (selfPod && ep.targetRef?.name === selfPod) continue;
      if (ep.conditions?.serving === false || (ep.conditions?.serving === undefined && ep.conditions?.ready === false)) continue;
      const address = ep.addresses?.[0];
      if (!address) continue;
      const host = slice.addressType === 'IPv6' ? `[${address}]` : address;
      urls.push(`http://${host}:${port}${COUNTS_PATH}`);
    }
  }
  return urls.sort();
}

export class PeerDiscovery {
  #cached: { urls: string[]; atMs: number } | undefined;

  constructor(
    private readonly json: JsonApi,
    private readonly namespace: string,
    private readonly selfPod: string | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  async urls(): Promise<string[]> {
    const now = this.now();
    if (this.#cached && now - this.#cached.atMs < REFRESH_MS) return this.#cached.urls;
    const selector = encodeURIComponent(`kubernetes.io/service-name=${METRICS_SERVICE}`);
    const list = await this.json.send<EndpointSliceList>('GET', `/apis/discovery.k8s.io/v1/namespaces/${this.namespace}/endpointslices?labelSelector=${selector}`);
    this.#cached = { urls: peerUrls(list, this.selfPod), atMs: now };
    return this.#cached.urls;
  }
}
