// How an API server failure reads to a /v1 client: the platform's error codes (pure).
import { ApiException } from '@kubernetes/client-node';
import { PlatformError } from '../types.ts';

interface Status {
  reason?: string;
  message?: string;
}

function statusOf(err: ApiException<unknown>): Status {
  const body = err.body;
  if (body && typeof body === 'object') return body as Status;
  try {
    return JSON.parse(String(body)) as Status;
  } catch {
    return {};
  }
}

/** The HTTP status of an API server answer, or undefined when there was no answer (connection failed). */
export function apiStatusCode(err: unknown): number | undefined {
  return err instanceof ApiException ? err.code : undefined;
}

/**
 * Maps `err` (from a call about `what`, e.g. "function ns/name") to a PlatformError:
 * 404 not_found, 409 AlreadyExists already_exists, 400/422 invalid with the server's message, anything
 * else (conflicts, refusals, 5xx, no connection) unavailable.
 */
export function toPlatformError(err: unknown, what: string): PlatformError {
  if (err instanceof PlatformError) return err;
  if (!(err instanceof ApiException)) {
    const detail = err instanceof Error ? err.message : String(err);
    return new PlatformError('unavailable', `cannot reach the Kubernetes API server for ${what}: ${detail}; retry later`, { cause: err });
  }
  const status = statusOf(err);
  const detail = status.message ?? `HTTP ${err.code}`;
  switch (err.code) {
    case 404:
      return new PlatformError('not_found', `${what} does not exist`, { cause: err });
    case 409:
      return status.reason === 'AlreadyExists'
        ? new PlatformError('already_exists', `${what} already exists`, { cause: err })
        : new PlatformError('unavailable', `${what} was changed by someone else at the same time (${detail}); retry`, { cause: err });
    case 400:
    case 422:
      return new PlatformError('invalid', `${what} was refused by the API server: ${detail}`, { cause: err });
    case 401:
    case 403:
      return new PlatformError('unavailable', `the controller may not do this for ${what} (${detail}); check its RBAC (deploy/base/rbac.yaml)`, { cause: err });
    default:
      return new PlatformError('unavailable', `the Kubernetes API server failed for ${what}: ${detail}; retry later`, { cause: err });
  }
}
