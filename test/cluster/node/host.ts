// The host-wide side effects of a real node, made and undone here: the bridge, the pods' cgroup,
// kernel settings, mounts, network namespaces, iptables chains and the global folders the
// kubelet, containerd and CNI write whatever their configuration says.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, readFile, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { NODE_NETWORK, serviceGuardScript } from './plan.ts';

const run = promisify(execFile);

/** Kernel settings the kubelet (kernel tunables), kube-proxy and the bridge plugin change. */
export const TOUCHED_SYSCTLS = [
  'net/ipv4/ip_forward',
  'net/ipv4/conf/all/route_localnet',
  'net/bridge/bridge-nf-call-iptables',
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
] as const;

/** Folders at fixed paths that the node's components create: the kubelet's device-plugins and
 * log symlinks, containerd's shim sockets and runc state, CNI's result cache, netns mounts. */
export const GLOBAL_PATHS = [
  '/var/lib/kubelet',
  '/var/log/containers',
  '/var/log/pods',
  '/run/containerd',
  '/var/lib/cni',
  '/run/netns',
] as const;

export function readSysctls(): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of TOUCHED_SYSCTLS) {
    try {
      values[name] = readFileSync(`/proc/sys/${name}`, 'utf8').trim();
    } catch {
      // not on this kernel
    }
  }
  return values;
}

export async function restoreSysctls(values: Record<string, string>): Promise<string[]> {
  const errors: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    try {
      const now = (await readFile(`/proc/sys/${name}`, 'utf8')).trim();
      if (now !== value) await writeFile(`/proc/sys/${name}`, `${value}\n`);
    } catch (error) {
      errors.push(`sysctl ${name}=${value}: ${String(error)}`);
    }
  }
  return errors;
}

export function missingGlobalPaths(): string[] {
  return GLOBAL_PATHS.filter((p) => !existsSync(p));
}

/** The bridge with the gateway address, up before any pod exists, so host services can bind it. */
export async function ensureBridge(): Promise<boolean> {
  const { bridge, gateway, podSubnet } = NODE_NETWORK;
  let created = false;
  if (!existsSync(`/sys/class/net/${bridge}`)) {
    await run('ip', ['link', 'add', bridge, 'type', 'bridge']);
    created = true;
  }
  const { stdout } = await run('ip', ['-o', '-4', 'addr', 'show', 'dev', bridge]);
  if (!stdout.includes(` ${gateway}/`)) {
    await run('ip', ['addr', 'add', `${gateway}/${podSubnet.split('/')[1]}`, 'dev', bridge]);
  }
  await run('ip', ['link', 'set', bridge, 'up']);
  return created;
}

export async function deleteBridge(): Promise<void> {
  if (existsSync(`/sys/class/net/${NODE_NETWORK.bridge}`)) await run('ip', ['link', 'delete', NODE_NETWORK.bridge]);
}

/** The mounted cgroup hierarchies: v1 (cpu, memory, ..., name=systemd) or also cgroup2 (the
 * hybrid layout's `unified`, where runc adds the pods' cgroups too). */
function hierarchies(types: ReadonlyArray<'cgroup' | 'cgroup2'>): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' '))
    .filter((f) => types.includes(f[f.indexOf('-') + 1] as 'cgroup'))
    .map((f) => f[4]!);
}

/** The kubelet's cgroupRoot must exist in every v1 hierarchy; a cpuset cgroup is only usable
 * once its cpus and mems are filled in. */
export async function makeCgroupRoot(cgroupRoot: string): Promise<void> {
  for (const hierarchy of hierarchies(['cgroup'])) {
    const dir = path.join(hierarchy, cgroupRoot);
    await mkdir(dir, { recursive: true });
    if (path.basename(hierarchy) === 'cpuset' || existsSync(path.join(dir, 'cpuset.cpus'))) {
      for (const file of ['cpuset.cpus', 'cpuset.mems']) {
        const parent = (await readFile(path.join(hierarchy, file), 'utf8')).trim();
        await writeFile(path.join(dir, file), parent);
      }
    }
  }
}

/** Kills whatever still runs in the pods' cgroup (in any hierarchy), then removes it. */
export async function removeCgroupRoot(cgroupRoot: string): Promise<string[]> {
  const leftovers: string[] = [];
  for (const hierarchy of hierarchies(['cgroup', 'cgroup2'])) {
    const top = path.join(hierarchy, cgroupRoot);
    if (!existsSync(top)) continue;
    const dirs = cgroupTree(top).sort((a, b) => b.length - a.length);
    for (let attempt = 0; attempt < 50; attempt++) {
      let busy = false;
      for (const dir of dirs) {
        for (const pid of readProcs(dir)) {
          busy = true;
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // gone
          }
        }
      }
      if (!busy) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const dir of dirs) {
      try {
        await rmdir(dir);
      } catch (error) {
        leftovers.push(`${dir}: ${String(error)}`);
      }
    }
  }
  return leftovers;
}

function cgroupTree(dir: string): string[] {
  const out = [dir];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...cgroupTree(path.join(dir, e.name)));
  }
  return out;
}

function readProcs(dir: string): number[] {
  try {
    return readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Mount points at or below any of `prefixes`, deepest first. */
export function mountsUnder(prefixes: readonly string[]): string[] {
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[4]!.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
  const under = points.filter((p) => prefixes.some((prefix) => p === prefix || p.startsWith(`${prefix}/`)));
  // A path mounted twice (the kubelet's shared self-bind) needs two unmounts: keep duplicates.
  return under.sort((a, b) => b.split('/').length - a.split('/').length);
}

export async function unmountUnder(prefixes: readonly string[]): Promise<string[]> {
  const errors: string[] = [];
  for (const point of mountsUnder(prefixes)) {
    try {
      await run('umount', [point]);
    } catch {
      try {
        await run('umount', ['-l', point]);
      } catch (error) {
        errors.push(`umount ${point}: ${String(error)}`);
      }
    }
  }
  return errors;
}

export function listNetns(): string[] {
  try {
    return readdirSync('/run/netns');
  } catch {
    return [];
  }
}

/** Removes the network namespaces (and with them their veth ends) that appeared since `before`. */
export async function removeNewNetns(before: readonly string[]): Promise<string[]> {
  const errors: string[] = [];
  for (const name of listNetns().filter((n) => !before.includes(n))) {
    try {
      await run('ip', ['netns', 'delete', name]);
    } catch {
      await run('umount', ['-l', `/run/netns/${name}`]).catch(() => undefined);
      await rm(`/run/netns/${name}`, { force: true }).catch((error: unknown) => errors.push(`netns ${name}: ${String(error)}`));
    }
  }
  return errors;
}

/** Refuses what goes to the Service subnet without kube-proxy's DNAT (plan.ts serviceGuardScript), in
 * the backend the plain `iptables` command uses, as kube-proxy does; removeNodeChains undoes it. */
export async function guardServiceSubnet(): Promise<void> {
  await runWithInput('iptables-restore', ['-w', '--noflush'], serviceGuardScript());
}

/** Chains the kubelet (KUBE-FIREWALL, ...), kube-proxy (KUBE-SERVICES, ...), CNI (CNI-...) and
 * guardServiceSubnet (SLESS-...) add: the jumps to them from other chains are deleted, then they are flushed and removed, in
 * both the nf_tables and the legacy backend. */
export async function removeNodeChains(): Promise<string[]> {
  const errors: string[] = [];
  for (const backend of ['iptables-nft', 'iptables-legacy']) {
    if (!(await hasCommand(`${backend}-save`))) continue;
    for (const table of ['filter', 'nat', 'mangle', 'raw']) {
      let saved: string;
      try {
        saved = (await run(`${backend}-save`, ['-t', table])).stdout;
      } catch {
        continue;
      }
      const script = chainCleanupScript(table, saved);
      if (!script) continue;
      try {
        await runWithInput(`${backend}-restore`, ['--noflush'], script);
      } catch (error) {
        errors.push(`${backend} ${table}: ${String(error)}`);
      }
    }
  }
  return errors;
}

const OURS = /^(KUBE-|CNI-|SLESS-)/;

/** iptables-restore input that removes the node's chains from one table's `iptables-save`
 * output, or '' when there is none. Pure: see host.test.ts. */
export function chainCleanupScript(table: string, saved: string): string {
  const lines = saved.split('\n');
  const chains = lines.filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0]!);
  const ours = chains.filter((c) => OURS.test(c));
  const jumps = lines.filter((l) => {
    const m = /^-A (\S+) .*-[jg] (\S+)/.exec(l);
    return m !== null && !OURS.test(m[1]!) && OURS.test(m[2]!);
  });
  if (ours.length === 0 && jumps.length === 0) return '';
  return [
    `*${table}`,
    ...jumps.map((l) => `-D ${l.slice(3)}`),
    ...ours.map((c) => `-F ${c}`),
    ...ours.map((c) => `-X ${c}`),
    'COMMIT',
    '',
  ].join('\n');
}

async function hasCommand(name: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    if (existsSync(path.join(dir, name))) return true;
  }
  return false;
}

function runWithInput(command: string, args: string[], input: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, (error, _stdout, stderr) => (error ? reject(new Error(`${error.message}: ${stderr}`)) : resolve()));
    child.stdin?.end(input);
  });
}

/** Pids whose command line contains `needle` (containerd's shims name its socket). */
export async function pidsWithCommandLine(needle: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes(needle)) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}
