// Stops a real node from its record and undoes what it changed on the host, in an order where
// nothing restarts what was just removed: kubelet first, then the pod sandboxes (through the CRI,
// so CNI releases addresses and rules), containerd and its shims, whatever is left in the pods'
// cgroup, mounts and network namespaces, kube-proxy's and CNI's iptables chains, the other
// processes, the bridge, kernel settings and global folders; the lock holder last.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { stopProcesses, type ClusterProcess } from '../processes.ts';
import {
  deleteBridge,
  pidsWithCommandLine,
  removeCgroupRoot,
  removeNewNetns,
  removeNodeChains,
  restoreSysctls,
  unmountUnder,
} from './host.ts';
import { removeRecord, type NodeRecord } from './record.ts';

const run = promisify(execFile);

/** Undoes the node of `record`; returns what could not be undone (empty when all went well). */
export async function teardownNode(record: NodeRecord): Promise<string[]> {
  const problems: string[] = [];
  const byName = (...names: string[]): ClusterProcess[] => record.processes.filter((p) => names.includes(p.name));
  const attempt = async (what: string, step: () => Promise<unknown>): Promise<void> => {
    try {
      const result = await step();
      if (Array.isArray(result)) problems.push(...result.map((r) => `${what}: ${String(r)}`));
    } catch (error) {
      problems.push(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const { paths } = record;

  await attempt('stop kubelet', () => stopProcesses(byName('kubelet')));
  if (existsSync(paths.containerdSocket) && existsSync(record.binaries.crictl)) {
    await attempt('remove pod sandboxes', () =>
      run(record.binaries.crictl, [`--runtime-endpoint=unix://${paths.containerdSocket}`, '--timeout=20s', 'rmp', '--all', '--force'], {
        timeout: 90_000,
      }),
    );
  }
  await attempt('stop containerd', () => stopProcesses(byName('containerd')));
  await attempt('stop containerd shims', async () => {
    for (const pid of await pidsWithCommandLine(paths.containerdSocket)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  });
  await attempt('pods cgroup', () => removeCgroupRoot(paths.cgroupRoot));
  await attempt('mounts', () => unmountUnder([paths.dir, paths.containerdState, paths.containerdRoot, paths.kubeletRoot, '/run/containerd']));
  await attempt('network namespaces', () => removeNewNetns(record.netnsBefore));

  await attempt('stop kube-proxy', () => stopProcesses(byName('kube-proxy')));
  if (existsSync(record.binaries.kubeProxy)) {
    await attempt('kube-proxy --cleanup', () => run(record.binaries.kubeProxy, ['--cleanup'], { timeout: 60_000 }));
  }
  await attempt('iptables chains', () => removeNodeChains());

  const rest = record.processes.filter((p) => !['kubelet', 'containerd', 'kube-proxy', 'flock'].includes(p.name));
  await attempt('stop processes', () => stopProcesses(rest));

  if (record.bridgeCreated) await attempt('bridge', () => deleteBridge());
  await attempt('sysctls', () => restoreSysctls(record.sysctls));
  for (const dir of record.createdGlobals) {
    await attempt(`remove ${dir}`, async () => {
      await unmountUnder([dir]);
      await rm(dir, { recursive: true, force: true });
    });
  }
  await attempt('remove run state', async () => {
    await rm(paths.containerdState, { recursive: true, force: true });
    await rm(paths.containerdSocket, { force: true });
    await rm(`${paths.containerdSocket}.ttrpc`, { force: true });
  });
  await removeRecord();
  await attempt('release the node lock', () => stopProcesses(byName('flock')));
  return problems;
}
