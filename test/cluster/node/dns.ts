// Cluster DNS: CoreDNS runs on the host (on the bridge address, started by node-cluster.ts) and
// the kube-dns Service points at it through a hand-made EndpointSlice, so pods resolve through the
// Service IP the kubelet writes in their resolv.conf, the way they do in any cluster; kube-proxy
// does the rest. A host process rather than a pod: it is up before the node is, needs no image
// and no RBAC, and its log sits beside the other components'.
import { Resolver } from 'node:dns/promises';
import { CoreV1Api, DiscoveryV1Api, type KubeConfig } from '@kubernetes/client-node';
import { NODE_NETWORK } from './plan.ts';

export async function installKubeDns(kc: KubeConfig): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const namespace = 'kube-system';
  const labels = { 'k8s-app': 'kube-dns', 'kubernetes.io/name': 'CoreDNS' };
  await core.createNamespacedService({
    namespace,
    body: {
      metadata: { name: 'kube-dns', namespace, labels },
      spec: {
        clusterIP: NODE_NETWORK.dnsServiceIP,
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53 },
          { name: 'dns-tcp', port: 53, protocol: 'TCP', targetPort: 53 },
        ],
      },
    },
  });
  await discovery.createNamespacedEndpointSlice({
    namespace,
    body: {
      metadata: {
        name: 'kube-dns-host',
        namespace,
        labels: { 'kubernetes.io/service-name': 'kube-dns', 'endpointslice.kubernetes.io/managed-by': 'sless-test' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: [NODE_NETWORK.gateway], conditions: { ready: true }, nodeName: NODE_NETWORK.nodeName }],
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, protocol: 'TCP' },
      ],
    },
  });
}

/** True once `kubernetes.default.svc.<domain>` resolves through the kube-dns Service IP. */
export async function resolvesClusterName(): Promise<boolean> {
  const resolver = new Resolver({ timeout: 1_000, tries: 1 });
  resolver.setServers([NODE_NETWORK.dnsServiceIP]);
  try {
    const addresses = await resolver.resolve4(`kubernetes.default.svc.${NODE_NETWORK.clusterDomain}`);
    return addresses.includes('10.0.0.1');
  } catch {
    return false;
  }
}
