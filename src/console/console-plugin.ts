// The web console at /funcs (the old funcs-service's surface, kept): server-rendered pages over the
// same Platform as /v1, authorized by the same rule (namespace from `sub`, admin claim) with the
// caller's own token. Browsers keep the token in an HttpOnly, SameSite=Strict cookie; every action a
// cookie authorizes also needs the page's CSRF token. One static script, no inline code, strict CSP.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken, type Caller } from '../auth/token-verifier.ts';
import * as map from '../http/api-mappers.ts';
import { revisionJson } from '../http/api-revision-routes.ts';
import { isDnsLabel } from '../http/dns-label.ts';
import { HttpError, toErrorResponse } from '../http/errors.ts';
import { namespaceAccessProblem, type NamespaceAccess, type NamespaceAction } from '../http/namespace-access.ts';
import { PlatformError, type Platform } from '../platform/types.ts';
import type { BuildLog, InvocationLog } from '../store/types.ts';
import { visibleFunctions as visibleFilter } from './function-filter.ts';
import { negotiate, type Answer } from './negotiate.ts';
import { nameParams, registerFunctionTools } from './function-tools.ts';
import { functionPage, functionsPage, repositoriesPage, sourceOf, visibleFunction, type FunctionPage, type PageSources } from './page-data.ts';
import { createRenderer, type LayoutData } from './render.ts';
import {
  clearedCookie,
  cookieNameFor,
  csrfProblem,
  csrfTokenOf,
  CSRF_FIELD,
  CSRF_HEADER,
  foreignRequest,
  linkLoginProblem,
  secureCookieFor,
  sessionCookie,
  tokenOf,
  type TokenSource,
} from './session.ts';
import { sourceJson, sourceText, sourceView } from './source-view.ts';
import { loadStaticFiles, securityHeaders } from './static-files.ts';
import { consolePaths, plainTextListing } from './view-models.ts';
import { revisionsView } from './revisions-view.ts';

export interface ConsolePluginOptions {
  readonly platform: Platform;
  readonly invocationLog: InvocationLog;
  readonly buildLog: BuildLog;
  /** The /v1 rule (namespace-access.ts), so a token sees here exactly what it sees there. */
  readonly access: NamespaceAccess;
  /** SLESS_CONSOLE_EXCLUDE: names or globs of functions the console does not show. */
  readonly exclude?: readonly string[];
  /** SLESS_PUBLIC_URL: https makes the cookie Secure behind a TLS-terminating ingress. */
  readonly publicUrl?: string;
  readonly now?: () => number;
}

/** How often a page refreshes its live parts: quickly while something builds, else slowly. */
export const REFRESH_MS = { busy: 2_000, idle: 5_000 } as const;

export const LOGIN_HINT =
  'to log in, open /funcs?token=<jwt> once in a browser (the token moves into an HttpOnly cookie), paste the token at /funcs, ' +
  'or send "Authorization: Bearer <jwt>"; sless dev prints a link that logs you in';

interface Session {
  readonly caller: Caller;
  readonly source: TokenSource;
  readonly csrf: string;
}

interface NsParams {
  ns: string;
  name: string;
}


const FORM_TYPE = 'application/x-www-form-urlencoded';

/** Where a form may send the browser back to: a console path, nothing else. */
export function safeBack(value: unknown, fallback: string): string {
  return typeof value === 'string' && /^\/funcs\/[A-Za-z0-9._~/-]*(\?[A-Za-z0-9=&._-]*)?$/.test(value) && !value.includes('//') && !value.includes('..')
    ? value
    : fallback;
}

export async function consolePlugin(app: FastifyInstance, opts: ConsolePluginOptions): Promise<void> {
  const render = createRenderer();
  const statics = await loadStaticFiles();
  const src: PageSources = {
    platform: opts.platform,
    invocationLog: opts.invocationLog,
    buildLog: opts.buildLog,
    visible: visibleFilter(opts.exclude ?? []),
    now: opts.now ?? Date.now,
  };
  const { access, platform } = opts;

  app.addContentTypeParser(FORM_TYPE, { parseAs: 'string', bodyLimit: 16 * 1024 }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.addHook('onSend', async (request, reply, payload) => {
    for (const [k, v] of Object.entries(securityHeaders)) void reply.header(k, v);
    if (!request.url.startsWith('/funcs/_static/')) {
      void reply.header('cache-control', 'no-store');
      void reply.header('vary', 'Accept, Authorization, Cookie');
    }
    return payload;
  });

  const secure = (request: FastifyRequest) => secureCookieFor(request.protocol, request.hostname, opts.publicUrl);
  const cookieName = (request: FastifyRequest) => cookieNameFor(request.port);
  const newSession = (request: FastifyRequest, token: string) => sessionCookie(token, { secure: secure(request), name: cookieName(request) });
  const endedSession = (request: FastifyRequest) => clearedCookie(secure(request), cookieName(request));

  // `?token=<jwt>` on any page. A browser's is checked, moved into the cookie and out of the address
  // (and history); a script's (curl, JSON) authorizes that one request, as the old console's did.
  const queryTokens = new WeakMap<FastifyRequest, TokenSource>();
  app.addHook('preHandler', async (request, reply) => {
    const token = (request.query as { token?: unknown } | undefined)?.token;
    if (request.method !== 'GET' || typeof token !== 'string') return;
    if (answerOf(request) !== 'html') {
      queryTokens.set(request, { token: loginToken(token), via: 'query' });
      return;
    }
    const crossSite = linkLoginProblem(headerOf(request, 'sec-fetch-site'));
    if (crossSite) {
      const next = safeBack(request.url.split('?')[0], '/funcs');
      return reply.code(403).type('text/html; charset=utf-8').send(render('login', { title: 'Log in', problem: crossSite, next }));
    }
    await access.identify(() => loginToken(token));
    const url = new URL(request.url, 'http://console.invalid');
    url.searchParams.delete('token');
    return reply
      .header('set-cookie', newSession(request, token))
      .redirect(`${url.pathname}${url.search}`, 303);
  });

  app.setErrorHandler((err, request, reply) => {
    const res = toErrorResponse(err);
    if (res.internal) request.log.error({ err }, 'console request failed');
    const answer = answerOf(request);
    void reply.code(res.status);
    const fromCookie = tokenOf(request.headers, cookieName(request))?.via === 'cookie';
    if (res.status === 401 && fromCookie) void reply.header('set-cookie', endedSession(request));
    if (answer === 'json') return reply.type('application/json; charset=utf-8').send(res.body);
    if (answer === 'text') return reply.type('text/plain; charset=utf-8').send(`${res.body.error}\n`);
    const ns = (request.params as Partial<NsParams> | undefined)?.ns;
    if (res.status === 401) {
      const next = safeBack(request.url.split('?')[0], '/funcs');
      return reply.type('text/html; charset=utf-8').send(render('login', { title: 'Log in', problem: res.body.error, next }));
    }
    const heading =
      res.status === 403 ? (/owns namespace/.test(res.body.error) ? 'Not your namespace' : 'Refused') : res.status === 404 ? 'Not found' : `Error ${res.status}`;
    return reply.type('text/html; charset=utf-8').send(render('error', { title: heading, heading, message: res.body.error, ns: ns && isDnsLabel(ns) ? ns : undefined }));
  });
  app.setNotFoundHandler((request) => {
    throw new HttpError('route_not_found', `the console has no page ${request.method} ${request.url.split('?')[0]}`);
  });

  const sourceOrLogin = (request: FastifyRequest): TokenSource => {
    const s = tokenOf(request.headers, cookieName(request)) ?? queryTokens.get(request);
    if (!s) throw new HttpError('unauthorized', `no token; ${LOGIN_HINT}`);
    return s;
  };
  const tokenGetter = (s: TokenSource) => () => (s.via === 'header' ? bearerToken(s.token) : s.token);
  /** A session that may read the namespace's pages (a tenant: its own namespace and its previews). */
  const session = async (request: FastifyRequest, ns: string, action: NamespaceAction = 'read'): Promise<Session> => {
    const source = sourceOrLogin(request);
    const caller = await access.authorize(tokenGetter(source), ns, action);
    return { caller, source, csrf: csrfTokenOf(source.token) };
  };
  /** A session that may change something (or, with 'invoke', call a function): authorized, and not forged by another site. */
  const actingSession = async (request: FastifyRequest, ns: string, action: Exclude<NamespaceAction, 'read'> = 'write'): Promise<Session> => {
    const s = await session(request, ns, action);
    const problem = csrfProblem({
      source: s.source,
      given: headerOf(request, CSRF_HEADER) ?? formField(request, CSRF_FIELD),
      origin: headerOf(request, 'origin'),
      fetchSite: headerOf(request, 'sec-fetch-site'),
      ownHost: request.host,
    });
    if (problem) throw new HttpError('forbidden', problem);
    return s;
  };
  const layout = (s: Session, ns: string, title: string, extra: Partial<LayoutData> = {}): LayoutData => {
    const readOnly = namespaceAccessProblem(s.caller, ns, 'write')?.message;
    return { title, ns, session: { admin: s.caller.admin, csrf: s.csrf, ...(readOnly ? { readOnly } : {}) }, ...extra };
  };
  /** A page with an ETag: the script's refresh sends If-None-Match and gets 304 while nothing changed. */
  const html = (reply: FastifyReply, body: string) => {
    const etag = `W/"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    void reply.header('etag', etag);
    if (reply.request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('text/html; charset=utf-8').send(body);
  };
  const text = (reply: FastifyReply, body: string) => reply.type('text/plain; charset=utf-8').send(body);

  app.get('/_static/:file', async (request, reply) => {
    const file = statics.get((request.params as { file: string }).file);
    if (!file) throw new HttpError('not_found', 'no such console file');
    if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
    return reply.type(file.type).header('etag', file.etag).header('cache-control', 'no-cache').send(file.body);
  });

  app.get('/', async (request, reply) => {
    const wanted = (request.query as { ns?: unknown }).ns;
    if (typeof wanted === 'string') {
      if (!isDnsLabel(wanted)) throw new HttpError('invalid_name', `"${wanted}" is not a namespace name (a DNS label)`);
      return reply.redirect(consolePaths.functions(wanted), 303);
    }
    const caller = await access.identify(tokenGetter(sourceOrLogin(request)));
    // Scripts get the caller's functions right here (the old console's `GET /funcs?token=`).
    if (answerOf(request) !== 'html') return listing(request, reply, caller.namespace);
    return reply.redirect(consolePaths.functions(caller.namespace), 303);
  });

  app.post('/_login', async (request, reply) => {
    const foreign = foreignRequest({ origin: headerOf(request, 'origin'), fetchSite: headerOf(request, 'sec-fetch-site'), ownHost: request.host });
    if (foreign) throw new HttpError('forbidden', foreign);
    const token = String(formField(request, 'token') ?? '').trim();
    const caller = await access.identify(() => loginToken(token));
    const next = safeBack(formField(request, 'next'), consolePaths.functions(caller.namespace));
    return reply.header('set-cookie', newSession(request, token)).redirect(next === '/funcs' ? consolePaths.functions(caller.namespace) : next, 303);
  });

  app.post('/_logout', async (request, reply) => {
    const source = sourceOrLogin(request);
    const problem = csrfProblem({
      source,
      given: formField(request, CSRF_FIELD),
      origin: headerOf(request, 'origin'),
      fetchSite: headerOf(request, 'sec-fetch-site'),
      ownHost: request.host,
    });
    if (problem) throw new HttpError('forbidden', problem);
    return reply.header('set-cookie', endedSession(request)).redirect('/funcs', 303);
  });

  const listing = async (request: FastifyRequest, reply: FastifyReply, ns: string) => {
    const s = await session(request, ns);
    const page = await functionsPage(src, ns);
    const answer = negotiate(request.headers.accept);
    if (answer === 'json') return reply.send(page.records.map((f) => map.functionJson(f)));
    if (answer === 'text') return text(reply, plainTextListing(page.records));
    const refreshMs = page.busy ? REFRESH_MS.busy : REFRESH_MS.idle;
    return html(reply, render('functions', { ...layout(s, ns, `Functions in ${ns}`, { nav: 'functions', refreshMs }), ...page }));
  };
  app.get('/:ns', async (request, reply) => listing(request, reply, (request.params as NsParams).ns));

  app.get('/:ns/functions/:name', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as NsParams;
    const s = await session(request, ns);
    const [page, revisions] = await Promise.all([functionPage(src, ns, name), platform.listRevisions(ns, name)]);
    const answer = negotiate(request.headers.accept);
    if (answer === 'json') return { ...functionPageJson(page), revisions: revisions.map(revisionJson) };
    if (answer === 'text') return text(reply, plainTextListing([page.record]));
    const refreshMs = page.busy ? REFRESH_MS.busy : REFRESH_MS.idle;
    const back = consolePaths.fn(ns, name);
    const tabs = { ns, name, current: 'overview', base: consolePaths.fn(ns, name) };
    return html(reply, render('function', { ...layout(s, ns, name, { nav: 'functions', refreshMs }), ...page, revisions: revisionsView(page.record, revisions), back, tabs }));
  });

  app.get('/:ns/source/:name', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as NsParams;
    const s = await session(request, ns);
    await visibleFunction(src, ns, name);
    const { files, missing } = await sourceOf(src, ns, name);
    const answer = negotiate(request.headers.accept);
    if (answer === 'json') {
      if (!files) throw new PlatformError('not_found', missing);
      return sourceJson(files);
    }
    if (answer === 'text') {
      if (!files) throw new PlatformError('not_found', missing);
      return text(reply, sourceText(files));
    }
    return html(reply, render('source', { ...layout(s, ns, `Source of ${name}`, { nav: 'functions' }), name, files: files ? sourceView(files) : undefined, sourceMissing: missing }));
  });

  app.get('/:ns/repositories', async (request, reply) => {
    const { ns } = request.params as NsParams;
    const s = await session(request, ns);
    const page = await repositoriesPage(src, ns);
    const answer = negotiate(request.headers.accept);
    if (answer === 'json') return (await platform.listRepositories(ns)).map(map.repositoryJson);
    if (answer === 'text') {
      return text(reply, page.repositories.map((r) => [r.name, r.revision ?? '-', r.lastSync?.iso ?? '-', r.status].join('\t') + '\n' + r.folders.flatMap((f) => f.problems).map((p) => `  ${p}\n`).join('')).join(''));
    }
    const synced = (request.query as { synced?: unknown }).synced;
    const refreshMs = page.busy ? REFRESH_MS.busy : REFRESH_MS.idle;
    return html(
      reply,
      render('repositories', { ...layout(s, ns, `Repositories in ${ns}`, { nav: 'repositories', refreshMs }), ...page, back: consolePaths.repositories(ns), synced }),
    );
  });

  /** Sets a trigger on or off; a trigger of a function the console hides does not exist here. */
  const setTrigger = async (ns: string, name: string, enabled: boolean) => {
    const t = await platform.getTrigger(ns, name);
    if (!src.visible(t.functionRef)) throw new PlatformError('not_found', `trigger ${ns}/${name} does not exist`);
    return platform.setTriggerEnabled(ns, name, enabled);
  };

  app.patch(
    '/:ns/triggers/:name',
    {
      schema: {
        params: nameParams,
        body: { type: 'object', required: ['enabled'], additionalProperties: false, properties: { enabled: { type: 'boolean' } } },
      },
    },
    async (request) => {
      const { ns, name } = request.params as NsParams;
      await actingSession(request, ns);
      return map.triggerJson(await setTrigger(ns, name, (request.body as { enabled: boolean }).enabled));
    },
  );

  app.post('/:ns/triggers/:name', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as NsParams;
    await actingSession(request, ns);
    const enabled = formField(request, 'enabled');
    if (enabled !== 'true' && enabled !== 'false') throw new HttpError('bad_request', 'the form field "enabled" must be "true" or "false"');
    const t = await setTrigger(ns, name, enabled === 'true');
    if (wantsJson(request)) return map.triggerJson(t);
    return reply.redirect(safeBack(formField(request, 'back'), consolePaths.fn(ns, t.functionRef)), 303);
  });

  // Rollback and its undo (docs/rollback.md): the same session, CSRF and origin checks as the switches.
  app.post('/:ns/functions/:name/rollback', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as NsParams;
    await actingSession(request, ns);
    await visibleFunction(src, ns, name);
    const given = formField(request, 'revision');
    if (given !== undefined && !/^[1-9][0-9]{0,8}$/.test(given)) throw new HttpError('bad_request', `the form field "revision" must be a revision number, not "${given}"`);
    const fn = await platform.rollback(ns, name, given === undefined ? undefined : Number(given));
    if (wantsJson(request)) return map.functionJson(fn);
    return reply.redirect(safeBack(formField(request, 'back'), consolePaths.fn(ns, name)), 303);
  });
  app.post('/:ns/functions/:name/rollback/undo', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as NsParams;
    await actingSession(request, ns);
    await visibleFunction(src, ns, name);
    const fn = await platform.undoRollback(ns, name);
    if (wantsJson(request)) return map.functionJson(fn);
    return reply.redirect(safeBack(formField(request, 'back'), consolePaths.fn(ns, name)), 303);
  });

  app.post('/:ns/repositories/:name/sync', { schema: { params: nameParams } }, async (request, reply) => {
    const { ns, name } = request.params as NsParams;
    await actingSession(request, ns);
    await platform.getRepository(ns, name);
    await platform.requestSync(ns, name, 'console');
    if (wantsJson(request)) return reply.code(202).send({ status: 'sync requested' });
    const back = safeBack(formField(request, 'back'), consolePaths.repositories(ns)).split('?')[0] as string;
    return reply.redirect(`${back}?synced=${name}`, 303);
  });

  // Logs, Invoke and Charts tabs (function-tools.ts).
  registerFunctionTools(app, {
    src,
    render,
    session: async (request, ns) => toolSession(await session(request, ns)),
    invokingSession: async (request, ns) => toolSession(await actingSession(request, ns, 'invoke')),
    layout: (s, ns, title) => ({ title, ns, nav: 'functions', session: s }),
    html,
    formField,
    wantsJson,
  });
}

function toolSession(s: Session): { csrf: string; admin: boolean } {
  return { csrf: s.csrf, admin: s.caller.admin };
}

/** The JSON of a function page: the same shapes as /v1's. */
function functionPageJson(page: FunctionPage) {
  return {
    function: map.functionJson(page.record),
    triggers: page.raw.triggers.map(map.triggerJson),
    jobs: page.raw.jobs.map(map.jobJson),
    invocations: page.raw.invocations.map(map.invocationJson),
    builds: page.raw.builds.map(map.buildJson),
  };
}

/** A pasted or linked token must look like a JWT before it is verified and put in a cookie. */
function loginToken(token: string): string {
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token)) throw new HttpError('unauthorized', `that is not a JWT; ${LOGIN_HINT}`);
  return token;
}

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const v = request.headers[name];
  return typeof v === 'string' ? v : undefined;
}

function formField(request: FastifyRequest, name: string): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  const v = body && typeof body === 'object' ? body[name] : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** A JSON request (PATCH) or a script that asks for JSON gets JSON back. */
function wantsJson(request: FastifyRequest): boolean {
  return answerOf(request) === 'json';
}

function answerOf(request: FastifyRequest): Answer {
  const type = request.headers['content-type'];
  if (request.method !== 'GET' && typeof type === 'string' && type.startsWith('application/json')) return 'json';
  return negotiate(request.headers.accept);
}
