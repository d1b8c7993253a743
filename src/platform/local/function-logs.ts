// What `sless dev`'s function processes printed (issue 33): a bounded ring buffer per function (lines
// and bytes; a long line is cut), fed by child-group.ts as output arrives, read by /v1 .../logs and the
// console. Followers get the backlog, then each new line through their own bounded LogQueue, so a slow
// reader never holds a process up (its lines are dropped and counted instead).
import { asyncLines, DEFAULT_LOG_QUEUE_BYTES, LogQueue, lineBytes } from '../log-queue.ts';
import type { LogLine, LogQuery, LogStream } from '../types.ts';

export interface LogBufferLimits {
  /** Lines kept per function. */
  readonly lines: number;
  /** Bytes kept per function (the oldest lines go first). */
  readonly bytes: number;
  /** A longer line is cut to this many characters (and says so). */
  readonly lineChars: number;
}

export const DEFAULT_LOG_BUFFER: LogBufferLimits = { lines: 2000, bytes: 512 * 1024, lineChars: 8 * 1024 };

interface Ring {
  readonly lines: LogLine[];
  bytes: number;
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

export class FunctionLogs {
  readonly #limits: LogBufferLimits;
  readonly #now: () => Date;
  readonly #rings = new Map<string, Ring>();
  /** The unfinished last line of each function's replica and stream. */
  readonly #partial = new Map<string, string>();
  readonly #followers = new Map<string, Set<LogQueue>>();

  constructor(limits: LogBufferLimits = DEFAULT_LOG_BUFFER, now: () => Date = () => new Date()) {
    this.#limits = limits;
    this.#now = now;
  }

  /** Output as it arrives from a process: whole lines are kept, a trailing part waits for its newline. */
  write(namespace: string, name: string, replica: string, stream: LogStream, text: string): void {
    const partKey = `${keyOf(namespace, name)}\n${replica}\n${stream}`;
    const parts = ((this.#partial.get(partKey) ?? '') + text).split('\n');
    const rest = parts.pop() ?? '';
    for (const line of parts) this.#keep(namespace, name, replica, stream, line.replace(/\r$/, ''));
    // An endless line without a newline is cut rather than held forever.
    if (rest.length > this.#limits.lineChars) {
      this.#keep(namespace, name, replica, stream, rest);
      this.#partial.delete(partKey);
    } else if (rest) this.#partial.set(partKey, rest);
    else this.#partial.delete(partKey);
  }

  /** The process ended: its unfinished lines are kept as they are. */
  flush(namespace: string, name: string, replica: string): void {
    for (const stream of ['stdout', 'stderr'] as const) {
      const partKey = `${keyOf(namespace, name)}\n${replica}\n${stream}`;
      const rest = this.#partial.get(partKey);
      this.#partial.delete(partKey);
      if (rest) this.#keep(namespace, name, replica, stream, rest);
    }
  }

  /** The function is gone: its lines go too (followers stop). */
  forget(namespace: string, name: string): void {
    const key = keyOf(namespace, name);
    this.#rings.delete(key);
    for (const k of [...this.#partial.keys()]) if (k.startsWith(`${key}\n`)) this.#partial.delete(k);
    for (const q of this.#followers.get(key) ?? []) q.end();
    this.#followers.delete(key);
  }

  /** The kept lines that match `sinceMs` and `tail`, oldest first. */
  lines(namespace: string, name: string, query: Pick<LogQuery, 'sinceMs' | 'tail'>): LogLine[] {
    const all = this.#rings.get(keyOf(namespace, name))?.lines ?? [];
    const since = query.sinceMs;
    const recent = since === undefined ? all : all.filter((l) => Date.parse(l.time) >= since);
    return query.tail === undefined ? [...recent] : recent.slice(Math.max(0, recent.length - query.tail));
  }

  /** The backlog, then (with `follow`) each new line until the signal aborts. */
  read(namespace: string, name: string, query: LogQuery, maxBytes = DEFAULT_LOG_QUEUE_BYTES): AsyncIterable<LogLine> {
    const backlog = this.lines(namespace, name, query);
    if (!query.follow) return asyncLines(backlog);
    const queue = new LogQueue(maxBytes, query.signal);
    for (const line of backlog) queue.offer(line);
    const key = keyOf(namespace, name);
    let set = this.#followers.get(key);
    if (!set) this.#followers.set(key, (set = new Set()));
    set.add(queue);
    query.signal.addEventListener('abort', () => {
      const followers = this.#followers.get(key);
      followers?.delete(queue);
      if (followers?.size === 0) this.#followers.delete(key);
    }, { once: true });
    return queue;
  }

  /** Followers now (tests). */
  followers(namespace: string, name: string): number {
    return this.#followers.get(keyOf(namespace, name))?.size ?? 0;
  }

  #keep(namespace: string, name: string, replica: string, stream: LogStream, text: string): void {
    const cut = text.length > this.#limits.lineChars ? `${text.slice(0, this.#limits.lineChars)} [cut: ${text.length} characters]` : text;
    const line: LogLine = { time: this.#now().toISOString(), replica, stream, line: cut };
    const key = keyOf(namespace, name);
    let ring = this.#rings.get(key);
    if (!ring) this.#rings.set(key, (ring = { lines: [], bytes: 0 }));
    ring.lines.push(line);
    ring.bytes += lineBytes(line);
    while (ring.lines.length > this.#limits.lines || (ring.bytes > this.#limits.bytes && ring.lines.length > 1)) {
      const old = ring.lines.shift() as LogLine;
      ring.bytes -= lineBytes(old);
    }
    for (const q of this.#followers.get(key) ?? []) q.offer(line);
  }
}
