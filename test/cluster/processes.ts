// Process groups for the test cluster: every component is started as its own group leader (so a
// stop reaches whatever it forks and it may outlive `npm run cluster:up`), logs to a file, and is
// stopped with SIGTERM, then SIGKILL after a grace period. Shared by cluster.ts and node/.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';

export interface ClusterProcess {
  /** The component ('etcd', 'kube-apiserver', 'kubelet', ...); its command line contains it. */
  readonly name: string;
  /** Also the process group id: every process is started as a group leader. */
  readonly pid: number;
}

export interface StartedProcess extends ClusterProcess {
  readonly exited: Promise<number | null>;
  readonly logPath: string;
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
export async function stopProcessGroups(
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

export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export function groupAlive(pid: number): boolean {
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

export function startProcess(
  name: string,
  binary: string,
  logDir: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv } = {},
): StartedProcess {
  if (![binary, ...args].join('\0').includes(name)) {
    throw new Error(`process name ${name} does not occur in its command line (${binary}): stopProcesses finds processes by it, so this one would never be stopped`);
  }
  const logPath = path.join(logDir, `${name}.log`);
  const fd = openSync(logPath, 'w');
  // detached: a process group of its own, so stop() reaches any child it might fork, and the
  // cluster can outlive `npm run cluster:up`.
  const child = spawn(binary, args, { detached: true, stdio: ['ignore', fd, fd], env: options.env ?? process.env });
  closeSync(fd);
  child.unref();
  if (child.pid === undefined) throw new Error(`could not start ${binary}`);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { name, pid: child.pid, exited, logPath };
}

export async function waitFor(
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

export async function logTail(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).split('\n').slice(-20).join('\n');
  } catch {
    return '(no log)';
  }
}

export function httpsOk(url: string, ca: Buffer | undefined, token: string | undefined): Promise<boolean> {
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
export async function freePorts(count: number): Promise<number[]> {
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


export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
