// A real single-node Kubernetes cluster for the tests: the control plane of cluster.ts on the
// node's bridge address, plus kube-scheduler, containerd + runc, CNI, a kubelet, kube-proxy
// (iptables), CoreDNS and an image registry, all on this host. One per machine (lock.ts); what it
// changes on the host is recorded (record.ts) and undone by teardown.ts.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { access, constants, mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { binaryPaths, startCluster } from '../cluster.ts';
import { freePorts, httpsOk, startProcess, waitFor, type ClusterProcess, type StartedProcess } from '../processes.ts';
import { installKubeDns, resolvesClusterName } from './dns.ts';
import { ensureBridge, guardServiceSubnet, listNetns, makeCgroupRoot, missingGlobalPaths, readSysctls } from './host.ts';
import { acquireNodeLock } from './lock.ts';
import {
  AUTH_REGISTRY_USER,
  NODE_NETWORK,
  cniConfList,
  containerdConfig,
  corefile,
  kubeletConfig,
  nodeImages,
  registryConfig,
  registryHostsToml,
  type NodePaths,
} from './plan.ts';
import { NODE_RUN_DIR, readRecord, writeRecord, type NodeRecord } from './record.ts';
import { teardownNode } from './teardown.ts';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

export interface NodeClusterOptions {
  /** Working directory (certificates, configs, data, logs); created if missing. */
  readonly dir: string;
  /** How long to wait for another node on this machine to stop; default 30 min. */
  readonly lockTimeoutMs?: number;
  /** How long each component may take to become ready; default 120 s. */
  readonly timeoutMs?: number;
}

export interface NodeCluster {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly token: string;
  /** host:port of the image registry, the same from the host (push) and from containerd (pull). */
  readonly registry: string;
  /** A second registry that requires Basic auth (htpasswd, plain HTTP) and its one user; containerd pulls from it only with a pull secret. */
  readonly authRegistry: { readonly address: string; readonly username: string; readonly password: string };
  /** The address on the host that pods reach (bind host services here). */
  readonly hostAddress: string;
  /** Images present on the node without a registry (imagePullPolicy: IfNotPresent). */
  readonly images: { readonly pause: string; readonly busybox: string };
  readonly nodeName: string;
  readonly logDir: string;
  readonly processes: readonly ClusterProcess[];
  stop(): Promise<void>;
}

interface NodeBinaries {
  readonly kubelet: string;
  readonly scheduler: string;
  readonly kubeProxy: string;
  readonly kubectl: string;
  readonly coredns: string;
  readonly crictl: string;
  readonly images: { readonly pause: string; readonly busybox: string };
  readonly imagesVersion: string;
}

export function nodeBinaryPaths(): NodeBinaries {
  const versions = Object.fromEntries(
    readFileSync(path.join(here, '..', 'versions.env'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => l.split('=', 2) as [string, string]),
  );
  const cache = process.env.SLESS_TEST_CACHE ?? path.join(os.homedir(), '.cache', 'sless-test');
  const bin = (name: string, version: string | undefined): string => path.join(cache, 'bin', `${name}-${version}`);
  const image = (name: string): string => path.join(cache, 'images', `${name}-${versions.NODE_IMAGES_VERSION}.tar`);
  return {
    kubelet: bin('kubelet', versions.KUBE_VERSION),
    scheduler: bin('kube-scheduler', versions.KUBE_VERSION),
    kubeProxy: bin('kube-proxy', versions.KUBE_VERSION),
    kubectl: bin('kubectl', versions.KUBE_VERSION),
    coredns: bin('coredns', versions.COREDNS_VERSION),
    crictl: bin('crictl', versions.CRICTL_VERSION),
    images: { pause: image('pause'), busybox: image('busybox') },
    imagesVersion: versions.NODE_IMAGES_VERSION ?? '1',
  };
}

const HOST_COMMANDS = ['/usr/bin/containerd', '/usr/bin/containerd-shim-runc-v2', '/usr/bin/ctr', '/usr/sbin/runc', '/usr/bin/docker-registry', '/usr/lib/cni/bridge', '/usr/lib/cni/host-local', '/usr/lib/cni/loopback', '/usr/lib/cni/portmap', '/usr/sbin/iptables-restore'];

async function checkInstalled(bins: NodeBinaries): Promise<void> {
  const control = binaryPaths();
  const wanted = [control.etcd, control.apiserver, control.controllerManager, bins.kubelet, bins.scheduler, bins.kubeProxy, bins.coredns, bins.crictl, bins.images.pause, bins.images.busybox, ...HOST_COMMANDS];
  const missing: string[] = [];
  for (const file of wanted) {
    await access(file, constants.R_OK).catch(() => missing.push(file));
  }
  if (missing.length > 0) {
    throw new Error(`the real node needs ${missing.join(', ')}: run .ci/install.d/25-node.sh (test/cluster/build.sh, test/cluster/node/build.sh and Debian's containerd, runc, containernetworking-plugins, docker-registry)`);
  }
  if (process.getuid?.() !== 0) throw new Error('the real node runs as root (kubelet, containerd, iptables, bridge)');
}

export async function startNodeCluster(options: NodeClusterOptions): Promise<NodeCluster> {
  const t0 = Date.now();
  const bins = nodeBinaryPaths();
  await checkInstalled(bins);
  const dir = path.resolve(options.dir);
  const logDir = path.join(dir, 'logs');
  await mkdir(logDir, { recursive: true });
  const timeoutMs = options.timeoutMs ?? 120_000;

  const lock = await acquireNodeLock(logDir, options.lockTimeoutMs ?? 30 * 60_000);
  const stale = await readRecord();
  if (stale) {
    const problems = await teardownNode({ ...stale, processes: stale.processes.filter((p) => p.name !== 'flock') });
    console.error(`[node] cleaned up a node left by pid ${stale.owner.pid}${problems.length ? `: ${problems.join('; ')}` : ''}`);
  }

  const paths: NodePaths = {
    dir,
    certDir: path.join(dir, 'certs'),
    kubeconfig: path.join(dir, 'kubeconfig'),
    containerdRoot: path.join(dir, 'containerd'),
    containerdState: path.join(NODE_RUN_DIR, 'containerd'),
    containerdSocket: path.join(NODE_RUN_DIR, 'containerd.sock'),
    cniConfDir: path.join(dir, 'cni', 'net.d'),
    cniDataDir: path.join(dir, 'cni', 'ipam'),
    kubeletRoot: path.join(dir, 'kubelet'),
    registryDir: path.join(dir, 'registry'),
    cgroupRoot: '/sless-node',
  };
  const record: NodeRecord = {
    paths,
    processes: [{ name: lock.name, pid: lock.pid }],
    sysctls: readSysctls(),
    netnsBefore: listNetns(),
    createdGlobals: missingGlobalPaths(),
    bridgeCreated: false,
    binaries: { crictl: bins.crictl, kubeProxy: bins.kubeProxy },
    owner: { pid: process.pid, startedAt: new Date().toISOString(), command: process.argv.slice(1).join(' ') },
  };
  await writeRecord(record);
  const started: StartedProcess[] = [];
  const track = async (p: StartedProcess): Promise<StartedProcess> => {
    started.push(p);
    record.processes.push({ name: p.name, pid: p.pid });
    await writeRecord(record);
    return p;
  };
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= teardownNode(record).then((problems) => {
      if (problems.length > 0) console.error(`[node] teardown left: ${problems.join('; ')}`);
    }));

  try {
    record.bridgeCreated = await ensureBridge();
    await writeRecord(record);
    await makeCgroupRoot(paths.cgroupRoot);
    for (const d of [paths.cniConfDir, paths.cniDataDir, paths.kubeletRoot, paths.registryDir, paths.containerdRoot, path.join(dir, 'containerd-certs.d')]) {
      await mkdir(d, { recursive: true });
    }

    const cluster = await startCluster({ dir, withControllerManager: true, node: { address: NODE_NETWORK.gateway }, timeoutMs });
    for (const p of cluster.processes) record.processes.push(p);
    await writeRecord(record);
    const kc = new KubeConfig();
    kc.loadFromFile(cluster.kubeconfigPath);

    const [registryPort, schedulerPort, proxyMetrics, proxyHealth, kubeletPort, kubeletHealth, dnsHealth, dnsReady, authRegistryPort] = await freePorts(9);
    const registry = `${NODE_NETWORK.gateway}:${registryPort}`;
    const authRegistry = `${NODE_NETWORK.gateway}:${authRegistryPort}`;
    const images = nodeImages(bins.imagesVersion);

    // The registry and containerd.
    const registryYaml = path.join(dir, 'registry.yaml');
    await writeFile(registryYaml, registryConfig(paths, registryPort!));
    await track(startProcess('docker-registry', '/usr/bin/docker-registry', logDir, ['serve', registryYaml]));
    const htpasswdPath = path.join(dir, 'registry-auth.htpasswd');
    await writeFile(htpasswdPath, `${AUTH_REGISTRY_USER.htpasswd}\n`);
    const authRegistryYaml = path.join(dir, 'registry-auth.yaml');
    await writeFile(authRegistryYaml, registryConfig(paths, authRegistryPort!, { rootDirectory: `${paths.registryDir}-auth`, htpasswdPath }));
    await track(startProcess('registry-auth', '/usr/bin/docker-registry', logDir, ['serve', authRegistryYaml]));
    for (const r of [registry, authRegistry]) {
      await mkdir(path.join(dir, 'containerd-certs.d', r), { recursive: true });
      await writeFile(path.join(dir, 'containerd-certs.d', r, 'hosts.toml'), registryHostsToml(r));
    }
    await writeFile(path.join(paths.cniConfDir, '10-sless.conflist'), cniConfList(paths));
    const containerdToml = path.join(dir, 'containerd.toml');
    await writeFile(containerdToml, containerdConfig(paths, images.pause));
    await track(startProcess('containerd', '/usr/bin/containerd', logDir, ['--config', containerdToml]));
    const ctr = (...args: string[]): Promise<unknown> => run('/usr/bin/ctr', ['--address', paths.containerdSocket, '--namespace', 'k8s.io', ...args], { timeout: 60_000 });

    // The rest of the control plane's helpers, while containerd starts.
    await track(
      startProcess('kube-scheduler', bins.scheduler, logDir, [
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--authentication-kubeconfig=${cluster.kubeconfigPath}`,
        `--authorization-kubeconfig=${cluster.kubeconfigPath}`,
        '--leader-elect=false',
        '--bind-address=127.0.0.1',
        `--secure-port=${schedulerPort}`,
        `--cert-dir=${path.join(paths.certDir, 'scheduler')}`,
        '--profiling=false',
      ]),
    );
    // Before kube-proxy: a Service address it has not programmed yet is refused, not sent to the gateway.
    await guardServiceSubnet();
    await track(
      startProcess('kube-proxy', bins.kubeProxy, logDir, [
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--hostname-override=${NODE_NETWORK.nodeName}`,
        '--proxy-mode=iptables',
        `--cluster-cidr=${NODE_NETWORK.podSubnet}`,
        `--nodeport-addresses=${NODE_NETWORK.gateway}/32`,
        // Leave the machine's conntrack table size alone.
        '--conntrack-max-per-core=0',
        `--metrics-bind-address=127.0.0.1:${proxyMetrics}`,
        `--healthz-bind-address=127.0.0.1:${proxyHealth}`,
        '--v=1',
      ]),
    );
    const corefilePath = path.join(dir, 'Corefile');
    await writeFile(corefilePath, corefile(cluster.kubeconfigPath, dnsHealth!, dnsReady!));
    await track(startProcess('coredns', bins.coredns, logDir, ['-conf', corefilePath]));

    await waitFor('the registry', started, timeoutMs, () => httpOk(`http://${registry}/v2/`));
    await waitFor('the registry with authentication', started, timeoutMs, () => httpOk(`http://${authRegistry}/v2/`, 401));
    await waitFor('containerd', started, timeoutMs, () => ctr('version').then(() => true, () => false));
    await ctr('images', 'import', bins.images.pause);
    await ctr('images', 'import', bins.images.busybox);

    const kubeletYaml = path.join(dir, 'kubelet.yaml');
    await writeFile(kubeletYaml, kubeletConfig(paths, { port: kubeletPort!, healthzPort: kubeletHealth! }));
    await track(
      startProcess('kubelet', bins.kubelet, logDir, [
        `--config=${kubeletYaml}`,
        `--kubeconfig=${cluster.kubeconfigPath}`,
        `--root-dir=${paths.kubeletRoot}`,
        `--cert-dir=${path.join(paths.certDir, 'kubelet')}`,
        `--hostname-override=${NODE_NETWORK.nodeName}`,
        `--node-ip=${NODE_NETWORK.gateway}`,
        '--v=1',
      ]),
    );
    const core = kc.makeApiClient(CoreV1Api);
    await waitFor('the node to be Ready and schedulable', started, timeoutMs, () => nodeReady(core));
    await waitFor('kube-scheduler', started, timeoutMs, () => httpsOk(`https://127.0.0.1:${schedulerPort}/healthz`, undefined, undefined));
    await waitFor('kube-proxy', started, timeoutMs, () => httpOk(`http://127.0.0.1:${proxyHealth}/healthz`));
    await installKubeDns(kc);
    await waitFor('CoreDNS', started, timeoutMs, () => httpOk(`http://127.0.0.1:${dnsReady}/ready`));
    await waitFor('cluster DNS through the kube-dns Service', started, timeoutMs, () => resolvesClusterName());
    console.error(`[node] ${NODE_NETWORK.nodeName} Ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (API ${cluster.server}, registry ${registry}, logs ${logDir})`);

    return {
      kubeconfigPath: cluster.kubeconfigPath,
      server: cluster.server,
      token: cluster.token,
      registry,
      authRegistry: { address: authRegistry, username: AUTH_REGISTRY_USER.username, password: AUTH_REGISTRY_USER.password },
      hostAddress: NODE_NETWORK.gateway,
      images,
      nodeName: NODE_NETWORK.nodeName,
      logDir,
      processes: record.processes,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function nodeReady(core: CoreV1Api): Promise<boolean> {
  try {
    const node = await core.readNode({ name: NODE_NETWORK.nodeName });
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    const blocked = (node.spec?.taints ?? []).some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
    return ready && !blocked;
  } catch {
    return false;
  }
}

function httpOk(url: string, expected = 200): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === expected);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}
