// Every process `sless dev` starts (runtime servers, job runs, dependency installs) goes through here:
// each child leads its own process group, so stopping it also stops whatever it spawned (npm, go
// build, a shell), and the registry lets shutdown stop all of them — no orphans.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Logger } from './logger.ts';

export interface CommandSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
}

export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export interface GroupChild {
  readonly pid: number;
  readonly exited: Promise<ExitStatus>;
  /** The last few KiB of combined output, for error messages. */
  tail(): string;
  /** Whole stdout, when started with `captureStdout`. */
  stdout(): string;
  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the leader is gone. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  /** Prefix of the log lines this child's output becomes, e.g. `dev/hello`. */
  readonly label: string;
  readonly logger: Logger;
  /** Keep stdout in memory instead of logging it (job runs: stdout is the result). */
  readonly captureStdout?: boolean;
  /** Output lines are not logged (dependency installs are noisy); still kept in the tail. */
  readonly quiet?: boolean;
  /** Every chunk of output as it arrives (function-logs.ts keeps a function's lines). */
  readonly onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
}

const TAIL_BYTES = 4096;
const DEFAULT_GRACE_MS = 3000;

/** Variables a child must not inherit: the platform's own secrets and settings. */
const PRIVATE_ENV = /^(SLESS_|AWS_|DATABASE_URL$|PG[A-Z]+$)/;

/** The environment every child starts from: ours, minus secrets and sless settings. */
export function childBaseEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !PRIVATE_ENV.test(k)) out[k] = v;
  return out;
}

/**
 * util-linux's setpriv sets PR_SET_PDEATHSIG before it execs the real command: the kernel then
 * kills the child when `sless dev` dies, even by SIGKILL, when no handler of ours gets to run.
 */
const SETPRIV = existsSync('/usr/bin/setpriv') ? '/usr/bin/setpriv' : undefined;

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

export class ChildGroup {
  readonly #live = new Set<GroupChild>();
  #closed = false;

  get size(): number {
    return this.#live.size;
  }

  /** True once stopping began: nothing is (re)started from then on. */
  get closed(): boolean {
    return this.#closed;
  }

  spawn(spec: CommandSpec, opts: SpawnOptions): GroupChild {
    if (this.#closed) throw new Error(`not starting ${opts.label}: sless dev is shutting down`);
    const [command, args] = SETPRIV
      ? [SETPRIV, ['--pdeathsig', 'KILL', '--', spec.command, ...spec.args]]
      : [spec.command, [...spec.args]];
    const proc = spawn(command, args, {
      cwd: spec.cwd,
      env: { ...spec.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let tail = '';
    let out = '';
    const keep = (text: string) => {
      tail = (tail + text).slice(-TAIL_BYTES);
    };
    // Runtimes log to stderr as a matter of course, so both streams are plain info lines.
    const logLines = (text: string) => {
      if (opts.quiet) return;
      for (const line of text.split('\n')) {
        if (line.trim()) opts.logger.info(`[${opts.label}] ${line}`);
      }
    };
    proc.stdout.setEncoding('utf8').on('data', (d: string) => {
      if (opts.captureStdout) out += d;
      else logLines(d);
      keep(d);
      opts.onOutput?.('stdout', d);
    });
    proc.stderr.setEncoding('utf8').on('data', (d: string) => {
      logLines(d);
      keep(d);
      opts.onOutput?.('stderr', d);
    });
    const exited = new Promise<ExitStatus>((resolve) => {
      proc.once('error', (err) => {
        keep(`\n${err.message}`);
        resolve({ code: 127, signal: null });
      });
      proc.once('exit', (code, signal) => resolve({ code, signal }));
    });
    const pid = proc.pid ?? -1;
    const child: GroupChild = {
      pid,
      exited,
      tail: () => tail,
      stdout: () => out,
      stop: async (graceMs = DEFAULT_GRACE_MS) => {
        if (pid > 0) killGroup(pid, 'SIGTERM');
        let timer: NodeJS.Timeout | undefined;
        const timedOut = await Promise.race([
          exited.then(() => false),
          new Promise<boolean>((r) => (timer = setTimeout(() => r(true), graceMs))),
        ]);
        clearTimeout(timer);
        // Also after a clean exit: grandchildren the leader left behind die with the group.
        if (pid > 0) killGroup(pid, 'SIGKILL');
        if (timedOut) await exited;
      },
    };
    this.#live.add(child);
    void exited.then(() => {
      if (pid > 0) killGroup(pid, 'SIGKILL');
      this.#live.delete(child);
    });
    return child;
  }

  /** Last resort on process exit (synchronous): SIGKILL to every live group. */
  killAllNow(): void {
    this.#closed = true;
    for (const c of this.#live) if (c.pid > 0) killGroup(c.pid, 'SIGKILL');
  }

  /** Refuses new children and stops every live one. */
  async stopAll(graceMs = DEFAULT_GRACE_MS): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#live].map((c) => c.stop(graceMs)));
  }
}
