// GET /v1/namespaces/{ns}/functions/{name}/logs (issue 33, docs/logs.md): the function's output as
// newline-delimited JSON `{time, replica, stream, line}`, from Platform.readLogs. With follow=1 the answer
// stays open and each new line is written as it comes, until the client leaves (which aborts every read
// the platform made for it). Follows are bounded per namespace and per process (a gate, like uploads);
// each one holds at most a LogQueue's bytes.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import type { LogLine, LogQuery, Platform } from '../platform/types.ts';
import { HttpError } from './errors.ts';
import type { ApiRoute } from './openapi.ts';
import { UploadGate, type UploadCaps } from './upload-gate.ts';

/** Open follows at once: per namespace, and in the whole process. */
export const DEFAULT_FOLLOW_CAPS: UploadCaps = { perProcess: 200, perNamespace: 10, retryAfterSec: 10 };
/** The most `tail` may ask for. */
export const MAX_TAIL = 10_000;
/** The furthest back `since` may reach: 30 days. */
const MAX_SINCE_MS = 30 * 24 * 3600_000;
const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3600_000, d: 24 * 3600_000 };

export const logsQuerySchema = {
  type: 'object',
  properties: {
    follow: { type: 'string', description: '1 (or true): keep the answer open and write new lines as they come' },
    since: { type: 'string', description: 'only lines written since then: a duration back from now (30s, 10m, 2h, 1d) or an RFC 3339 time' },
    tail: { type: 'string', description: `only the last N lines (0..${MAX_TAIL}); per replica while following` },
  },
} as const;

export const logLineSchema = {
  type: 'object',
  required: ['time', 'replica', 'stream', 'line'],
  properties: {
    time: { type: 'string', format: 'date-time' },
    replica: { type: 'string', description: 'the pod (Kubernetes) or process (sless dev: pid-<n>) that printed it; `sless` for notes of the server' },
    stream: { type: 'string', enum: ['stdout', 'stderr', 'output'], description: 'output: both streams merged (Kubernetes keeps them together)' },
    line: { type: 'string' },
  },
} as const;

export type ParsedLogQuery = Omit<LogQuery, 'signal'>;

/** The query string as LogQuery fields, or a 400 that names the bad parameter and what it takes. */
export function parseLogQuery(query: Readonly<Record<string, string | undefined>>, nowMs: number): ParsedLogQuery {
  const follow = query.follow;
  if (follow !== undefined && !['', '0', '1', 'true', 'false'].includes(follow)) {
    throw new HttpError('bad_request', `follow must be 1, true, 0 or false, not "${follow}"`);
  }
  const out: { follow: boolean; sinceMs?: number; tail?: number } = { follow: follow === '1' || follow === 'true' || follow === '' };
  if (query.since !== undefined) out.sinceMs = sinceOf(query.since, nowMs);
  if (query.tail !== undefined) {
    if (!/^\d{1,6}$/.test(query.tail) || Number(query.tail) > MAX_TAIL) {
      throw new HttpError('bad_request', `tail must be a whole number of lines from 0 to ${MAX_TAIL}, not "${query.tail}"`);
    }
    out.tail = Number(query.tail);
  }
  return out;
}

function sinceOf(since: string, nowMs: number): number {
  const duration = /^(\d{1,7})(s|m|h|d)$/.exec(since);
  if (duration) {
    const ms = Number(duration[1]) * (UNIT_MS[duration[2] as string] as number);
    if (ms > MAX_SINCE_MS) throw new HttpError('bad_request', `since reaches back at most 30d, not "${since}"`);
    return nowMs - ms;
  }
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(since)) {
    const at = Date.parse(since);
    if (!Number.isNaN(at)) return at;
  }
  throw new HttpError('bad_request', `since must be a duration such as 30s, 10m, 2h or 1d, or an RFC 3339 time such as 2026-01-02T15:04:05Z, not "${since}"`);
}

/** The line as one NDJSON record. */
export function ndjson(line: LogLine): string {
  return `${JSON.stringify({ time: line.time, replica: line.replica, stream: line.stream, line: line.line })}\n`;
}

/**
 * Opens the platform's lines for a request: the signal aborts when the client leaves (the answer's
 * socket closes), and the follow slot (when following) is held until then.
 */
export async function openLogs(
  platform: Platform,
  gate: UploadGate,
  ns: string,
  name: string,
  query: Readonly<Record<string, string | undefined>>,
  reply: FastifyReply,
): Promise<AsyncIterable<LogLine>> {
  const parsed = parseLogQuery(query, Date.now());
  const abort = new AbortController();
  reply.raw.once('close', () => abort.abort());
  if (parsed.follow) {
    const slot = gate.acquire(ns);
    if (!slot.ok) throw new HttpError('too_many_requests', `${slot.reason}; retry in ${slot.retryAfterSec} s`, { retryAfterSec: slot.retryAfterSec });
    abort.signal.addEventListener('abort', slot.release, { once: true });
  }
  try {
    return await platform.readLogs(ns, name, { ...parsed, signal: abort.signal });
  } catch (err) {
    abort.abort();
    throw err;
  }
}

export function logsRoute(platform: Platform, caps: UploadCaps = DEFAULT_FOLLOW_CAPS): ApiRoute {
  const gate = new UploadGate(caps, { things: 'log follow(s)', state: 'open' });
  return {
    method: 'GET',
    url: '/namespaces/:ns/functions/:name/logs',
    summary:
      'The function’s output, every replica: newline-delimited JSON {time, replica, stream, line}, oldest first; with follow=1 new lines as they come until the client leaves',
    querystring: logsQuerySchema,
    success: { status: 200, contentType: 'application/x-ndjson', itemSchema: logLineSchema },
    handler: async ({ ns, name }, _body, query, reply) => {
      const lines = await openLogs(platform, gate, ns, name, query, reply);
      void reply.type('application/x-ndjson').header('cache-control', 'no-store').header('x-accel-buffering', 'no');
      const raw = reply.raw;
      return Readable.from(
        (async function* () {
          // fastify sets a stream's headers without sending them (they go with the first chunk): a
          // follow with nothing to say yet would leave the client waiting for its 200. Sent now (this
          // runs once fastify has piped the stream, headers set).
          if (!raw.headersSent) raw.flushHeaders();
          for await (const line of lines) yield ndjson(line);
        })(),
        { objectMode: false },
      );
    },
  };
}
