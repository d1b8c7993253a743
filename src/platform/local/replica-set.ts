// The processes of one function version in `sless dev` (issue 29): zero or more runtime servers
// behind the proxy. Calls go round-robin over the healthy ones. Scaling in takes a process out of the
// rotation first, waits `drainMs` for calls that had just picked it, then sends SIGTERM with a grace
// of the function's timeout: the runtime finishes what it has in flight, so no call is cut short.
import type { ChildGroup, CommandSpec } from './child-group.ts';
import type { Logger } from './logger.ts';
import { SupervisedProcess, type ProcessOutput } from './supervised-process.ts';
import type { OutputPlace } from './start-failure.ts';

export interface ReplicaSetOptions {
  /** `namespace/name`, used in logs. */
  readonly label: string;
  readonly command: (port: number) => CommandSpec;
  readonly children: ChildGroup;
  readonly logger: Logger;
  readonly healthTimeoutMs?: number;
  /** Where the function's files are, so a start failure names them as in the repository. */
  readonly outputPlace?: OutputPlace;
  /** Where the processes' output goes (function-logs.ts). */
  readonly output?: ProcessOutput;
  /** Between leaving the rotation and SIGTERM. */
  readonly drainMs: number;
  /** How long a stopping process may finish its calls before SIGKILL (the function's timeout). */
  readonly stopGraceMs: number;
}

export class ReplicaSet {
  readonly #opts: ReplicaSetOptions;
  /** In the rotation once healthy (or starting, then not picked until ready). */
  readonly #members: SupervisedProcess[] = [];
  /** Starts under way, so a wake joins the one already starting. */
  readonly #starting = new Set<Promise<void>>();
  /** Processes out of the rotation, stopping. */
  readonly #leaving = new Set<Promise<void>>();
  #next = 0;
  #stopped = false;
  #lastStartError = '';

  constructor(opts: ReplicaSetOptions) {
    this.#opts = opts;
  }

  /** Processes that serve calls now. */
  get ready(): number {
    return this.#members.filter((p) => p.baseUrl !== undefined).length;
  }

  /** Processes in the rotation, starting ones included (what scaling counts). */
  get size(): number {
    return this.#members.length;
  }

  get starting(): boolean {
    return this.#starting.size > 0;
  }

  get lastStartError(): string {
    return this.#lastStartError;
  }

  /** Process ids of the members, for tests and logs. */
  get pids(): number[] {
    return this.#members.flatMap((p) => (p.pid === undefined ? [] : [p.pid]));
  }

  /** A healthy member's base URL, in turn; undefined when none is. */
  pick(): string | undefined {
    const n = this.#members.length;
    for (let i = 0; i < n; i++) {
      const p = this.#members[(this.#next + i) % n];
      const url = p?.baseUrl;
      if (url !== undefined) {
        this.#next = (this.#next + i + 1) % n;
        return url;
      }
    }
    return undefined;
  }

  /** Why no member serves, in a word (for 503 answers). */
  state(): string {
    if (this.#members.length === 0) return this.starting ? 'starting' : 'scaled to zero';
    const restarting = this.#members.find((p) => p.state === 'restarting');
    if (restarting && this.ready === 0) return `restarting after a crash (${restarting.lastError})`;
    return this.ready > 0 ? 'ready' : 'starting';
  }

  /** Starts one more member; resolves once it is healthy, rejects (and drops it) when it never is. */
  add(): Promise<void> {
    if (this.#stopped) return Promise.reject(new Error(`${this.#opts.label} is stopping`));
    const proc = new SupervisedProcess({
      label: this.#opts.label,
      command: this.#opts.command,
      children: this.#opts.children,
      logger: this.#opts.logger,
      healthTimeoutMs: this.#opts.healthTimeoutMs,
      ...(this.#opts.outputPlace ? { outputPlace: this.#opts.outputPlace } : {}),
      ...(this.#opts.output ? { output: this.#opts.output } : {}),
      // Calls may be held for this start: each poll saved is latency saved (a refused poll costs little).
      healthIntervalMs: 10,
    });
    this.#members.push(proc);
    const started: Promise<void> = proc
      .start()
      .then(() => {
        // Stopping began (or it was scaled away) while it started.
        if (this.#stopped || !this.#members.includes(proc)) void proc.stop();
      })
      .catch((err: unknown) => {
        this.#lastStartError = (err as Error).message;
        const i = this.#members.indexOf(proc);
        if (i >= 0) this.#members.splice(i, 1);
        throw err;
      })
      .finally(() => this.#starting.delete(started));
    this.#starting.add(started);
    return started;
  }

  /** At least one member serves: resolves at once, joins a start under way, or starts one. */
  async wake(): Promise<void> {
    if (this.ready > 0) return;
    const pending = [...this.#starting];
    if (pending.length > 0) {
      // The first start that succeeds is enough.
      await Promise.any(pending).catch(() => this.add());
      return;
    }
    await this.add();
  }

  /** Grows or shrinks to `n` members (starts in the background; failures are logged). */
  scaleTo(n: number): void {
    while (!this.#stopped && this.#members.length < n) {
      this.add().catch((err: unknown) => this.#opts.logger.warn(`${this.#opts.label}: a new process did not start: ${(err as Error).message}`));
    }
    while (this.#members.length > n) {
      // The newest leaves first: a starting one costs nothing to drop, and the oldest are warm.
      const proc = this.#members.pop() as SupervisedProcess;
      this.#retire(proc);
    }
    this.#next = 0;
  }

  #retire(proc: SupervisedProcess): void {
    const done: Promise<void> = new Promise<void>((r) => setTimeout(r, this.#opts.drainMs))
      .then(() => proc.stop(this.#opts.stopGraceMs))
      .finally(() => this.#leaving.delete(done));
    this.#leaving.add(done);
  }

  /** Every member leaves the rotation and stops (after the drain); resolves once all are gone. */
  async stop(drain = true): Promise<void> {
    this.#stopped = true;
    const members = this.#members.splice(0);
    if (drain) members.forEach((p) => this.#retire(p));
    else await Promise.all(members.map((p) => p.stop()));
    await Promise.all([...this.#leaving]);
  }
}
