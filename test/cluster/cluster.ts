// A real, throwaway Kubernetes control plane for tests, in the spirit of controller-runtime's envtest:
// etcd + kube-apiserver (and optionally kube-controller-manager) on 127.0.0.1 with free ports,
// generated certificates and a static admin token. No kubelet, no scheduler: pods are never run;
// test/helpers/kube.ts sets their status the way a kubelet would.
//
// The binaries come from test/cluster/build.sh (versions in test/cluster/versions.env).
import { spawn, execFile } from 'node:child_process';
import { openSync, closeSync, readFileSync } from 'node:fs';
import { access, constants, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));

export interface ClusterOptions {
  /** Working directory for certificates, etcd data, logs and the kubeconfig; created if missing. */
  readonly dir: string;
  /** Also run kube-controller-manager (garbage collector, namespace, deployment, job, cronjob...). */
  readonly withControllerManager?: boolean;
  /** How long to wait for the control plane to become ready. */
  readonly timeoutMs?: number;
}

export interface ClusterProcess {
  readonly name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager';
  /** Also the process group id: every process is started as a group leader. */
  readonly pid: number;
}

export interface Cluster {
  readonly kubeconfigPath: string;
  /** https://127.0.0.1:<port> */
  readonly server: string;
  /** Bearer token of a system:masters user. */
  readonly token: string;
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
  await makeCertificates(certs);
  const token = randomBytes(24).toString('hex');
  await writeFile(path.join(certs, 'tokens.csv'), `${token},sless-test-admin,sless-test-admin,"system:masters"\n`, {
    mode: 0o600,
  });

  const server = `https://127.0.0.1:${apiPort}`;
  const kubeconfigPath = path.join(dir, 'kubeconfig');
  const ca = await readFile(path.join(certs, 'ca.crt'));
  await writeFile(kubeconfigPath, kubeconfig(server, ca, token), { mode: 0o600 });

  const processes: Array<ClusterProcess & { exited: Promise<number | null> }> = [];
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
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        '--service-cluster-ip-range=10.0.0.0/24',
        '--allow-privileged=true',
        '--authorization-mode=RBAC',
        `--token-auth-file=${path.join(certs, 'tokens.csv')}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${path.join(certs, 'sa.pub')}`,
        `--service-account-signing-key-file=${path.join(certs, 'sa.key')}`,
        // As envtest: without kubelets no pod needs a mounted token, and a fresh namespace's
        // "default" ServiceAccount must not be a precondition for creating pods.
        '--disable-admission-plugins=ServiceAccount',
        '--profiling=false',
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
          `--controllers=${CONTROLLERS.join(',')}`,
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
    processes: processes.map(({ name, pid }) => ({ name, pid })),
    stop,
  };
}

/** Stops process groups started by another process (e.g. `npm run cluster:down`); a recorded pid
 * that now belongs to some other program (after a reboot) is left alone. */
export async function stopProcesses(processes: readonly ClusterProcess[]): Promise<void> {
  const ours = processes.filter((p) => {
    try {
      return readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes(p.name);
    } catch {
      return false;
    }
  });
  await stopProcessGroups([...ours].reverse());
}

/** SIGTERM each group, wait up to 5 s, then SIGKILL whatever is left; resolves when all are gone. */
async function stopProcessGroups(
  processes: ReadonlyArray<ClusterProcess & { exited?: Promise<unknown> }>,
): Promise<void> {
  for (const p of processes) {
    signalGroup(p.pid, 'SIGTERM');
    const deadline = Date.now() + 5_000;
    while (groupAlive(p.pid) && Date.now() < deadline) await sleep(50);
    if (groupAlive(p.pid)) {
      signalGroup(p.pid, 'SIGKILL');
      while (groupAlive(p.pid)) await sleep(20);
    }
    // Our own child is gone only once reaped; until then its pid is a zombie that still "exists".
    // Poll (a timer keeps the event loop alive) rather than await the unref'd child's exit alone.
    if (p.exited) {
      let reaped = false;
      void p.exited.then(() => (reaped = true));
      const until = Date.now() + 5_000;
      while (!reaped && Date.now() < until) await sleep(10);
    }
  }
}

/** Synchronous last resort for process.on('exit'). */
export function killProcessGroupsNow(processes: readonly ClusterProcess[]): void {
  for (const p of processes) signalGroup(p.pid, 'SIGKILL');
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by us) still "exists"; treat it as gone.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return true;
  }
}

function startProcess(
  name: ClusterProcess['name'],
  binary: string,
  logDir: string,
  args: string[],
): ClusterProcess & { exited: Promise<number | null>; logPath: string } {
  const logPath = path.join(logDir, `${name}.log`);
  const fd = openSync(logPath, 'w');
  // detached: a process group of its own, so stop() reaches any child it might fork, and the
  // cluster can outlive `npm run cluster:up`.
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${binary}`);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, pid: child.pid, exited, logPath };
}

async function waitFor(
  what: string,
  processes: ReadonlyArray<ClusterProcess & { exited: Promise<number | null>; logPath?: string }>,
  timeoutMs: number,
  probe: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let dead: { name: string; code: number | null; logPath?: string } | undefined;
  for (const p of processes) {
    void p.exited.then((code) => {
      dead ??= { name: p.name, code, logPath: p.logPath };
    });
  }
  while (Date.now() < deadline) {
    if (dead) {
      const tail = dead.logPath ? await logTail(dead.logPath) : '';
      throw new Error(`${dead.name} exited with code ${dead.code} while waiting for ${what}; its log ends:\n${tail}`);
    }
    if (await probe()) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; logs are in ${path.dirname(processes[0]?.logPath ?? '.')}`);
}

async function logTail(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

function httpsOk(url: string, ca: Buffer | undefined, token: string | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.get(
      url,
      {
        ca,
        rejectUnauthorized: ca !== undefined,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        timeout: 2_000,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** Ports the kernel hands out now; a tiny race remains until the servers bind them. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

/** A CA, the apiserver's serving certificate for 127.0.0.1/localhost, and the service-account
 * key pair; EC keys because RSA generation costs seconds on a busy machine. */
async function makeCertificates(certs: string): Promise<void> {
  const f = (name: string): string => path.join(certs, name);
  const openssl = (...args: string[]): Promise<unknown> => run('openssl', args, { cwd: certs });
  const ecKey = (file: string): Promise<unknown> =>
    openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', file);
  await Promise.all([ecKey(f('ca.key')), ecKey(f('apiserver.key')), ecKey(f('sa.key'))]);
  await openssl('pkey', '-in', f('sa.key'), '-pubout', '-out', f('sa.pub'));
  await openssl('req', '-x509', '-new', '-key', f('ca.key'), '-subj', '/CN=sless-test-ca', '-days', '3650', '-out', f('ca.crt'));
  await writeFile(
    f('apiserver.ext'),
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1',
      '',
    ].join('\n'),
  );
  await openssl('req', '-new', '-key', f('apiserver.key'), '-subj', '/CN=kube-apiserver', '-out', f('apiserver.csr'));
  await openssl(
    'x509', '-req', '-in', f('apiserver.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-days', '3650', '-extfile', f('apiserver.ext'), '-out', f('apiserver.crt'),
  );
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

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
