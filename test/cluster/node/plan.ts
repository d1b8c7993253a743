// The real node's fixed addresses and the configuration files of its components, as pure
// functions of the paths and ports of one start (node-cluster.ts writes them, plan.test.ts reads
// them). One machine runs one node at a time (lock.ts), so the addresses can be fixed.

/** The node's network: a Linux bridge made before anything starts, whose address is the pods'
 * gateway and the one address on the host that pods and the host both reach. Every host-side
 * service the pods need (API server, registry, CoreDNS, and in node runs the git server and S3)
 * listens there. */
export const NODE_NETWORK = {
  bridge: 'sless0',
  gateway: '10.244.0.1',
  podSubnet: '10.244.0.0/24',
  /** The control plane's --service-cluster-ip-range (cluster.ts). */
  serviceSubnet: '10.0.0.0/24',
  dnsServiceIP: '10.0.0.10',
  clusterDomain: 'cluster.local',
  nodeName: 'sless-node',
  cniNetwork: 'sless',
} as const;

/** Images imported into containerd at start (test/cluster/node/build.sh makes them). */
export function nodeImages(imagesVersion: string): { pause: string; busybox: string } {
  return { pause: `sless.test/pause:${imagesVersion}`, busybox: `sless.test/busybox:${imagesVersion}` };
}

export interface NodePaths {
  /** Everything of this start that is not global: configs, data, logs. */
  readonly dir: string;
  readonly certDir: string;
  readonly kubeconfig: string;
  readonly containerdRoot: string;
  readonly containerdState: string;
  readonly containerdSocket: string;
  readonly cniConfDir: string;
  readonly cniDataDir: string;
  readonly kubeletRoot: string;
  readonly registryDir: string;
  /** The cgroup every pod lives under, in each v1 hierarchy (kubelet's cgroupRoot). */
  readonly cgroupRoot: string;
}

export function containerdConfig(paths: NodePaths, pauseImage: string): string {
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return `version = 2
root = ${toml(paths.containerdRoot)}
state = ${toml(paths.containerdState)}
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing",
]

[grpc]
  address = ${toml(paths.containerdSocket)}

[ttrpc]
  address = ${toml(`${paths.containerdSocket}.ttrpc`)}

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = ${toml(`${paths.containerdRoot}/opt`)}

[${cri}]
  sandbox_image = ${toml(pauseImage)}
  # The sandbox cannot lower oom_score_adj (no CAP_SYS_RESOURCE): without this every sandbox
  # fails with runc's "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  disable_apparmor = true
  # No hugetlb hierarchy is mounted here.
  tolerate_missing_hugetlb_controller = true
  disable_hugetlb_controller = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_unprivileged_ports = true
  # Pod network namespaces under the state folder, not the host's /run/netns.
  netns_mounts_under_state_dir = true

[${cri}.containerd]
  snapshotter = "overlayfs"
  default_runtime_name = "runc"

[${cri}.containerd.runtimes.runc]
  runtime_type = "io.containerd.runc.v2"

[${cri}.containerd.runtimes.runc.options]
  SystemdCgroup = false
  BinaryName = "/usr/sbin/runc"

[${cri}.cni]
  bin_dir = "/usr/lib/cni"
  conf_dir = ${toml(paths.cniConfDir)}
  max_conf_num = 1

[${cri}.registry]
  config_path = ${toml(`${paths.dir}/containerd-certs.d`)}
`;
}

/** containerd's hosts.toml for the test registry: plain HTTP, pulls and resolves. */
export function registryHostsToml(registry: string): string {
  return `server = "http://${registry}"

[host."http://${registry}"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
`;
}

export function cniConfList(paths: NodePaths): string {
  return `${JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: NODE_NETWORK.cniNetwork,
      plugins: [
        {
          type: 'bridge',
          bridge: NODE_NETWORK.bridge,
          isGateway: true,
          // Pods reach what is beyond the node (package registries) through the host's NAT.
          ipMasq: true,
          // A pod reaching itself through a Service comes back through the bridge.
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: NODE_NETWORK.podSubnet, gateway: NODE_NETWORK.gateway }]],
            routes: [{ dst: '0.0.0.0/0' }],
            dataDir: paths.cniDataDir,
          },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  )}\n`;
}

export interface KubeletPorts {
  readonly port: number;
  readonly healthzPort: number;
}

/** KubeletConfiguration for this machine: cgroup v1 (hybrid) with the cgroupfs driver, no swap
 * check, oomScoreAdj 0 (it cannot be lowered here), and kernel tunables left to the kubelet
 * (protectKernelDefaults would make it refuse to start: this machine's kernel.panic and
 * vm.overcommit_memory differ from what it wants; teardown puts the recorded values back). */
export function kubeletConfig(paths: NodePaths, ports: KubeletPorts): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: ${NODE_NETWORK.gateway}
port: ${ports.port}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: ${ports.healthzPort}
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ${paths.certDir}/ca.crt
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://${paths.containerdSocket}
cgroupDriver: cgroupfs
cgroupRoot: ${paths.cgroupRoot}
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
oomScoreAdj: 0
protectKernelDefaults: false
clusterDNS:
  - ${NODE_NETWORK.dnsServiceIP}
clusterDomain: ${NODE_NETWORK.clusterDomain}
resolvConf: /etc/resolv.conf
serializeImagePulls: false
# A shared, busy CI disk must not evict the test pods or collect their images mid-test.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
nodeStatusUpdateFrequency: 4s
syncFrequency: 10s
fileCheckFrequency: 10s
shutdownGracePeriod: 0s
staticPodPath: ""
`;
}

/**
 * The one user of the node's second registry, which requires authentication (issue 11 item 10): test-only
 * credentials; `htpasswd` is its bcrypt entry (cost 5: the registry checks it on every request).
 */
export const AUTH_REGISTRY_USER = {
  username: 'sless',
  password: 'sless-registry-test',
  htpasswd: 'sless:$2b$05$xMKHejU/y1tyfN1BduQP6uD4eSKt5oC9Tpwz3m3zLbfCRV1N405S2',
} as const;

/** A registry (docker-registry 2.8) on the node's address; with `auth`, htpasswd Basic auth over plain HTTP. */
export function registryConfig(paths: NodePaths, port: number, auth?: { readonly rootDirectory: string; readonly htpasswdPath: string }): string {
  return `version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: ${auth?.rootDirectory ?? paths.registryDir}
  delete:
    enabled: true
  cache:
    blobdescriptor: inmemory
http:
  addr: ${NODE_NETWORK.gateway}:${port}
${auth ? `auth:\n  htpasswd:\n    realm: sless-test\n    path: ${auth.htpasswdPath}\n` : ''}`;
}

/** CoreDNS on the host, serving the cluster domain from the API server and forwarding the rest to
 * the host's resolver; kube-proxy sends the kube-dns Service IP here (dns.ts). */
export function corefile(kubeconfig: string, healthPort: number, readyPort: number): string {
  return `.:53 {
    bind ${NODE_NETWORK.gateway}
    errors
    health 127.0.0.1:${healthPort}
    ready 127.0.0.1:${readyPort}
    kubernetes ${NODE_NETWORK.clusterDomain} in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfig} sless-test
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    forward . /etc/resolv.conf
    cache 5
    loadbalance
}
`;
}

function toml(value: string): string {
  return JSON.stringify(value);
}

/** The filter-table chain that refuses traffic to the Service subnet that kube-proxy did not DNAT. */
export const SERVICE_GUARD_CHAIN = 'SLESS-SERVICE-GUARD';

/**
 * `iptables-restore --noflush` input: a connection to an address of the Service subnet that kube-proxy
 * has not programmed (yet: it lags a new Service by a moment, more under load) is refused, as kube-proxy
 * itself refuses a Service without endpoints. Without it the host has no route for the subnet but the
 * default one, and this machine's gateway answers any TCP connection there (`HTTP/1.1 404`, empty
 * body, `server: keryx`): /fn read that as the function's answer right after Ready. kube-proxy's DNAT
 * (nat table) runs before the filter table on OUTPUT and PREROUTING, so what still has a Service
 * address here was not translated. FORWARD covers the pods, OUTPUT the host (the controller processes).
 */
export function serviceGuardScript(): string {
  const jump = `-d ${NODE_NETWORK.serviceSubnet} -m comment --comment "sless: Service addresses kube-proxy did not program" -j ${SERVICE_GUARD_CHAIN}`;
  return ['*filter', `:${SERVICE_GUARD_CHAIN} - [0:0]`, `-A ${SERVICE_GUARD_CHAIN} -j REJECT --reject-with icmp-port-unreachable`, `-I OUTPUT 1 ${jump}`, `-I FORWARD 1 ${jump}`, 'COMMIT', ''].join('\n');
}
