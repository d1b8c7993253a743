// Who spends the CPU during a scale benchmark: every process under the benchmark (the API server, etcd,
// SeaweedFS, the controller, the benchmark itself with its git server and harness) read from /proc, and the
// machine as a whole, so what other work on the shared cores took is visible beside it. On 2 cores all of
// them share the CPU: a steady state is as fast as the sum of their CPU per function allows.
import { readdir, readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc's utime/stime (USER_HZ; 100 on Linux). */
const HZ = 100;

export interface CpuSample {
  readonly at: number;
  /** CPU ms so far per label (a process's name, or the label given for its pid). */
  readonly byLabel: ReadonlyMap<string, number>;
  /** CPU ms the whole machine has spent (every core, not idle or iowait). */
  readonly machineMs: number;
}

async function stat(pid: number | 'self'): Promise<{ pid: number; ppid: number; comm: string; ms: number; childrenMs: number } | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    const close = text.lastIndexOf(')');
    const comm = text.slice(text.indexOf('(') + 1, close);
    // proc(5) numbers the fields from 1 (pid), the state is field 3: ppid 4, utime 14, stime 15, cutime 16, cstime 17.
    const f = text.slice(close + 2).split(' ');
    const ticks = (i: number) => Number(f[i - 3]);
    return { pid: Number(text.slice(0, text.indexOf(' '))), ppid: ticks(4), comm, ms: ((ticks(14) + ticks(15)) * 1000) / HZ, childrenMs: ((ticks(16) + ticks(17)) * 1000) / HZ };
  } catch {
    return undefined; // it exited meanwhile
  }
}

/** The program's file name (`kube-apiserver-1.35.4`): /proc's comm keeps only its first 15 characters. */
async function programName(pid: number, comm: string): Promise<string> {
  try {
    const argv0 = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0')[0] ?? '';
    return argv0.slice(argv0.lastIndexOf('/') + 1) || comm;
  } catch {
    return comm;
  }
}

async function machineMs(): Promise<number> {
  const cpu = (await readFile('/proc/stat', 'utf8')).split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal
  const busy = cpu.reduce((a, b, i) => (i === 3 || i === 4 ? a : a + b), 0);
  return (busy * 1000) / HZ;
}

/**
 * CPU so far of this process and every process below it, summed by label: `labels` names pids (the
 * controller), others go by their command name. This process's exited children (git http-backend for
 * the git server, git for pushes) count as `bench children`.
 */
export async function sampleCpu(labels: ReadonlyMap<number, string> = new Map()): Promise<CpuSample> {
  const all = (await Promise.all((await readdir('/proc')).filter((d) => /^\d+$/.test(d)).map((d) => stat(Number(d))))).filter((s) => s !== undefined);
  const children = new Map<number, number[]>();
  for (const s of all) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s.pid]);
  const byPid = new Map(all.map((s) => [s.pid, s]));
  const byLabel = new Map<string, number>();
  const add = (label: string, ms: number) => byLabel.set(label, (byLabel.get(label) ?? 0) + ms);
  const self = byPid.get(process.pid);
  if (self) {
    add('bench', self.ms);
    add('bench children', self.childrenMs);
  }
  const todo = [...(children.get(process.pid) ?? [])];
  while (todo.length) {
    const pid = todo.pop()!;
    const s = byPid.get(pid);
    if (!s) continue;
    add(labels.get(pid) ?? (await programName(pid, s.comm)), s.ms);
    todo.push(...(children.get(pid) ?? []));
  }
  return { at: Date.now(), byLabel, machineMs: await machineMs() };
}

/** CPU seconds per label from `a` to `b`, largest first, with the machine's total and what others took. */
export function cpuBetween(a: CpuSample, b: CpuSample): { byLabel: Array<[string, number]>; oursS: number; machineS: number; wallS: number } {
  const byLabel = [...b.byLabel]
    .map(([label, ms]): [string, number] => [label, (ms - (a.byLabel.get(label) ?? 0)) / 1000])
    .filter(([, s]) => s >= 0.05)
    .sort((x, y) => y[1] - x[1]);
  return { byLabel, oursS: byLabel.reduce((s, [, v]) => s + v, 0), machineS: (b.machineMs - a.machineMs) / 1000, wallS: (b.at - a.at) / 1000 };
}

/** `kube-apiserver 120.3, etcd 30.1, controller 66.0 ... = 250 of the machine's 400 CPU s in 214 s` */
export function formatCpu(d: ReturnType<typeof cpuBetween>, perFunction?: number): string {
  const each = d.byLabel.map(([l, s]) => `${l} ${s.toFixed(1)}${perFunction ? ` (${((s * 1000) / perFunction).toFixed(0)} ms/fn)` : ''}`).join(', ');
  return `${each} = ${d.oursS.toFixed(1)} CPU s of the machine's ${d.machineS.toFixed(1)} (others ${(d.machineS - d.oursS).toFixed(1)}) in ${d.wallS.toFixed(1)} s`;
}
