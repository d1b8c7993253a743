// The one error catalog of the HTTP surface: every error a client can see has a stable slug, an HTTP
// status and a message that says what went wrong and what to do. One handler (below) turns thrown
// HttpErrors, PlatformErrors and fastify's own errors into `{"error": "...", "code": "<slug>"}`.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { PlatformError, type PlatformErrorCode } from '../platform/types.ts';

export const ERROR_CATALOG = {
  bad_request: 400,
  invalid_json: 400,
  invalid_name: 400,
  invalid_zip: 400,
  unauthorized: 401,
  forbidden: 403,
  /** A per-namespace cap (SLESS_MAX_FUNCTIONS_PER_NAMESPACE): not a matter of time, so not 429. */
  quota_exceeded: 403,
  not_found: 404,
  route_not_found: 404,
  function_not_found: 404,
  repository_not_found: 404,
  method_not_allowed: 405,
  already_exists: 409,
  managed_by_git: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  too_many_requests: 429,
  // Values only a platform can judge (a cron schedule, a function that does not exist): 400 like
  // every other invalid input, as the old server answered.
  invalid: 400,
  internal: 500,
  upstream_unreachable: 502,
  unavailable: 503,
  function_disabled: 503,
  function_not_ready: 503,
  /** A function at zero did not start within SLESS_COLD_START_TIMEOUT (or its timeout_sec); with Retry-After. */
  cold_start_timeout: 503,
  upstream_timeout: 504,
} as const;
export type ErrorCode = keyof typeof ERROR_CATALOG;

export interface ErrorBody {
  readonly error: string;
  readonly code: ErrorCode;
}

export class HttpError extends Error {
  readonly statusCode: number;
  /** Sent as Retry-After (seconds), e.g. with 429 and 503. */
  readonly retryAfterSec: number | undefined;
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown; retryAfterSec?: number },
  ) {
    super(message, options);
    this.name = 'HttpError';
    this.statusCode = ERROR_CATALOG[code];
    this.retryAfterSec = options?.retryAfterSec;
  }
}

const PLATFORM_CODES: Record<PlatformErrorCode, ErrorCode> = {
  not_found: 'not_found',
  already_exists: 'already_exists',
  managed_by_git: 'managed_by_git',
  invalid: 'invalid',
  unavailable: 'unavailable',
  quota_exceeded: 'quota_exceeded',
};

/** Maps anything thrown inside a route to the status and body a client sees (pure). */
export function toErrorResponse(err: unknown): { status: number; body: ErrorBody; internal: boolean } {
  if (err instanceof HttpError) return reply(err.code, err.message);
  if (err instanceof PlatformError) {
    const code = PLATFORM_CODES[err.code];
    if (code === 'managed_by_git') {
      const repo = err.repository ?? 'its FunctionRepository';
      return reply(code, `${err.message}: this object is managed by git repository ${repo}; change it there instead`);
    }
    return reply(code, err.message);
  }
  const fe = err as Partial<FastifyError> & { validation?: unknown };
  if (Array.isArray(fe.validation) && typeof fe.message === 'string') {
    return reply('bad_request', `invalid request: ${describeValidation(fe.validation as ValidationIssue[], fe.validationContext) ?? fe.message}`);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
      return reply('payload_too_large', `request body too large: ${fe.message ?? ''}`.trim());
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return reply('unsupported_media_type', fe.message ?? 'unsupported content type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return reply('invalid_json', `the body is not valid JSON: ${fe.message ?? ''}`.trim());
    default:
      break;
  }
  if (err instanceof SyntaxError) return reply('invalid_json', `the body is not valid JSON: ${err.message}`);
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, body: { error: fe.message ?? 'bad request', code: 'bad_request' }, internal: false };
  }
  return { ...reply('internal', 'internal error; the server log has the details (look up this request id)'), internal: true };
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** Names the offending field, which ajv's default message leaves out for unknown fields. */
function describeValidation(issues: ValidationIssue[], context: string | undefined): string | undefined {
  const first = issues[0];
  if (!first) return undefined;
  const where = `${context ?? 'body'}${first.instancePath.replace(/\//g, '.')}`;
  if (first.keyword === 'additionalProperties') return `unknown field "${String(first.params.additionalProperty)}" in ${where}`;
  if (first.keyword === 'required') return `missing field "${String(first.params.missingProperty)}" in ${where}`;
  return `${where} ${first.message ?? 'is invalid'}`;
}

function reply(code: ErrorCode, message: string): { status: number; body: ErrorBody; internal: boolean } {
  return { status: ERROR_CATALOG[code], body: { error: message, code }, internal: false };
}

/** The app's single error handler. */
export function errorHandler(err: unknown, request: FastifyRequest, replyTo: FastifyReply): void {
  const res = toErrorResponse(err);
  if (res.internal) request.log.error({ err }, 'request failed');
  else if (res.status >= 500) request.log.warn({ code: res.body.code, status: res.status }, res.body.error);
  else request.log.info({ code: res.body.code, status: res.status }, res.body.error);
  if (err instanceof HttpError && err.retryAfterSec !== undefined) void replyTo.header('retry-after', String(err.retryAfterSec));
  void replyTo.code(res.status).type('application/json; charset=utf-8').send(res.body);
}

export function notFoundHandler(request: FastifyRequest, replyTo: FastifyReply): void {
  void replyTo
    .code(404)
    .send({ error: `no route ${request.method} ${request.url.split('?')[0]}`, code: 'route_not_found' } satisfies ErrorBody);
}
