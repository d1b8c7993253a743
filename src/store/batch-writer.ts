// Collects records in memory and writes them in batches off the request path. Bounded: when the
// queue is full, or a batch cannot be written (database down), the records are dropped and counted,
// never retried into an ever-growing backlog. record() never blocks and never throws.
export interface BatchWriterOptions<T> {
  /** Writes one batch; a rejection drops the batch. */
  readonly write: (batch: T[]) => Promise<void>;
  readonly onDrop: (count: number, reason: 'queue_full' | 'write_failed') => void;
  readonly onWriteError?: (err: unknown, count: number) => void;
  /** Flush at least this often (ms). Default 200. */
  readonly flushIntervalMs?: number;
  /** Flush as soon as this many are queued, and never write more at once. Default 500. */
  readonly batchSize?: number;
  /** Queue bound. Default 10,000. */
  readonly maxQueue?: number;
}

export class BatchWriter<T> {
  readonly #opts: Required<Omit<BatchWriterOptions<T>, 'onWriteError'>> & Pick<BatchWriterOptions<T>, 'onWriteError'>;
  #queue: T[] = [];
  #flushing: Promise<void> | undefined;
  #soon = false;
  readonly #timer: NodeJS.Timeout;

  constructor(options: BatchWriterOptions<T>) {
    this.#opts = { flushIntervalMs: 200, batchSize: 500, maxQueue: 10_000, ...options };
    this.#timer = setInterval(() => void this.flush(), this.#opts.flushIntervalMs);
    this.#timer.unref();
  }

  get queued(): number {
    return this.#queue.length;
  }

  record(entry: T): void {
    if (this.#queue.length >= this.#opts.maxQueue) {
      this.#opts.onDrop(1, 'queue_full');
      return;
    }
    this.#queue.push(entry);
    if (this.#queue.length >= this.#opts.batchSize && !this.#soon) {
      this.#soon = true;
      setImmediate(() => {
        this.#soon = false;
        void this.flush();
      });
    }
  }

  /** Writes what is queued, one batch at a time; resolves when the queue was empty once. */
  flush(): Promise<void> {
    this.#flushing ??= this.#drain().finally(() => {
      this.#flushing = undefined;
    });
    return this.#flushing;
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) {
      const batch = this.#queue.splice(0, this.#opts.batchSize);
      try {
        await this.#opts.write(batch);
      } catch (err) {
        this.#opts.onDrop(batch.length, 'write_failed');
        this.#opts.onWriteError?.(err, batch.length);
        return;
      }
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.flush();
  }
}
