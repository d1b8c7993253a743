// Typed failures of a git sync. `reason` decides what the caller does (Flux style): `auth`,
// `not-found`, `not-git`, `branch-not-found` need a user's fix (stall, do not hammer the server);
// `unreachable` and `fetch-failed` are retried on the next interval; `refused` (a target the TargetPolicy
// does not admit) and `too-large` (past the fetch size limit) need a user's or the operator's change too.
// Messages name the repository URL without credentials and say what to do; a refusal never carries
// anything the target answered.
import { FetchTooLargeError } from './git-http.ts';
import { TargetRefusedError } from './target-policy.ts';

export const GIT_SOURCE_ERROR_REASONS = ['auth', 'not-found', 'not-git', 'branch-not-found', 'refused', 'too-large', 'unreachable', 'fetch-failed'] as const;
export type GitSourceErrorReason = (typeof GIT_SOURCE_ERROR_REASONS)[number];

export class GitSourceError extends Error {
  constructor(
    readonly reason: GitSourceErrorReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'GitSourceError';
  }

  /** True when retrying later without any change may succeed. */
  get retryable(): boolean {
    return this.reason === 'unreachable' || this.reason === 'fetch-failed';
  }
}

/** The URL with any user name, password or token removed, safe for logs and status messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}

/** The first error of `type` in `err`, its causes and AggregateError members. */
function causeOf<T extends Error>(err: unknown, type: new (...args: never[]) => T, depth = 0): T | undefined {
  if (!err || typeof err !== 'object' || depth > 6) return undefined;
  if (err instanceof type) return err;
  const members = (err as { errors?: unknown }).errors;
  const inner = Array.isArray(members) ? members.map((m) => causeOf(m, type, depth + 1)).find(Boolean) : undefined;
  return inner ?? causeOf((err as { cause?: unknown }).cause, type, depth + 1);
}

interface ErrorShape {
  code?: unknown;
  data?: { statusCode?: unknown };
  cause?: unknown;
  message?: unknown;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

function networkCode(err: unknown): string | undefined {
  for (let e = err as ErrorShape | undefined, i = 0; e && i < 5; e = e.cause as ErrorShape | undefined, i++) {
    if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return e.code;
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) {
      const inner = errors.map(networkCode).find(Boolean);
      if (inner) return inner;
    }
  }
  return undefined;
}

/** Maps an isomorphic-git / network failure to a GitSourceError for `url` (already redacted). */
export function classifyGitError(err: unknown, url: string, stage: string): GitSourceError {
  if (err instanceof GitSourceError) return err;
  const refusal = causeOf(err, TargetRefusedError);
  if (refusal) return new GitSourceError('refused', `git ${stage} of ${url} refused: ${refusal.message}`, { cause: err });
  const tooLarge = causeOf(err, FetchTooLargeError);
  if (tooLarge) {
    return new GitSourceError(
      'too-large',
      `git ${stage} of ${url} stopped: ${tooLarge.message} (the limit per repository is SLESS_GIT_MAX_FETCH_BYTES); make the repository or spec.path smaller, or ask the operator to raise it`,
      { cause: err },
    );
  }
  const e = (err ?? {}) as ErrorShape;
  const status = e.code === 'HttpError' && typeof e.data?.statusCode === 'number' ? e.data.statusCode : undefined;
  if (status === 401 || status === 403) {
    return new GitSourceError(
      'auth',
      `git ${stage} of ${url} was refused (HTTP ${status}): the credentials are missing or wrong, or lack read access; check the repository's secretRef (token, or username + password)`,
      { cause: err },
    );
  }
  if (status === 404) {
    return new GitSourceError('not-found', `git ${stage} of ${url}: no repository at this URL (HTTP 404); check spec.url, or the credentials if the repository is private`, { cause: err });
  }
  if (status !== undefined && status >= 500) {
    return new GitSourceError('unreachable', `git ${stage} of ${url}: the server answered HTTP ${status}; will retry`, { cause: err });
  }
  if (status !== undefined) {
    return new GitSourceError('not-git', `git ${stage} of ${url}: unexpected HTTP ${status}; is this a git repository URL?`, { cause: err });
  }
  const net = networkCode(err);
  if (net) {
    return new GitSourceError('unreachable', `git ${stage} of ${url}: the server cannot be reached (${net}); check the URL and network, will retry`, { cause: err });
  }
  if (e.code === 'SmartHttpError' || e.code === 'ParseError' || e.code === 'EmptyServerResponseError' || e.code === 'UnknownTransportError') {
    return new GitSourceError(
      'not-git',
      `git ${stage} of ${url}: the server did not answer as a git smart-HTTP server; check that spec.url is the repository's clone URL (usually ending in .git)`,
      { cause: err },
    );
  }
  const detail = typeof e.message === 'string' ? e.message.replaceAll(/\/\/[^@/\s]*@/g, '//') : String(err);
  return new GitSourceError('fetch-failed', `git ${stage} of ${url} failed: ${detail}`, { cause: err });
}
