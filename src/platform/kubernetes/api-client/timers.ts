// Injectable time, so queue backoff and informer restarts are testable without waiting.
export interface Timers {
  now(): number;
  /** Calls fn after ms; returns a cancel function. */
  after(ms: number, fn: () => void): () => void;
}

export const realTimers: Timers = {
  now: () => Date.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return () => clearTimeout(t);
  },
};

/** Exponential backoff: base * 2^(attempt-1), capped at max. attempt starts at 1. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, Math.min(attempt - 1, 30)));
}
