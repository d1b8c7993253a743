// ANY /fn/{namespace}/{name}[/{rest}]: the public invoke proxy. Streams both bodies (nothing is
// buffered: no content-type parser consumes the request on these routes), keeps upstream connections
// alive through one undici Agent, drops hop-by-hop headers both ways, adds X-Forwarded-*, and records
// every call in the invocation log and metrics without waiting on either.
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import type { Metrics } from '../metrics/metrics.ts';
import { statusClass } from '../metrics/metrics.ts';
import type { Platform } from '../platform/types.ts';
import type { InvocationLog } from '../store/types.ts';
import { isDnsLabel } from './dns-label.ts';
import { HttpError } from './errors.ts';
import { endToEndHeaders, upstreamRequestHeaders } from './forward-headers.ts';

export interface ProxyPluginOptions {
  readonly platform: Platform;
  readonly invocationLog: InvocationLog;
  readonly metrics: Metrics;
  readonly dispatcher: Dispatcher;
  /** Largest request body forwarded; larger ones get 413 (by Content-Length up front, else when counted). */
  readonly maxBodyBytes: number;
}

/** Status recorded when the client went away before the response ended (nginx's convention). */
const CLIENT_CLOSED = 499;
const FN_PATH = /^\/fn\/([^/?#]*)\/([^/?#]*)(.*)$/s;

class BodyTooLarge extends Error {}

interface Series {
  readonly count: { inc(): void };
  readonly duration: { observe(value: number): void };
}
const seriesCache = new WeakMap<Metrics, Map<string, Series>>();

/** prom-client hashes the label set on every call; the children per function are cached instead. */
function seriesFor(metrics: Metrics, namespace: string, fn: string, status: string): Series {
  let byKey = seriesCache.get(metrics);
  if (!byKey) seriesCache.set(metrics, (byKey = new Map()));
  const key = `${namespace}/${fn}/${status}`;
  let series = byKey.get(key);
  if (!series) {
    const labels = { namespace, function: fn, status_class: status };
    series = { count: metrics.invocations.labels(labels), duration: metrics.invocationDuration.labels(labels) };
    // Deleted functions leave their series behind; keep the cache itself bounded all the same.
    if (byKey.size > 10_000) byKey.clear();
    byKey.set(key, series);
  }
  return series;
}

export function proxyPlugin(app: FastifyInstance, opts: ProxyPluginOptions, done: (err?: Error) => void): void {
  // Leave every request body unread: the handler streams request.raw to the function.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null));
  const handler = (request: FastifyRequest, reply: FastifyReply) => proxy(request, reply, opts);
  // The invocation log is /fn's access log; per-request info lines would cost more than the proxying.
  app.all('/fn/:namespace/:name', { logLevel: 'warn' }, handler);
  app.all('/fn/:namespace/:name/*', { logLevel: 'warn' }, handler);
  done();
}

async function proxy(request: FastifyRequest, reply: FastifyReply, opts: ProxyPluginOptions): Promise<void> {
  const started = performance.now();
  const startedAt = new Date().toISOString();
  // Work on the raw URL so the rest of the path and the query reach the function byte for byte.
  const match = FN_PATH.exec(request.raw.url ?? '');
  const namespace = match?.[1] ?? '';
  const name = match?.[2] ?? '';
  if (!isDnsLabel(namespace) || !isDnsLabel(name)) {
    throw new HttpError('invalid_name', `"${namespace}/${name}" is not a namespace/function pair of DNS labels (a-z, 0-9, "-")`);
  }
  const rest = match?.[3] ?? '';
  const upstreamPath = rest.startsWith('/') ? rest : `/${rest}`;

  let requestBytes = 0;
  let responseBytes = 0;
  let status = 0;
  // Only functions that exist get their own metric series and log entries: names in 404s are
  // the caller's to invent, and must not grow the registry or the log without bound.
  let exists = false;
  reply.raw.once('close', () => {
    const finalStatus = reply.raw.writableFinished ? status || reply.raw.statusCode : CLIENT_CLOSED;
    const seconds = (performance.now() - started) / 1000;
    const series = exists ? seriesFor(opts.metrics, namespace, name, statusClass(finalStatus)) : seriesFor(opts.metrics, '', '', statusClass(finalStatus));
    series.count.inc();
    series.duration.observe(seconds);
    if (!exists) return;
    opts.invocationLog.record({
      namespace,
      function: name,
      method: request.method,
      path: upstreamPath.split('?')[0] ?? '/',
      status: finalStatus,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      requestBytes,
      responseBytes,
      startedAt,
    });
  });

  const endpoint = await opts.platform.resolveEndpoint(namespace, name);
  exists = endpoint.kind !== 'not-found';
  switch (endpoint.kind) {
    case 'not-found':
      throw new HttpError('function_not_found', `function ${namespace}/${name} does not exist`);
    case 'disabled':
      throw new HttpError('function_disabled', `function ${namespace}/${name} has http.enabled: false`);
    case 'not-ready':
      throw new HttpError('function_not_ready', `function ${namespace}/${name} is not ready: ${endpoint.reason}`);
    case 'ready':
      break;
  }

  const headers = request.headers;
  const declared = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (declared !== undefined && declared > opts.maxBodyBytes) {
    throw tooLarge(opts.maxBodyBytes);
  }
  // With a Content-Length, node's parser already stops at the declared size, so the body goes
  // through as is; a chunked body of unknown size is counted (and cut off at the limit).
  let body: Readable | null = null;
  if (headers['transfer-encoding'] !== undefined) {
    body = request.raw.pipe(
      new Transform({
        transform(chunk: Buffer, _enc: BufferEncoding, next: TransformCallback) {
          requestBytes += chunk.length;
          if (requestBytes > opts.maxBodyBytes) next(new BodyTooLarge());
          else next(null, chunk);
        },
      }),
    );
  } else if (declared !== undefined && declared > 0) {
    requestBytes = declared;
    body = request.raw;
  }

  const res = reply.raw;
  const timeoutMs = endpoint.timeoutSec * 1000;
  try {
    await new Promise<void>((resolve, reject) => {
      let started = false;
      let controller: Dispatcher.DispatchController | undefined;
      const resume = () => controller?.resume();
      // The client went away: stop the upstream request too.
      res.once('close', () => {
        if (!res.writableFinished) controller?.abort(new Error('the client closed the connection'));
      });
      opts.dispatcher.dispatch(
        {
          origin: endpoint.baseUrl,
          path: upstreamPath,
          method: request.method as Dispatcher.HttpMethod,
          headers: upstreamRequestHeaders(headers, { clientIp: request.ip, proto: request.protocol, prefix: `/fn/${namespace}/${name}` }),
          body,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        {
          onRequestStart(c) {
            controller = c;
            if (res.destroyed) c.abort(new Error('the client closed the connection'));
          },
          onResponseStart(_c, statusCode, upstreamHeaders) {
            if (statusCode < 200) return; // 1xx: informational, the real answer follows
            started = true;
            status = statusCode;
            // From here on the response is ours to stream: fastify steps aside.
            reply.hijack();
            res.writeHead(statusCode, endToEndHeaders(upstreamHeaders));
            res.on('drain', resume);
          },
          onResponseData(c, chunk) {
            responseBytes += chunk.length;
            if (!res.write(chunk)) c.pause();
          },
          onResponseEnd() {
            res.end();
            resolve();
          },
          onResponseError(_c, err) {
            if (!started) return reject(err);
            // The client left or the function broke off mid-response: nothing more can be said on
            // this connection, so end it (the invocation log records what happened).
            if (!res.destroyed) request.log.warn({ err: err.message }, `response from ${namespace}/${name} broke off`);
            res.destroy();
            resolve();
          },
        },
      );
    });
  } catch (err) {
    throw upstreamError(err, namespace, name, endpoint.timeoutSec, opts.maxBodyBytes);
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError('payload_too_large', `the request body is larger than the ${limit} byte limit of /fn`);
}

function upstreamError(err: unknown, namespace: string, name: string, timeoutSec: number, limit: number): Error {
  const chain = [err, (err as { cause?: unknown } | undefined)?.cause];
  if (chain.some((e) => e instanceof BodyTooLarge)) return tooLarge(limit);
  if (chain.some((e) => e instanceof undiciErrors.HeadersTimeoutError || e instanceof undiciErrors.BodyTimeoutError)) {
    return new HttpError('upstream_timeout', `function ${namespace}/${name} did not answer within its timeout_sec (${timeoutSec}s)`, {
      cause: err,
    });
  }
  return new HttpError('upstream_unreachable', `function ${namespace}/${name} is unreachable: ${describeCause(err)}`, { cause: err });
}

function describeCause(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ?? e.message ?? 'connection failed';
}
