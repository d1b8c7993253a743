// Fair shares on the shared HTTP surface (issue 11 item 5): @fastify/rate-limit in front of /v1 (per
// token subject: a tenant's namespace, or the admin's subject) and /hooks (per repository), so one
// tenant's flood answers 429 + Retry-After to that tenant only. Counters live in each replica's memory:
// with N replicas behind a load balancer a key gets up to N times the limit.
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

/** /hooks: the repository the delivery is for. */
export function hooksKey(request: FastifyRequest): string {
  const p = request.params as { namespace?: string; repository?: string };
  return `repo:${p.namespace ?? ''}/${p.repository ?? ''}`;
}

/** Registers the limiter in `scope` (an encapsulated context): every route registered after it in that scope is limited. */
export async function limitRequests(
  scope: FastifyInstance,
  opts: { readonly max: number; readonly key: (request: FastifyRequest) => string; readonly what: string; readonly hook: 'onRequest' | 'preHandler' },
): Promise<void> {
  await scope.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: MINUTE_MS,
    hook: opts.hook,
    keyGenerator: opts.key,
    errorResponseBuilder: (request, ctx) =>
      new HttpError(
        'too_many_requests',
        `rate limit: at most ${ctx.max} ${opts.what} per minute for ${opts.key(request).replace(/^[a-z]+:/, '')}; retry in ${Math.max(1, Math.ceil(ctx.ttl / 1000))} s`,
        { retryAfterSec: Math.max(1, Math.ceil(ctx.ttl / 1000)) },
      ),
  });
}
