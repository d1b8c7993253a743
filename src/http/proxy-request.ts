// The /fn invoke proxy's core, on plain node:http objects: ANY /fn/{namespace}/{name}[/{rest}].
// Streams both bodies (nothing is buffered), keeps upstream connections alive through one undici
// dispatcher, drops hop-by-hop headers both ways, adds X-Forwarded-*, and records every call in the
// invocation log and metrics without waiting on either. It answers errors itself with the error
// catalog's body and never rejects, so it can run in front of fastify's router (app/build-app.ts) as
// well as inside the fastify route (proxy-plugin.ts, used by app.inject).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import { errors as undiciErrors, type Dispatcher } from 'undici';
import type { Metrics } from '../metrics/metrics.ts';
import { invocationSeries, statusClass } from '../metrics/metrics.ts';
import type { Platform } from '../platform/types.ts';
import type { InvocationLog } from '../store/types.ts';
import type { Activator } from './activator.ts';
import { isDnsLabel } from './dns-label.ts';
import { HttpError, toErrorResponse } from './errors.ts';
import { endToEndHeaders, upstreamRequestHeaders } from './forward-headers.ts';
import { isoTime } from '../store/iso-time.ts';

export interface ProxyContext {
  readonly platform: Platform;
  readonly invocationLog: InvocationLog;
  readonly metrics: Metrics;
  readonly dispatcher: Dispatcher;
  /** Largest request body forwarded; larger ones get 413 (by Content-Length up front, else when counted). */
  readonly maxBodyBytes: number;
  /** Take the client address and scheme from X-Forwarded-For/-Proto (behind a trusted proxy). */
  readonly trustProxy: boolean;
  readonly log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void; error(obj: object, msg: string): void };
  /** Holds calls for functions at zero (when the platform scales them); absent: such calls get 503. */
  readonly activator?: Activator;
}

/** Status recorded when the client went away before the response ended (nginx's convention). */
const CLIENT_CLOSED = 499;
const FN_PATH = /^\/fn\/([^/?#]*)\/([^/?#]*)(.*)$/s;

export function isProxyPath(url: string | undefined): boolean {
  return url !== undefined && url.startsWith('/fn/');
}

class BodyTooLarge extends Error {}

/**
 * Requests the server handed over at `checkContinue` (Expect: 100-continue): the proxy sends the
 * 100 itself once it knows the call can go through, so a 404 or 413 costs the client no body.
 */
export const awaitingContinue = new WeakSet<IncomingMessage>();

const EXPECTED_503: ReadonlySet<string> = new Set(['function_not_ready', 'function_disabled', 'cold_start_timeout']);

export async function proxyRequest(req: IncomingMessage, res: ServerResponse, ctx: ProxyContext): Promise<void> {
  try {
    await forward(req, res, ctx);
  } catch (err) {
    // The client is gone (the invocation log has its 499): nobody to tell, nothing to report.
    if (res.destroyed || res.writableEnded) return;
    const { status, body, internal } = toErrorResponse(err);
    // The path only: a query string may carry a caller's secrets.
    const path = req.url?.split('?')[0];
    if (internal) ctx.log.error({ err, path }, 'proxying failed');
    // A function disabled, or still building or starting, is a state the caller's 503 explains, not a
    // fault: no warning line per early call (a first `sless dev` start would print one per retry).
    else if (status >= 500 && !EXPECTED_503.has(body.code)) ctx.log.warn({ code: body.code, status, path }, body.error);
    else if (status >= 500) ctx.log.info({ code: body.code, status, path }, body.error);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const json = JSON.stringify(body);
    const retryAfter = err instanceof HttpError && err.retryAfterSec !== undefined ? { 'retry-after': String(err.retryAfterSec) } : {};
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(json), ...retryAfter });
    res.end(json);
  }
}

async function forward(req: IncomingMessage, res: ServerResponse, ctx: ProxyContext): Promise<void> {
  const started = performance.now();
  // Work on the raw URL so the rest of the path and the query reach the function byte for byte.
  const match = FN_PATH.exec(req.url ?? '');
  const namespace = match?.[1] ?? '';
  const name = match?.[2] ?? '';
  const rest = match?.[3] ?? '';
  const upstreamPath = rest.startsWith('/') ? rest : `/${rest}`;
  const query = upstreamPath.indexOf('?');
  const pathOnly = query < 0 ? upstreamPath : upstreamPath.slice(0, query);
  let requestBytes = 0;
  const call: Exchange = { status: 0, responseBytes: 0, controller: undefined, paused: false };
  let coldStartMs: number | undefined;
  // Only functions that exist get their own metric series and log entries: names in 404s are
  // the caller's to invent, and must not grow the registry or the log without bound.
  let exists = false;
  /** Ends this call's in-flight count for the autoscaler (Platform.scaling), once begun. */
  let endScaling: (() => void) | undefined;
  let closed = false;
  // One listener does everything at the end ('close' comes once): each listener and closure more is
  // paid on every call (docs/benchmarks.md, /fn proxy).
  res.on('close', () => {
    closed = true;
    endScaling?.();
    // The client went away before the end: stop the upstream request too.
    if (!res.writableFinished) call.controller?.abort(new Error('the client closed the connection'));
    const finalStatus = res.writableFinished ? call.status || res.statusCode : CLIENT_CLOSED;
    const seconds = (performance.now() - started) / 1000;
    const series = exists ? invocationSeries(ctx.metrics, namespace, name, statusClass(finalStatus)) : invocationSeries(ctx.metrics, '', '', statusClass(finalStatus));
    series.count.inc();
    series.duration.observe(seconds);
    if (!exists) return;
    ctx.invocationLog.record({
      namespace,
      function: name,
      method: req.method ?? 'GET',
      path: pathOnly,
      status: finalStatus,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      requestBytes,
      responseBytes: call.responseBytes,
      startedAt: isoTime(Date.now() - seconds * 1000),
      ...(coldStartMs === undefined ? {} : { coldStartMs }),
    });
  });

  if (!isDnsLabel(namespace) || !isDnsLabel(name)) {
    throw new HttpError('invalid_name', `"${namespace}/${name}" is not a namespace/function pair of DNS labels (a-z, 0-9, "-")`);
  }
  let endpoint = await ctx.platform.resolveEndpoint(namespace, name);
  exists = endpoint.kind !== 'not-found';
  const scaling = ctx.platform.scaling;
  if (scaling && (endpoint.kind === 'ready' || endpoint.kind === 'idle')) {
    // In flight for the autoscaler from here (a held call too) until the call ends, whichever way; a
    // client that left while the endpoint was looked up has already closed, so it ends at once.
    endScaling = scaling.requestBegan(namespace, name);
    if (closed) endScaling();
  }
  if (endpoint.kind === 'idle') {
    if (!ctx.activator) throw new HttpError('function_not_ready', `function ${namespace}/${name} is scaled to zero and this server cannot wake it`);
    const heldAt = performance.now();
    const gone = new AbortController();
    res.once('close', () => gone.abort(new Error('the client closed the connection')));
    const held = await ctx.activator.hold(namespace, name, endpoint.timeoutSec, gone.signal);
    if (held.kind === 'gone') return;
    endpoint = held.endpoint;
    if (held.kind === 'ready') {
      coldStartMs = Math.round((performance.now() - heldAt) * 1000) / 1000;
      ctx.metrics.coldStart.observe({ namespace, function: name }, coldStartMs / 1000);
    }
  }
  switch (endpoint.kind) {
    case 'not-found':
      throw new HttpError('function_not_found', `function ${namespace}/${name} does not exist`);
    case 'disabled':
      throw new HttpError('function_disabled', `function ${namespace}/${name} has http.enabled: false`);
    case 'not-ready':
      throw new HttpError('function_not_ready', `function ${namespace}/${name} is not ready: ${endpoint.reason}`);
    case 'idle':
      throw new HttpError('function_not_ready', `function ${namespace}/${name} is scaled to zero`);
    case 'ready':
      break;
  }

  const headers = req.headers;
  const declared = headers['content-length'] === undefined ? undefined : Number(headers['content-length']);
  if (declared !== undefined && declared > ctx.maxBodyBytes) throw tooLarge(ctx.maxBodyBytes);
  if (awaitingContinue.delete(req)) res.writeContinue();
  // With a Content-Length, node's parser already stops at the declared size, so the body goes
  // through as is; a chunked body of unknown size is counted (and cut off at the limit).
  let body: Readable | null = null;
  if (headers['transfer-encoding'] !== undefined) {
    body = req.pipe(
      new Transform({
        transform(chunk: Buffer, _enc: BufferEncoding, next: TransformCallback) {
          requestBytes += chunk.length;
          if (requestBytes > ctx.maxBodyBytes) next(new BodyTooLarge());
          else next(null, chunk);
        },
      }),
    );
  } else if (declared !== undefined && declared > 0) {
    requestBytes = declared;
    body = req;
  }

  const timeoutMs = endpoint.timeoutSec * 1000;
  const request: Omit<Dispatcher.DispatchOptions, 'origin'> = {
    path: upstreamPath,
    method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
    headers: upstreamRequestHeaders(headers, { ...clientOf(req, ctx.trustProxy), prefix: `/fn/${namespace}/${name}` }),
    body,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  };
  // A refused connection sent nothing, so the call may try again for a moment: a pod that just became
  // Ready is unroutable until kube-proxy programs its Service (0.5 s of ECONNREFUSED seen on the real
  // node, more under load), and a restarted dev process binds its port a moment late. A body goes
  // along only while no byte of it has been read (undici reads it after the connection is up), so the
  // function never sees a call twice or a body cut short.
  // A connection reset before any answer is tried again once, for an idempotent bodiless call only:
  // at SIGTERM a runtime closes its idle keep-alive connections, and one the proxy had just picked
  // then fails (1 call in 112 of a rollout on the real node). The function may have seen such a call,
  // so only a method that may run twice (RFC 9110 §9.2.2) goes again, at once, on a new connection.
  let delayMs = CONNECT_RETRY_FIRST_MS;
  const giveUpAt = performance.now() + CONNECT_RETRY_WINDOW_MS;
  let resetsLeft = body === null && IDEMPOTENT.has(req.method ?? 'GET') ? 1 : 0;
  // With a replica picker (Kubernetes, pod routing) each attempt picks a pod: a refused one is not
  // tried blindly again, and the picker learns of it.
  const replicas = endpoint.replicas;
  for (;;) {
    const replica = replicas?.pick();
    let outcome: 'done' | 'refused' = 'done';
    try {
      return await exchange(ctx, res, call, { ...request, origin: replica?.baseUrl ?? endpoint.baseUrl }, `${namespace}/${name}`);
    } catch (err) {
      if (hasCode(err, REFUSALS)) outcome = 'refused';
      const untouched = body === null || !body.readableDidRead;
      const unanswered = call.status === 0 && !res.destroyed;
      if (unanswered && resetsLeft > 0 && hasCode(err, RESETS)) {
        resetsLeft--;
        continue;
      }
      const again = untouched && unanswered && hasCode(err, REFUSALS) && performance.now() + delayMs < giveUpAt;
      if (!again) throw upstreamError(err, namespace, name, endpoint.timeoutSec, ctx.maxBodyBytes);
      replica?.release(outcome);
      await sleep(delayMs);
      delayMs *= 2;
    } finally {
      // After the whole answer, or the failure: the pod's in-flight count is this call's until then.
      replica?.release(outcome);
    }
  }
}

/** What one /fn call's exchange with the function learns as it goes, read by the call's record at its end. */
interface Exchange {
  /** The function's status, 0 until it answered. */
  status: number;
  responseBytes: number;
  controller: Dispatcher.DispatchController | undefined;
  /** Reading from the function is paused until the client drains what is buffered. */
  paused: boolean;
}

/**
 * One attempt to send the call to `request.origin` and stream the answer into `res`: resolves once the
 * answer has ended (or broken off after it began), rejects when nothing was answered. A module-level
 * function with one state object rather than closures per call: the bundle's keepNames makes every named
 * closure a defineProperty on each call, and each one is an allocation the bare proxy does not make.
 */
function exchange(ctx: ProxyContext, res: ServerResponse, call: Exchange, request: Dispatcher.DispatchOptions, fn: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let started = false;
    ctx.dispatcher.dispatch(request, {
      onRequestStart(c) {
        call.controller = c;
        if (res.destroyed) c.abort(new Error('the client closed the connection'));
      },
      onResponseStart(_c, statusCode, upstreamHeaders) {
        if (statusCode < 200) return; // 1xx: informational, the real answer follows
        started = true;
        call.status = statusCode;
        res.writeHead(statusCode, endToEndHeaders(upstreamHeaders));
      },
      onResponseData(c, chunk) {
        call.responseBytes += chunk.length;
        // Back-pressure: stop reading the function until the client has taken what is buffered.
        if (!res.write(chunk) && !call.paused) {
          call.paused = true;
          c.pause();
          res.once('drain', () => {
            call.paused = false;
            c.resume();
          });
        }
      },
      onResponseEnd() {
        res.end();
        resolve();
      },
      onResponseError(_c, err) {
        if (!started) return reject(err);
        // The client left or the function broke off mid-response: nothing more can be said on
        // this connection, so end it (the invocation log records what happened).
        if (!res.destroyed) ctx.log.warn({ err: err.message }, `response from ${fn} broke off`);
        res.destroy();
        resolve();
      },
    });
  });
}

const IDEMPOTENT: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);
/** The connection closed under a sent call (undici's "other side closed" is UND_ERR_SOCKET). */
const RESETS = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);


/** How long a bodiless call rides out refused connections, and its first pause (doubling). */
const CONNECT_RETRY_WINDOW_MS = 5_000;
const CONNECT_RETRY_FIRST_MS = 50;
const REFUSALS = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH']);

/** The error or its cause carries one of `codes` (undici wraps the socket's error). */
function hasCode(err: unknown, codes: ReadonlySet<string>): boolean {
  const chain = [err, (err as { cause?: unknown } | undefined)?.cause];
  return chain.some((e) => codes.has((e as { code?: string } | undefined)?.code ?? ''));
}

function clientOf(req: IncomingMessage, trustProxy: boolean): { clientIp: string | undefined; proto: string } {
  const socketProto = (req.socket as Partial<TLSSocket>).encrypted ? 'https' : 'http';
  if (!trustProxy) return { clientIp: req.socket.remoteAddress, proto: socketProto };
  const xff = req.headers['x-forwarded-for'];
  const first = (Array.isArray(xff) ? xff[0] : xff)?.split(',')[0]?.trim();
  const xfp = req.headers['x-forwarded-proto'];
  return { clientIp: first || req.socket.remoteAddress, proto: (Array.isArray(xfp) ? xfp[0] : xfp) ?? socketProto };
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
  const e = err as { code?: string; message?: string };
  return new HttpError('upstream_unreachable', `function ${namespace}/${name} is unreachable: ${e.code ?? e.message ?? 'connection failed'}`, {
    cause: err,
  });
}
