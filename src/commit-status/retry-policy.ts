// Whether a commit status that could not be posted is tried again, and when. Pure.

export interface RetrySettings {
  readonly baseMs: number;
  readonly maxMs: number;
  /** Attempts in all, the first included. */
  readonly attempts: number;
}

export const DEFAULT_RETRY: RetrySettings = { baseMs: 1000, maxMs: 60_000, attempts: 10 };

export type RetryDecision = { readonly kind: 'retry'; readonly delayMs: number } | { readonly kind: 'drop'; readonly hint: string };

/** `status` is undefined when no answer came (connection refused, timeout). */
export function decideRetry(status: number | undefined, attempts: number, settings: RetrySettings = DEFAULT_RETRY): RetryDecision {
  if (status === 401 || status === 403) {
    return { kind: 'drop', hint: 'the token may not write commit statuses (Gitea: write:repository; GitHub: statuses: write; GitLab: api)' };
  }
  if (status === 404) return { kind: 'drop', hint: 'the repository or commit is unknown to the API, or the token cannot see it' };
  if (status !== undefined && status >= 400 && status < 500 && status !== 408 && status !== 429) {
    return { kind: 'drop', hint: 'the server refused the status itself; retrying will not help' };
  }
  if (attempts >= settings.attempts) return { kind: 'drop', hint: `gave up after ${attempts} attempts` };
  return { kind: 'retry', delayMs: Math.min(settings.maxMs, settings.baseMs * 2 ** (attempts - 1)) };
}
