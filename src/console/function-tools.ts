// The function page's tabs beyond the overview (issue 33): Logs (the last lines, then a live tail over
// server-sent events with stream and replica filters), Invoke (a form whose call goes through /fn as
// any caller's would, CSRF-protected like the switches) and Charts (from the invocation store).
// Registered by console-plugin.ts, which hands over its session, rendering and page helpers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http/errors.ts';
import { DEFAULT_FOLLOW_CAPS, ndjson, openLogs } from '../http/logs-route.ts';
import { UploadGate } from '../http/upload-gate.ts';
import type { LogLine } from '../platform/types.ts';
import { CHART_CALLS, chartsOf, WINDOWS } from './charts.ts';
import { visibleFunction, type PageSources } from './page-data.ts';
import type { LayoutData, Render } from './render.ts';
import { consolePaths } from './view-models.ts';

/** Lines the Logs tab shows before the live tail takes over (and all it shows without script). */
export const LOG_BACKLOG = 200;
/** A comment line on an idle event stream, so proxies and the browser keep it open. */
const HEARTBEAT_MS = 15_000;
/** What the Invoke tab shows of an answer's body. */
const MAX_SHOWN_BODY = 64 * 1024;
/** The transport's headers of an answer, not the function's: not shown. */
const HOP_BY_HOP = new Set(['connection', 'transfer-encoding', 'keep-alive']);
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
/** Request headers the form may not set: the transport's own, and the console's session. */
const REFUSED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'cookie', 'authorization', 'expect', 'upgrade']);

export interface ToolsKit {
  readonly src: PageSources;
  readonly render: Render;
  /** The caller's session for the namespace (401/403 otherwise). */
  session(request: FastifyRequest, ns: string): Promise<{ csrf: string; admin: boolean }>;
  /** The same, to call a function through /fn: also checks the CSRF token and the origin (a read-like action: allowed in the caller's previews too). */
  invokingSession(request: FastifyRequest, ns: string): Promise<{ csrf: string; admin: boolean }>;
  layout(s: { csrf: string; admin: boolean }, ns: string, title: string): LayoutData;
  html(reply: FastifyReply, body: string): FastifyReply;
  formField(request: FastifyRequest, name: string): string | undefined;
  wantsJson(request: FastifyRequest): boolean;
}

interface Params {
  ns: string;
  name: string;
}

/** A console route's `:ns` and `:name` (the function's, a trigger's, a repository's). */
export const nameParams = {
  type: 'object',
  properties: {
    ns: { type: 'string', maxLength: 63 },
    name: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 },
  },
} as const;

export interface InvokeForm {
  readonly method: string;
  readonly path: string;
  readonly headers: string;
  readonly body: string;
}

/** The form's fields checked: a known method, a path below the function, `name: value` header lines. */
export function parseInvokeForm(form: Partial<InvokeForm>): { method: string; path: string; headers: Record<string, string>; body?: string } {
  const method = (form.method ?? 'GET').toUpperCase();
  if (!(METHODS as readonly string[]).includes(method)) throw new HttpError('bad_request', `method must be one of ${METHODS.join(', ')}, not "${method}"`);
  const path = (form.path ?? '').trim() || '/';
  if (!path.startsWith('/') || path.startsWith('//') || /[\s#]/.test(path)) {
    throw new HttpError('bad_request', `path must start with / and hold no spaces or #, e.g. /items?limit=5, not "${path}"`);
  }
  const headers: Record<string, string> = {};
  for (const [n, raw] of (form.headers ?? '').split(/\r?\n/).entries()) {
    if (raw.trim() === '') continue;
    const colon = raw.indexOf(':');
    const name = colon > 0 ? raw.slice(0, colon).trim().toLowerCase() : '';
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(name)) throw new HttpError('bad_request', `headers line ${n + 1} is not "name: value": "${raw.slice(0, 80)}"`);
    if (REFUSED_HEADERS.has(name)) throw new HttpError('bad_request', `headers line ${n + 1}: the console does not send ${name} (the transport or your session owns it)`);
    headers[name] = raw.slice(colon + 1).trim();
  }
  const body = form.body ?? '';
  if (body !== '' && (method === 'GET' || method === 'DELETE')) throw new HttpError('bad_request', `a ${method} call has no body here; use POST, PUT or PATCH`);
  if (body !== '' && !headers['content-type']) headers['content-type'] = looksLikeJson(body) ? 'application/json' : 'text/plain; charset=utf-8';
  return { method, path, headers, ...(body === '' ? {} : { body }) };
}

function looksLikeJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

export function registerFunctionTools(app: FastifyInstance, kit: ToolsKit): void {
  const gate = new UploadGate(DEFAULT_FOLLOW_CAPS, { things: 'log follow(s)', state: 'open' });
  const tabs = (ns: string, name: string, current: string) => ({ tabs: { ns, name, current, base: consolePaths.fn(ns, name) } });

  app.get('/:ns/functions/:name/logs', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as Params;
    const s = await kit.session(request, ns);
    await visibleFunction(kit.src, ns, name);
    const lines: LogLine[] = [];
    for await (const l of await kit.src.platform.readLogs(ns, name, { follow: false, tail: LOG_BACKLOG, signal: AbortSignal.timeout(10_000) })) lines.push(l);
    const replicas = [...new Set(lines.map((l) => l.replica))].sort();
    const events = `${consolePaths.fn(ns, name)}/logs/events`;
    return kit.html(reply, kit.render('logs', { ...kit.layout(s, ns, `Logs of ${name}`), ...tabs(ns, name, 'logs'), name, lines, replicas, events, backlog: LOG_BACKLOG }));
  });

  // The live tail: each new line as a server-sent event (data: the /v1 NDJSON record).
  app.get('/:ns/functions/:name/logs/events', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as Params;
    await kit.session(request, ns);
    await visibleFunction(kit.src, ns, name);
    const query = request.query as Record<string, string | undefined>;
    const lines = await openLogs(kit.src.platform, gate, ns, name, { follow: '1', tail: query.tail ?? '0' }, reply);
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', 'x-content-type-options': 'nosniff' });
    reply.raw.write(': following\n\n');
    const heartbeat = setInterval(() => reply.raw.write(': still here\n\n'), HEARTBEAT_MS);
    try {
      for await (const line of lines) {
        if (!reply.raw.write(`data: ${ndjson(line)}\n`)) await new Promise((r) => reply.raw.once('drain', r));
      }
    } catch (err) {
      reply.raw.write(`event: failed\ndata: ${JSON.stringify({ error: (err as Error).message })}\n\n`);
    } finally {
      clearInterval(heartbeat);
      reply.raw.end();
    }
  });

  const invokePage = async (request: FastifyRequest, reply: FastifyReply, form: InvokeForm, result?: object, problem?: string) => {
    const { ns, name } = request.params as Params;
    const s = await kit.session(request, ns);
    const fn = await visibleFunction(kit.src, ns, name);
    if (problem) void reply.code(400);
    return kit.html(
      reply,
      kit.render('invoke', { ...kit.layout(s, ns, `Invoke ${name}`), ...tabs(ns, name, 'invoke'), name, url: fn.url, form, methods: METHODS, result, problem, action: `${consolePaths.fn(ns, name)}/invoke` }),
    );
  };

  app.get('/:ns/functions/:name/invoke', { schema: { params: nameParams } }, async (request, reply) =>
    invokePage(request, reply, { method: 'POST', path: '/', headers: '', body: '{}' }),
  );

  app.post('/:ns/functions/:name/invoke', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as Params;
    await kit.invokingSession(request, ns);
    await visibleFunction(kit.src, ns, name);
    const form: InvokeForm = {
      method: kit.formField(request, 'method') ?? 'GET',
      path: kit.formField(request, 'path') ?? '/',
      headers: kit.formField(request, 'headers') ?? '',
      body: kit.formField(request, 'body') ?? '',
    };
    let call: ReturnType<typeof parseInvokeForm>;
    try {
      call = parseInvokeForm(form);
    } catch (err) {
      if (kit.wantsJson(request) || !(err instanceof HttpError)) throw err;
      return invokePage(request, reply, form, undefined, err.message);
    }
    // Through /fn itself (routing, limits, the invocation store), as any caller's call goes.
    const started = performance.now();
    const res = await app.inject({
      method: call.method as 'GET',
      url: `/fn/${ns}/${name}${call.path === '/' ? '' : call.path}`,
      headers: call.headers,
      ...(call.body === undefined ? {} : { payload: call.body }),
    });
    const durationMs = Math.round(performance.now() - started);
    const body = res.body.length > MAX_SHOWN_BODY ? `${res.body.slice(0, MAX_SHOWN_BODY)}\n[cut: ${res.body.length} characters in all]` : res.body;
    const result = {
      status: res.statusCode,
      ok: res.statusCode < 400,
      durationMs,
      headers: Object.entries(res.headers)
        .filter(([k]) => !HOP_BY_HOP.has(k))
        .map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v)] as const),
      body,
    };
    if (kit.wantsJson(request)) return reply.send({ status: result.status, duration_ms: durationMs, headers: Object.fromEntries(result.headers), body });
    return invokePage(request, reply, form, result);
  });

  app.get('/:ns/functions/:name/charts', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as Params;
    const s = await kit.session(request, ns);
    await visibleFunction(kit.src, ns, name);
    const records = await kit.src.invocationLog.list(ns, name, CHART_CALLS);
    const now = kit.src.now();
    const dayStart = now - 24 * 3_600_000;
    const oldest = records.at(-1);
    const capped = records.length === CHART_CALLS && oldest !== undefined && Date.parse(oldest.startedAt) > dayStart ? oldest.startedAt : undefined;
    const windows = WINDOWS.map((w) => ({ id: w.id, label: w.label, charts: chartsOf(records, w, now) }));
    return kit.html(reply, kit.render('charts', { ...kit.layout(s, ns, `Charts of ${name}`), ...tabs(ns, name, 'charts'), name, windows, capped, chartCalls: CHART_CALLS }));
  });
}
