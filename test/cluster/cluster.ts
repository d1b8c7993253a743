// A real, throwaway Kubernetes control plane for tests, in the spirit of controller-runtime's envtest:
// etcd + kube-apiserver (and optionally kube-controller-manager) on 127.0.0.1 with free ports,
// generated certificates and a static admin token. Without `node`, there is no kubelet and no
// scheduler: pods are never run; test/helpers/kube.ts sets their status the way a kubelet would.
// With `node` (see node/node-cluster.ts, which adds the kubelet and the rest), the API server
// listens on the node's bridge address so pods reach it, and the controllers a node needs run too.
//
// The binaries come from test/cluster/build.sh (versions in test/cluster/versions.env).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { access, constants, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { freePorts, httpsOk, startProcess, stopProcessGroups, waitFor, type ClusterProcess, type StartedProcess } from './processes.ts';

export { killProcessGroupsNow, stopProcesses, type ClusterProcess } from './processes.ts';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

export interface ClusterOptions {
  /** Working directory for certificates, etcd data, logs and the kubeconfig; created if missing. */
  readonly dir: string;
  /** Also run kube-controller-manager (garbage collector, namespace, deployment, job, cronjob...). */
  readonly withControllerManager?: boolean;
  /** How long to wait for the control plane to become ready. */
  readonly timeoutMs?: number;
  /** A control plane for a real node: the API server on `address` (reachable from pods), the
   * ServiceAccount admission plugin on (pods get tokens), a client certificate for kubelet calls
   * (logs, exec), and the node lifecycle, pod GC and root CA publisher controllers. */
  readonly node?: { readonly address: string };
}

export interface Cluster {
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> (https://<node address>:<port> with `node`) */
  readonly server: string;
  /** Bearer token of a system:masters user. */
  readonly token: string;
  /** Certificates (ca.crt, ca.key, ...) made for this cluster. */
  readonly certDir: string;
  readonly processes: readonly ClusterProcess[];
  stop(): Promise<void>;
}

export interface BinaryPaths {
  readonly etcd: string;
  readonly apiserver: string;
  readonly controllerManager: string;
}

/** The controllers worth having without nodes: objects get owners collected, namespaces emptied,
 * Deployments get ReplicaSets and Pods, Jobs get Pods, CronJobs get Jobs, Services get endpoints. */
const CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'serviceaccount-controller',
  'deployment-controller',
  'replicaset-controller',
  'job-controller',
  'cronjob-controller',
  'ttl-after-finished-controller',
  'endpoints-controller',
  'endpointslice-controller',
];

/** What a real node adds: its Ready condition and taints managed, pods of a gone node collected,
 * and the kube-root-ca.crt ConfigMap that every projected ServiceAccount token volume mounts. */
const NODE_CONTROLLERS = [
  'node-lifecycle-controller',
  'taint-eviction-controller',
  'pod-garbage-collector-controller',
  'root-ca-certificate-publisher-controller',
  'serviceaccount-token-controller',
  'daemonset-controller',
  'statefulset-controller',
  'disruption-controller',
];

export function binaryPaths(): BinaryPaths {
  const versions = Object.fromEntries(
    readFileSync(path.join(here, 'versions.env'), 'utf8')
      .split('\n')
      .filter((l) => /^[A-Z_]+=/.test(l))
      .map((l) => l.split('=', 2) as [string, string]),
  );
  const cache = process.env.SLESS_TEST_CACHE ?? path.join(os.homedir(), '.cache', 'sless-test');
  const bin = path.join(cache, 'bin');
  return {
    etcd: path.join(bin, `etcd-${versions.ETCD_VERSION}`),
    apiserver: path.join(bin, `kube-apiserver-${versions.KUBE_VERSION}`),
    controllerManager: path.join(bin, `kube-controller-manager-${versions.KUBE_VERSION}`),
  };
}

export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  const bins = binaryPaths();
  const needed = [bins.etcd, bins.apiserver, ...(options.withControllerManager ? [bins.controllerManager] : [])];
  for (const b of needed) {
    try {
      await access(b, constants.X_OK);
    } catch (cause) {
      throw new Error(`test cluster binary ${b} is missing: run test/cluster/build.sh (it takes a while the first time)`, {
        cause,
      });
    }
  }

  const dir = path.resolve(options.dir);
  const certs = path.join(dir, 'certs');
  const logs = path.join(dir, 'logs');
  // A fresh etcd every start: tests assume an empty cluster.
  await rm(path.join(dir, 'etcd'), { recursive: true, force: true });
  await mkdir(certs, { recursive: true });
  await mkdir(logs, { recursive: true });

  const [etcdClient, etcdPeer, apiPort, kcmPort] = await freePorts(4);
  const address = options.node?.address ?? '127.0.0.1';
  await makeCertificates(certs, address, options.node !== undefined);
  const token = randomBytes(24).toString('hex');
  await writeFile(path.join(certs, 'tokens.csv'), `${token},sless-test-admin,sless-test-admin,"system:masters"\n`, {
    mode: 0o600,
  });

  const server = `https://${address}:${apiPort}`;
  const kubeconfigPath = path.join(dir, 'kubeconfig');
  const ca = await readFile(path.join(certs, 'ca.crt'));
  await writeFile(kubeconfigPath, kubeconfig(server, ca, token), { mode: 0o600 });

  const processes: StartedProcess[] = [];
  const stop = async (): Promise<void> => {
    await stopProcessGroups([...processes].reverse());
  };
  const timeoutMs = options.timeoutMs ?? 60_000;
  try {
    // etcd and the apiserver start together: the apiserver retries etcd until it answers.
    processes.push(
      startProcess('etcd', bins.etcd, logs, [
        '--name=sless-test',
        `--data-dir=${path.join(dir, 'etcd')}`,
        `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
        `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
        `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
        `--initial-cluster=sless-test=http://127.0.0.1:${etcdPeer}`,
        '--unsafe-no-fsync',
        '--log-level=warn',
      ]),
    );
    processes.push(
      startProcess('kube-apiserver', bins.apiserver, logs, [
        `--etcd-servers=http://127.0.0.1:${etcdClient}`,
        `--cert-dir=${certs}`,
        `--tls-cert-file=${path.join(certs, 'apiserver.crt')}`,
        `--tls-private-key-file=${path.join(certs, 'apiserver.key')}`,
        `--client-ca-file=${path.join(certs, 'ca.crt')}`,
        `--secure-port=${apiPort}`,
        `--bind-address=${address}`,
        `--advertise-address=${address}`,
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--authorization-mode=RBAC',
        `--token-auth-file=${path.join(certs, 'tokens.csv')}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${path.join(certs, 'sa.pub')}`,
        `--service-account-signing-key-file=${path.join(certs, 'sa.key')}`,
        ...(options.node
          ? [
              `--kubelet-client-certificate=${path.join(certs, 'kubelet-client.crt')}`,
              `--kubelet-client-key=${path.join(certs, 'kubelet-client.key')}`,
              '--kubelet-preferred-address-types=InternalIP',
            ]
          : // As envtest: without kubelets no pod needs a mounted token, and a fresh namespace's
            // "default" ServiceAccount must not be a precondition for creating pods.
            ['--disable-admission-plugins=ServiceAccount']),
        // SLESS_TEST_APISERVER_PROFILING=1 serves /debug/pprof (where the API server's CPU goes in a bench).
        `--profiling=${process.env.SLESS_TEST_APISERVER_PROFILING === '1'}`,
        '--v=0',
      ]),
    );
    await waitFor('kube-apiserver /readyz', processes, timeoutMs, () =>
      httpsOk(`${server}/readyz`, ca, token),
    );

    if (options.withControllerManager) {
      const kcmKubeconfig = path.join(dir, 'kcm.kubeconfig');
      await writeFile(kcmKubeconfig, kubeconfig(server, ca, token), { mode: 0o600 });
      processes.push(
        startProcess('kube-controller-manager', bins.controllerManager, logs, [
          `--kubeconfig=${kcmKubeconfig}`,
          `--authentication-kubeconfig=${kcmKubeconfig}`,
          `--authorization-kubeconfig=${kcmKubeconfig}`,
          '--leader-elect=false',
          `--controllers=${[...CONTROLLERS, ...(options.node ? NODE_CONTROLLERS : [])].join(',')}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${kcmPort}`,
          `--cert-dir=${path.join(certs, 'kcm')}`,
          `--root-ca-file=${path.join(certs, 'ca.crt')}`,
          `--service-account-private-key-file=${path.join(certs, 'sa.key')}`,
          // Garbage collection and namespace cleanup should happen in test time, not minutes.
          '--concurrent-gc-syncs=5',
          '--namespace-sync-period=10s',
          '--profiling=false',
          '--v=0',
        ]),
      );
      await waitFor('kube-controller-manager /healthz', processes, timeoutMs, () =>
        httpsOk(`https://127.0.0.1:${kcmPort}/healthz`, undefined, undefined),
      );
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    kubeconfigPath,
    server,
    token,
    certDir: certs,
    processes: processes.map(({ name, pid }) => ({ name, pid })),
    stop,
  };
}

/** A CA, the apiserver's serving certificate for 127.0.0.1/localhost, and the service-account
 * key pair; EC keys because RSA generation costs seconds on a busy machine. */
async function makeCertificates(certs: string, address: string, forNode: boolean): Promise<void> {
  const f = (name: string): string => path.join(certs, name);
  const openssl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: certs });
  const ecKey = (file: string): Promise<unknown> =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file);
  await Promise.all([
    ecKey(f('ca.key')),
    ecKey(f('apiserver.key')),
    ecKey(f('sa.key')),
    ...(forNode ? [ecKey(f('kubelet-client.key'))] : []),
  ]);
  await openssl('pkey', '-in', f('sa.key'), '-pubout', '-out', f('sa.pub'));
  await openssl('req', '-x509', '-new', '-key', f('ca.key'), '-subj', '/CN=sless-test-ca', '-days', '3650', '-out', f('ca.crt'));
  await writeFile(
    f('apiserver.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=IP:127.0.0.1,IP:${address},DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.0.0.1`,
      '',
    ].join('\n'),
  );
  await openssl('req', '-new', '-key', f('apiserver.key'), '-subj', '/CN=kube-apiserver', '-out', f('apiserver.csr'));
  await openssl(
    'x509', '-req', '-in', f('apiserver.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-days', '3650', '-extfile', f('apiserver.ext'), '-out', f('apiserver.crt'),
  );
  if (forNode) {
    // The API server's client identity towards the kubelet (logs, exec, port-forward).
    await writeFile(f('kubelet-client.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
    await openssl('req', '-new', '-key', f('kubelet-client.key'), '-subj', '/O=system:masters/CN=kube-apiserver-kubelet-client', '-out', f('kubelet-client.csr'));
    await openssl(
      'x509', '-req', '-in', f('kubelet-client.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial',
      '-days', '3650', '-extfile', f('kubelet-client.ext'), '-out', f('kubelet-client.crt'),
    );
  }
}

function kubeconfig(server: string, ca: Buffer, token: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: sless-test',
    '    cluster:',
    `      server: ${server}`,
    `      certificate-authority-data: ${ca.toString('base64')}`,
    'users:',
    '  - name: sless-test-admin',
    '    user:',
    `      token: ${token}`,
    'contexts:',
    '  - name: sless-test',
    '    context:',
    '      cluster: sless-test',
    '      user: sless-test-admin',
    '      namespace: default',
    'current-context: sless-test',
    '',
  ].join('\n');
}
