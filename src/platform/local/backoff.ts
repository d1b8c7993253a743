// Crash-restart delays: doubling from `baseMs`, capped at `maxMs`. Pure, so the schedule is testable.
export interface BackoffOptions {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 500, maxMs: 30_000 };

/** Delay before restart number `attempt` (0 = the first restart after a crash). */
export function backoffDelay(attempt: number, opts: BackoffOptions = DEFAULT_BACKOFF): number {
  const exp = Math.min(Math.max(attempt, 0), 30);
  return Math.min(opts.baseMs * 2 ** exp, opts.maxMs);
}
