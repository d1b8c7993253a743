// The queue between where a function's lines come from (a `sless dev` process, a pod's log stream) and
// the one client reading them (/v1 .../logs, the console's live tail). Bounded in bytes: a source that
// can wait (a pod log stream: the API server then holds the rest) awaits room with `put`; one that must
// not stall (a process writing its output) `offer`s, and what does not fit is dropped and counted, then
// said in one line of stream `output` so the reader knows lines are missing. Ends when the reader's
// signal aborts, or `end` (every source is done and nothing more can come).
import type { LogLine } from './types.ts';

/** What one follower may hold unread before sources wait (kube) or lines are dropped (dev). */
export const DEFAULT_LOG_QUEUE_BYTES = 256 * 1024;

export function lineBytes(line: LogLine): number {
  // Close enough for a bound: the line and its labels, as the JSON will carry them.
  return line.line.length + line.replica.length + 64;
}

export class LogQueue implements AsyncIterable<LogLine> {
  readonly #maxBytes: number;
  readonly #signal: AbortSignal;
  readonly #lines: LogLine[] = [];
  #bytes = 0;
  #dropped = 0;
  #ended = false;
  #error: unknown;
  /** The reader waiting for a line. */
  #wakeReader: (() => void) | undefined;
  /** Sources waiting for room. */
  readonly #waitingForRoom: Array<() => void> = [];

  constructor(maxBytes: number, signal: AbortSignal) {
    this.#maxBytes = maxBytes;
    this.#signal = signal;
    signal.addEventListener('abort', () => this.end(), { once: true });
  }

  get closed(): boolean {
    return this.#ended || this.#signal.aborted;
  }

  /** Adds a line when there is room; otherwise drops it (counted, reported to the reader). */
  offer(line: LogLine): void {
    if (this.closed) return;
    if (this.#bytes + lineBytes(line) > this.#maxBytes) {
      this.#dropped++;
      return;
    }
    this.#add(line);
  }

  /** Adds a line, first waiting while the queue is full; resolves at once (dropping it) once closed. */
  async put(line: LogLine): Promise<void> {
    while (!this.closed && this.#lines.length > 0 && this.#bytes + lineBytes(line) > this.#maxBytes) {
      await new Promise<void>((resolve) => this.#waitingForRoom.push(resolve));
    }
    if (!this.closed) this.#add(line);
  }

  /** No more lines will come (an error: the reader's loop throws it after the lines already queued). */
  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#wake();
  }

  #add(line: LogLine): void {
    this.#lines.push(line);
    this.#bytes += lineBytes(line);
    this.#wakeReader?.();
  }

  #wake(): void {
    this.#wakeReader?.();
    for (const resolve of this.#waitingForRoom.splice(0)) resolve();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<LogLine> {
    for (;;) {
      if (this.#dropped > 0) {
        const n = this.#dropped;
        this.#dropped = 0;
        yield { time: new Date().toISOString(), replica: 'sless', stream: 'output', line: `${n} line(s) dropped: the reader fell behind the function's output` };
      }
      const line = this.#lines.shift();
      if (line) {
        this.#bytes -= lineBytes(line);
        for (const resolve of this.#waitingForRoom.splice(0)) resolve();
        yield line;
        continue;
      }
      if (this.#signal.aborted) return;
      if (this.#ended) {
        if (this.#error !== undefined) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wakeReader = resolve));
      this.#wakeReader = undefined;
    }
  }
}

/** Lines already read (a read without follow), as the platform port hands them out. */
export async function* asyncLines(lines: readonly LogLine[]): AsyncIterable<LogLine> {
  yield* lines;
}
