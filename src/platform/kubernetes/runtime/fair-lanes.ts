// Round robin over groups: items of one group wait in their own lane and the lanes take turns, so one
// group with a thousand items (a large repository) delays another group's first item by at most one
// item per group ahead of it, not by a thousand. The queue and the upload pool of the controller use it.
export class FairLanes<T> {
  /** Insertion order is the turn order: a lane that gave an item moves to the end. */
  private readonly lanes = new Map<string, T[]>();
  private count = 0;

  push(group: string, item: T): void {
    const lane = this.lanes.get(group);
    if (lane) lane.push(item);
    else this.lanes.set(group, [item]);
    this.count++;
  }

  /** The next item in turn; undefined when every lane is empty. */
  shift(): T | undefined {
    const first = this.lanes.entries().next();
    if (first.done) return undefined;
    const [group, lane] = first.value;
    const item = lane.shift() as T;
    this.lanes.delete(group);
    if (lane.length > 0) this.lanes.set(group, lane);
    this.count--;
    return item;
  }

  get size(): number {
    return this.count;
  }

  /** Groups with waiting items. */
  get groups(): number {
    return this.lanes.size;
  }

  clear(): void {
    this.lanes.clear();
    this.count = 0;
  }
}

/** At most `concurrency` tasks at once, taken from the groups' lanes in turn. */
export class FairPool {
  private readonly waiting = new FairLanes<() => void>();
  private running = 0;
  private idle: Array<() => void> = [];

  constructor(readonly concurrency: number) {
    if (!(concurrency >= 1)) throw new Error(`FairPool concurrency must be at least 1, got ${concurrency}`);
  }

  add<T>(group: string, task: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push(group, () => {
        this.running++;
        task()
          .then(resolve, reject)
          .finally(() => {
            this.running--;
            this.pump();
          });
      });
      this.pump();
    });
  }

  /** Tasks waiting or running. */
  get size(): number {
    return this.waiting.size + this.running;
  }

  /** Resolves when nothing waits or runs. */
  onIdle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency) {
      const start = this.waiting.shift();
      if (!start) break;
      start();
    }
    if (this.size === 0) {
      const idle = this.idle;
      this.idle = [];
      for (const r of idle) r();
    }
  }
}
