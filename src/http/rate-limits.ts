// Fair shares on the shared HTTP surface (issue 11 item 5): @fastify/rate-limit in front of /v1 (per
// token subject: a tenant's namespace, or the admin's subject) and /hooks (per repository), so one
// tenant's flood answers 429 + Retry-After to that tenant only. /v1 also counts each bearer token as
// sent, before it is verified: a flood repeating one token (valid or forged) is refused past the limit
// without a signature check or a log line per request. That key is the token itself (hashed), so nobody
// spends another's allowance without holding their token. Counters live in each replica's memory:
// with N replicas behind a load balancer a key gets up to N times the limit.
import { createHash } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { HttpError } from './errors.ts';

export interface RateLimits {
  /** /v1 requests per minute per token subject. */
  readonly v1PerMinute: number;
  /** /hooks deliveries per minute per repository. */
  readonly hooksPerMinute: number;
}

const MINUTE_MS = 60_000;

/** /v1: the caller the api plugin's onRequest hook verified (so this runs at preHandler); the address before that. */
export function v1Key(request: FastifyRequest): string {
  const caller = request.caller;
  if (!caller) return `ip:${request.ip}`;
  return caller.admin ? `admin:${caller.subject}` : `ns:${caller.namespace}`;
}

/** /v1 before verification: the bearer token as sent (a digest, so the limiter's memory holds no token); the address without one. */
export function tokenKey(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header) return `ip:${request.ip}`;
  return `token:${createHash('sha256').update(header).digest('base64url').slice(0, 22)}`;
}

/** /hooks: the repository the delivery is for. */
export function hooksKey(request: FastifyRequest): string {
  const p = request.params as { namespace?: string; repository?: string };
  return `repo:${p.namespace ?? ''}/${p.repository ?? ''}`;
}

interface LimitOptions {
  readonly max: number;
  readonly key: (request: FastifyRequest) => string;
  readonly what: string;
  /** Who the limit is for, in the 429's message. */
  readonly whom?: (request: FastifyRequest) => string;
}

/**
 * Registers the limiter in `scope` (an encapsulated context): every route registered after it in that
 * scope is limited, in that route's `hook` (a route's hooks run after the scope's own hooks of the same kind).
 */
export async function limitRequests(
  scope: FastifyInstance,
  opts: LimitOptions & { readonly hook: 'onRequest' | 'preHandler' },
): Promise<void> {
  await scope.register(rateLimit, { global: true, hook: opts.hook, ...limiterOptions(opts) });
}

/**
 * Registers the limiter as `scope`'s own onRequest hook: it runs before the onRequest hooks of the plugins
 * registered after it (the api plugin's token check), which a route's limit (limitRequests) does not.
 */
export async function limitFirst(scope: FastifyInstance, opts: LimitOptions): Promise<void> {
  await scope.register(rateLimit, { global: false, ...limiterOptions(opts) });
  scope.addHook('onRequest', scope.rateLimit());
}

function limiterOptions(opts: LimitOptions) {
  const whom = opts.whom ?? ((request: FastifyRequest) => opts.key(request).replace(/^[a-z]+:/, ''));
  return {
    max: opts.max,
    timeWindow: MINUTE_MS,
    keyGenerator: opts.key,
    errorResponseBuilder: (request: FastifyRequest, ctx: { max: number; ttl: number }) =>
      new HttpError(
        'too_many_requests',
        `rate limit: at most ${ctx.max} ${opts.what} per minute for ${whom(request)}; retry in ${Math.max(1, Math.ceil(ctx.ttl / 1000))} s`,
        {
          retryAfterSec: Math.max(1, Math.ceil(ctx.ttl / 1000)),
        },
      ),
  };
}
