// Manual clock for tests: time moves only when advance() is called.
import type { Timers } from './timers.ts';

export class FakeTimers implements Timers {
  private t = 0;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  after(ms: number, fn: () => void): () => void {
    const id = ++this.seq;
    this.pending.set(id, { at: this.t + ms, fn });
    return () => this.pending.delete(id);
  }

  /** Moves time forward, firing due callbacks in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, p]) => p.at <= end).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.t = due[1].at;
      due[1].fn();
    }
    this.t = end;
  }

  /** Delays still pending, for assertions. */
  scheduled(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.t).sort((a, b) => a - b);
  }
}
