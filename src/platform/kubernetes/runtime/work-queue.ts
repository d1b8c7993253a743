// A keyed work queue in the style of client-go's workqueue: a key is never handled twice at once; adding a
// key while it runs gives exactly one more run after it (so a push during a sync is never lost); failures
// retry with exponential backoff; a handler may ask to run again after a delay (spec.interval). Waiting keys
// take turns by group (groupOf: the repository or namespace of the object), so one large repository
// cannot delay the others: the pool runs anonymous turns, each picks the next key round robin.
import type PQueue from 'p-queue';
import { FairLanes } from './fair-lanes.ts';
import { backoffDelay, realTimers, type Timers } from './timers.ts';

export interface HandlerResult {
  /** Run this key again after this many ms (e.g. the repository's interval). */
  readonly requeueAfterMs?: number;
}

export interface WorkQueueOptions {
  readonly name: string;
  readonly handler: (key: string) => Promise<HandlerResult | void>;
  /** Bounds concurrency; may be shared by several queues. */
  readonly pool: PQueue;
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number };
  readonly timers?: Timers;
  readonly onError?: (key: string, err: unknown, retryInMs: number) => void;
  readonly onDepth?: (name: string, depth: number) => void;
  /** The fairness group of a key (default: one group, i.e. first come first served). */
  readonly groupOf?: (key: string) => string;
}

type KeyState = 'queued' | 'running' | 'dirty';

export class WorkQueue {
  private readonly state = new Map<string, KeyState>();
  private readonly delayed = new Map<string, { at: number; cancel: () => void }>();
  private readonly failures = new Map<string, number>();
  /** Queued keys by group; each key here has one turn waiting in the pool. */
  private readonly ready = new FairLanes<string>();
  private readonly timers: Timers;
  private stopped = false;

  constructor(private readonly opts: WorkQueueOptions) {
    this.timers = opts.timers ?? realTimers;
  }

  /** Schedules a run of key, now or after delayMs; coalesces with a run already pending. */
  add(key: string, delayMs = 0): void {
    if (this.stopped) return;
    if (delayMs > 0) return this.addLater(key, delayMs);
    const current = this.state.get(key);
    if (current === 'queued' || current === 'dirty') return;
    if (current === 'running') {
      this.state.set(key, 'dirty');
      return;
    }
    this.cancelDelayed(key);
    this.state.set(key, 'queued');
    this.report();
    this.ready.push(this.opts.groupOf?.(key) ?? '', key);
    void this.opts.pool.add(() => this.turn());
  }

  /** Keys waiting or running. */
  depth(): number {
    return this.state.size;
  }

  isBusy(key: string): boolean {
    return this.state.has(key);
  }

  /** Stops taking work and cancels delayed runs; running handlers finish on their own. */
  stop(): void {
    this.stopped = true;
    for (const d of this.delayed.values()) d.cancel();
    this.delayed.clear();
  }

  private addLater(key: string, delayMs: number): void {
    const at = this.timers.now() + delayMs;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.timers.after(delayMs, () => {
      this.delayed.delete(key);
      this.add(key);
    });
    this.delayed.set(key, { at, cancel });
  }

  private cancelDelayed(key: string): void {
    this.delayed.get(key)?.cancel();
    this.delayed.delete(key);
  }

  /** One turn of the pool: the next queued key in round-robin order. */
  private async turn(): Promise<void> {
    const key = this.ready.shift();
    if (key !== undefined) await this.run(key);
  }

  private async run(key: string): Promise<void> {
    if (this.stopped) {
      this.state.delete(key);
      return;
    }
    this.state.set(key, 'running');
    let retryIn: number | undefined;
    try {
      const result = await this.opts.handler(key);
      this.failures.delete(key);
      retryIn = result?.requeueAfterMs;
    } catch (err) {
      const attempt = (this.failures.get(key) ?? 0) + 1;
      this.failures.set(key, attempt);
      const { baseMs, maxMs } = this.opts.backoff ?? { baseMs: 500, maxMs: 5 * 60_000 };
      retryIn = backoffDelay(attempt, baseMs, maxMs);
      this.opts.onError?.(key, err, retryIn);
    }
    const dirty = this.state.get(key) === 'dirty';
    this.state.delete(key);
    this.report();
    if (dirty) this.add(key);
    if (retryIn !== undefined && retryIn > 0) this.add(key, retryIn);
  }

  private report(): void {
    this.opts.onDepth?.(this.opts.name, this.state.size);
  }
}
