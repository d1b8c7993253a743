// One running version of a function: a runtime server child on a free loopback port, checked via
// /health, restarted with capped exponential backoff when it crashes, stopped on request.
// `baseUrl` is set only while a healthy process serves it; the proxy reads it per request.
import { backoffDelay, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.ts';
import type { ChildGroup, CommandSpec, GroupChild } from './child-group.ts';
import { findFreePort } from './free-port.ts';
import type { Logger } from './logger.ts';
import { startFailureText, type OutputPlace } from './start-failure.ts';
import { waitForHealth } from './wait-for-health.ts';

export interface SupervisedProcessOptions {
  /** `namespace/name`, used in logs. */
  readonly label: string;
  /** The command that serves the function on `port`. */
  readonly command: (port: number) => CommandSpec;
  readonly children: ChildGroup;
  readonly logger: Logger;
  readonly healthTimeoutMs?: number;
  /** Between two /health polls while it starts (default 50 ms; a wake polls faster: a call waits). */
  readonly healthIntervalMs?: number;
  readonly backoff?: BackoffOptions;
  /** A process that stayed up this long starts the backoff over. */
  readonly stableAfterMs?: number;
  /** Where the function's files are and how the user knows them, for the failure messages. */
  readonly outputPlace?: OutputPlace;
  /** The process's output as it arrives, with the replica it came from (`pid-<n>`); `ended` once it exited. */
  readonly output?: ProcessOutput;
}

/** Where a function's processes send their output (function-logs.ts). */
export interface ProcessOutput {
  write(replica: string, stream: 'stdout' | 'stderr', text: string): void;
  ended(replica: string): void;
}

export type ProcessState = 'starting' | 'ready' | 'restarting' | 'stopped';

export class SupervisedProcess {
  readonly #opts: SupervisedProcessOptions;
  #child: GroupChild | undefined;
  #baseUrl: string | undefined;
  #state: ProcessState = 'starting';
  #restarts = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #lastError = '';

  constructor(opts: SupervisedProcessOptions) {
    this.#opts = opts;
  }

  get baseUrl(): string | undefined {
    return this.#state === 'ready' ? this.#baseUrl : undefined;
  }
  get state(): ProcessState {
    return this.#state;
  }
  get pid(): number | undefined {
    return this.#child?.pid;
  }
  get lastError(): string {
    return this.#lastError;
  }

  /** First start: resolves once healthy; rejects (and cleans up) when it never gets there. */
  async start(): Promise<void> {
    try {
      await this.#launch();
    } catch (err) {
      this.#state = 'stopped';
      throw err;
    }
  }

  async stop(graceMs?: number): Promise<void> {
    this.#state = 'stopped';
    clearTimeout(this.#restartTimer);
    await this.#child?.stop(graceMs);
  }

  async #launch(): Promise<void> {
    const port = await findFreePort();
    const output = this.#opts.output;
    let replica = '';
    const child = this.#opts.children.spawn(this.#opts.command(port), {
      label: this.#opts.label,
      logger: this.#opts.logger,
      ...(output ? { onOutput: (stream: 'stdout' | 'stderr', text: string) => output.write(replica, stream, text) } : {}),
    });
    replica = `pid-${child.pid}`;
    if (output) void child.exited.then(() => output.ended(replica));
    this.#child = child;
    const baseUrl = `http://127.0.0.1:${port}`;
    try {
      await waitForHealth(baseUrl, {
        timeoutMs: this.#opts.healthTimeoutMs ?? 30_000,
        exited: child.exited,
        ...(this.#opts.healthIntervalMs === undefined ? {} : { intervalMs: this.#opts.healthIntervalMs }),
      });
    } catch (err) {
      await child.stop(500);
      const tail = startFailureText(child.tail(), this.#opts.outputPlace);
      this.#lastError = `${(err as Error).message}${tail ? `: ${tail}` : ''}`;
      throw new Error(`${this.#opts.label} did not start: ${this.#lastError}`, { cause: err });
    }
    if (this.#state === 'stopped') {
      await child.stop();
      return;
    }
    this.#baseUrl = baseUrl;
    this.#state = 'ready';
    const startedAt = Date.now();
    void child.exited.then((status) => {
      if (this.#state === 'stopped' || this.#child !== child) return;
      if (Date.now() - startedAt > (this.#opts.stableAfterMs ?? 30_000)) this.#restarts = 0;
      const tail = startFailureText(child.tail(), this.#opts.outputPlace).split('\n').slice(-3).join(' | ');
      this.#lastError = `exited with ${status.code ?? status.signal}${tail ? `: ${tail}` : ''}`;
      this.#scheduleRestart();
    });
  }

  #scheduleRestart(): void {
    // Stopping began (the group refuses new children): a crash or a kill now is the end, not a restart.
    if (this.#opts.children.closed) this.#state = 'stopped';
    if (this.#state === 'stopped') return;
    this.#state = 'restarting';
    const delay = backoffDelay(this.#restarts++, this.#opts.backoff ?? DEFAULT_BACKOFF);
    this.#opts.logger.warn(`${this.#opts.label} ${this.#lastError}; restarting in ${delay} ms (restart ${this.#restarts})`);
    this.#restartTimer = setTimeout(() => {
      if (this.#opts.children.closed) this.#state = 'stopped';
      if (this.#state === 'stopped') return;
      this.#launch().then(
        () => this.#opts.logger.info(`${this.#opts.label} restarted (pid ${this.#child?.pid})`),
        () => this.#scheduleRestart(),
      );
    }, delay);
  }
}
