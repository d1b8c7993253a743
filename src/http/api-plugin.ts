// /v1: the management API (docs/contract.md §3). Every route is declared once in a table with its JSON
// schemas; the table registers the routes and produces /v1/openapi.json, so the two cannot drift.
// Auth (a bearer JWT) is registered here only, never on /fn, /hooks or health.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import multipart from '@fastify/multipart';
import { bearerToken, type Caller } from '../auth/token-verifier.ts';
import type { Runtime } from '../manifest/types.ts';
import type { Platform } from '../platform/types.ts';
import type { BuildLog, InvocationLog } from '../store/types.ts';
import * as map from './api-mappers.ts';
import * as s from './api-schemas.ts';
import { HttpError } from './errors.ts';
import { actionOfMethod, type NamespaceAccess } from './namespace-access.ts';
import { logsRoute } from './logs-route.ts';
import { openApiDocument, type ApiRoute } from './openapi.ts';
import { revisionRoutes } from './api-revision-routes.ts';
import { previewRoutes } from './preview-routes.ts';
import { unpackZip, ZipError, type ZipLimits } from './read-zip.ts';
import { UploadGate, type UploadCaps } from './upload-gate.ts';
import { writeZip } from './write-zip.ts';

export interface ApiPluginOptions {
  readonly platform: Platform;
  readonly invocationLog: InvocationLog;
  readonly buildLog: BuildLog;
  /** The token and namespace rule, shared with the console. */
  readonly access: NamespaceAccess;
  readonly zipLimits: ZipLimits;
  /** Uploads unpacked at once, per process and per namespace (upload-gate.ts). */
  readonly uploadCaps?: UploadCaps;
  /** The cap on scale.max (SLESS_MAX_REPLICAS); default SCALE_LIMITS.defaultCap. */
  readonly maxReplicas?: number;
}

interface Params {
  ns: string;
  name: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Served without a token (only /v1/openapi.json). */
    public?: boolean;
  }
}

/** Accept values that ask GET .../source for the zip instead of JSON. */
const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];

export async function apiPlugin(app: FastifyInstance, opts: ApiPluginOptions): Promise<void> {
  const { platform } = opts;
  app.decorateRequest('caller', null);

  // Go's HTTP helpers set Content-Type: application/json on every request: an empty body is no body.
  const json = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    json(request, text, done);
  });

  app.addHook('onRequest', async (request) => {
    if (request.routeOptions.config.public === true) return;
    const ns = (request.params as Partial<Params>).ns ?? '';
    request.caller = await opts.access.authorize(() => bearerToken(request.headers.authorization), ns, actionOfMethod(request.method));
  });

  const fnRoot = '/namespaces/:ns/functions/:name';
  const routes: ApiRoute[] = [
    {
      method: 'POST',
      url: '/namespaces/:ns/ensure',
      summary: "Create the caller's namespace if it does not exist",
      success: { status: 200, schema: s.namespaceResultSchema },
      handler: async ({ ns }) => (await platform.ensureNamespace(ns), { namespace: ns }),
    },
    {
      method: 'GET',
      url: '/namespaces/:ns/functions',
      summary: 'List functions',
      success: { status: 200, schema: s.arrayOf(s.functionSchema) },
      handler: async ({ ns }) => (await platform.listFunctions(ns)).map((f) => map.functionJson(f, opts.maxReplicas)),
    },
    {
      method: 'POST',
      url: '/namespaces/:ns/functions',
      summary: 'Create a function (then upload its code)',
      lenient: true,
      body: s.functionCreateSchema,
      success: { status: 201, schema: s.functionSchema },
      handler: async ({ ns }, body) => {
        const b = body as map.FunctionBody & { name: string; runtime: Runtime };
        map.assertScale(b.scale, opts.maxReplicas);
        return map.functionJson(await platform.createFunction(ns, map.functionInput(b.name, b)), opts.maxReplicas);
      },
    },
    {
      method: 'GET',
      url: fnRoot,
      summary: 'Get a function',
      success: { status: 200, schema: s.functionSchema },
      handler: async ({ ns, name }) => map.functionJson(await platform.getFunction(ns, name), opts.maxReplicas),
    },
    {
      method: 'PUT',
      url: fnRoot,
      summary: 'Change a function’s settings: only the fields the body carries (409 when git manages it)',
      lenient: true,
      body: s.functionUpdateSchema,
      success: { status: 200, schema: s.functionSchema },
      handler: async ({ ns, name }, body) => {
        const b = body as map.FunctionBody;
        if (b.name !== undefined && b.name !== name) {
          throw new HttpError('bad_request', `the body names function "${b.name}" but the path names "${name}"; renaming is not supported`);
        }
        map.assertScale(b.scale, opts.maxReplicas);
        const current = await platform.getFunction(ns, name);
        return map.functionJson(await platform.updateFunction(ns, name, map.functionUpdateInput(current, b)), opts.maxReplicas);
      },
    },
    {
      method: 'DELETE',
      url: fnRoot,
      summary: 'Delete a function (409 when git manages it)',
      success: { status: 204 },
      handler: async ({ ns, name }) => platform.deleteFunction(ns, name),
    },
    {
      method: 'POST',
      url: `${fnRoot}/upload`,
      summary: 'Upload the function’s code as a zip: raw body (application/zip) or multipart field "file"',
      upload: true,
      success: { status: 200, schema: s.functionSchema },
      handler: async ({ ns, name }, body) => {
        // Unpacked to disk as it inflates; from here on the platform owns (and removes) the folder.
        const code = await unpackZip(body as Buffer, platform.uploadsDir, opts.zipLimits).catch((err: unknown) => {
          if (err instanceof ZipError) throw new HttpError(err.tooLarge ? 'payload_too_large' : 'invalid_zip', err.message, { cause: err });
          throw err;
        });
        return map.functionJson(await platform.uploadCode(ns, name, code));
      },
    },
    {
      method: 'GET',
      url: `${fnRoot}/source`,
      summary: 'The function’s code: JSON (its files) by default, the zip for Accept: application/zip',
      success: { status: 200, schema: s.sourceSchema, alternatives: { 'application/zip': { type: 'string', format: 'binary' } } },
      handler: async ({ ns, name }, _body, _query, reply) => {
        const files = await platform.getSource(ns, name);
        void reply.header('vary', 'accept');
        if (!wantsZip(reply.request.headers.accept)) return map.sourceJson(files);
        void reply.type('application/zip').header('content-disposition', `attachment; filename="${name}.zip"`);
        return writeZip(files);
      },
    },
    {
      method: 'GET',
      url: `${fnRoot}/invocations`,
      summary: 'Recent calls through /fn, newest first',
      querystring: s.limitQuerySchema,
      success: { status: 200, schema: s.arrayOf(s.invocationSchema) },
      handler: async ({ ns, name }, _body, query) => {
        await platform.getFunction(ns, name);
        return (await opts.invocationLog.list(ns, name, limitOf(query))).map(map.invocationJson);
      },
    },
    logsRoute(platform),
    {
      method: 'GET',
      url: `${fnRoot}/builds`,
      summary: 'Recent image builds, newest first',
      querystring: s.limitQuerySchema,
      success: { status: 200, schema: s.arrayOf(s.buildSchema) },
      handler: async ({ ns, name }, _body, query) => {
        await platform.getFunction(ns, name);
        return (await opts.buildLog.list(ns, name, limitOf(query))).map(map.buildJson);
      },
    },
    ...revisionRoutes(platform, fnRoot, opts.maxReplicas),
    {
      method: 'GET',
      url: '/namespaces/:ns/triggers',
      summary: 'List triggers',
      success: { status: 200, schema: s.arrayOf(s.triggerSchema) },
      handler: async ({ ns }) => (await platform.listTriggers(ns)).map(map.triggerJson),
    },
    {
      method: 'POST',
      url: '/namespaces/:ns/triggers',
      summary: 'Create a trigger',
      lenient: true,
      body: s.triggerCreateSchema,
      success: { status: 201, schema: s.triggerSchema },
      handler: async ({ ns }, body) => map.triggerJson(await platform.createTrigger(ns, map.triggerInput(body as map.TriggerBody))),
    },
    {
      method: 'GET',
      url: '/namespaces/:ns/triggers/:name',
      summary: 'Get a trigger',
      success: { status: 200, schema: s.triggerSchema },
      handler: async ({ ns, name }) => map.triggerJson(await platform.getTrigger(ns, name)),
    },
    {
      method: 'PATCH',
      url: '/namespaces/:ns/triggers/:name',
      summary: 'Enable or disable a trigger',
      lenient: true,
      body: s.triggerPatchSchema,
      success: { status: 200, schema: s.triggerSchema },
      handler: async ({ ns, name }, body) =>
        map.triggerJson(await platform.setTriggerEnabled(ns, name, (body as { enabled: boolean }).enabled)),
    },
    {
      method: 'DELETE',
      url: '/namespaces/:ns/triggers/:name',
      summary: 'Delete a trigger',
      success: { status: 204 },
      handler: async ({ ns, name }) => platform.deleteTrigger(ns, name),
    },
    {
      method: 'GET',
      url: '/namespaces/:ns/jobs',
      summary: 'List jobs, each with its phase and output',
      success: { status: 200, schema: s.arrayOf(s.jobSchema) },
      handler: async ({ ns }) => (await platform.listJobs(ns)).map(map.jobJson),
    },
    {
      method: 'POST',
      url: '/namespaces/:ns/jobs',
      summary: 'Run a function once as a job',
      lenient: true,
      body: s.jobCreateSchema,
      success: { status: 201, schema: s.jobSchema },
      handler: async ({ ns }, body) => map.jobJson(await platform.createJob(ns, map.jobInput(body as map.JobBody))),
    },
    {
      method: 'GET',
      url: '/namespaces/:ns/jobs/:name',
      summary: 'Get a job and its output',
      success: { status: 200, schema: s.jobSchema },
      handler: async ({ ns, name }) => map.jobJson(await platform.getJob(ns, name)),
    },
    {
      method: 'DELETE',
      url: '/namespaces/:ns/jobs/:name',
      summary: 'Delete a job',
      success: { status: 204 },
      handler: async ({ ns, name }) => platform.deleteJob(ns, name),
    },
    {
      method: 'GET',
      url: '/namespaces/:ns/repositories',
      summary: 'List function repositories',
      success: { status: 200, schema: s.arrayOf(s.repositorySchema) },
      handler: async ({ ns }) => (await platform.listRepositories(ns)).map(map.repositoryJson),
    },
    {
      method: 'POST',
      url: '/namespaces/:ns/repositories',
      summary: 'Watch a git repository (credentials and webhook secret go into a Secret and never come out)',
      body: s.repositoryCreateSchema,
      success: { status: 201, schema: s.repositorySchema },
      handler: async ({ ns }, body) =>
        map.repositoryJson(await platform.createRepository(ns, map.repositoryInput(body as map.RepositoryBody))),
    },
    {
      method: 'GET',
      url: '/namespaces/:ns/repositories/:name',
      summary: 'Get a function repository and its sync status',
      success: { status: 200, schema: s.repositorySchema },
      handler: async ({ ns, name }) => map.repositoryJson(await platform.getRepository(ns, name)),
    },
    {
      method: 'DELETE',
      url: '/namespaces/:ns/repositories/:name',
      summary: 'Stop watching a repository (its functions are removed when prune is on)',
      success: { status: 204 },
      handler: async ({ ns, name }) => platform.deleteRepository(ns, name),
    },
    {
      method: 'POST',
      url: '/namespaces/:ns/repositories/:name/sync',
      summary: 'Ask for a sync now (202; coalesces with one already pending)',
      success: { status: 202, schema: s.statusResultSchema },
      handler: async ({ ns, name }) => {
        await platform.getRepository(ns, name);
        await platform.requestSync(ns, name, 'api');
        return { status: 'sync requested' };
      },
    },
    ...previewRoutes(platform),
  ];

  const document = openApiDocument(routes, '/v1');
  app.get('/openapi.json', { config: { public: true } }, async () => document);

  const register = (scope: FastifyInstance, route: ApiRoute) => {
    const options: RouteShorthandOptions = {
      schema: {
        params: paramsSchema(route.url),
        ...(route.body ? { body: route.body } : {}),
        ...(route.querystring ? { querystring: route.querystring } : {}),
        response: {
          ...(route.success.schema ? { [route.success.status]: route.success.schema } : {}),
          '4xx': s.errorSchema,
          '5xx': s.errorSchema,
        },
      },
    };
    scope.route({
      method: route.method,
      url: route.url,
      ...options,
      ...(route.lenient && route.body ? { preValidation: ignoreUnknownFields(route.body) } : {}),
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const body = route.upload ? await uploadedZip(request, opts.zipLimits) : request.body;
        const result = await route.handler(request.params as Params, body, (request.query ?? {}) as Record<string, string>, reply);
        void reply.code(route.success.status);
        return route.success.status === 204 ? reply.send() : result;
      },
    });
  };

  for (const route of routes.filter((r) => !r.upload)) register(app, route);
  // The upload route takes raw zips and multipart; its parsers live in their own scope so no other
  // /v1 route accepts a 50 MB body. A raw body is a zip by its bytes, whatever its content type (or none).
  const gate = new UploadGate(opts.uploadCaps);
  await app.register(async (scope) => {
    // After the token check (the parent's hook), before the body is read: a full gate costs no upload.
    scope.addHook('onRequest', async (request, reply) => {
      const slot = gate.acquire((request.params as Partial<Params>).ns ?? '');
      if (!slot.ok) throw new HttpError('too_many_requests', `${slot.reason}; retry in ${slot.retryAfterSec} s`, { retryAfterSec: slot.retryAfterSec });
      reply.raw.once('close', slot.release);
    });
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: opts.zipLimits.compressedBytes }, (_r, body, done) => done(null, body));
    await scope.register(multipart, {
      limits: { fileSize: opts.zipLimits.compressedBytes, files: 1, fields: 10, parts: 20 },
    });
    for (const route of routes.filter((r) => r.upload)) register(scope, { ...route });
  });
}

async function uploadedZip(request: FastifyRequest, limits: ZipLimits): Promise<Buffer> {
  if (!request.isMultipart()) {
    if (!Buffer.isBuffer(request.body)) {
      throw new HttpError('invalid_zip', `send the zip as the raw body (e.g. application/zip) or in multipart/form-data field "file"`);
    }
    return request.body;
  }
  const part = await request.file({ limits: { fileSize: limits.compressedBytes } });
  if (!part) throw new HttpError('bad_request', 'the multipart body has no file; send the zip in field "file"');
  if (part.fieldname !== 'file') throw new HttpError('bad_request', `the zip must be in multipart field "file", not "${part.fieldname}"`);
  return part.toBuffer();
}

/** Whether an Accept header asks for the zip (a zip type named before, or without, application/json). */
function wantsZip(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((part) => part.split(';')[0]?.trim().toLowerCase() ?? '');
  const zip = types.findIndex((t) => ZIP_TYPES.includes(t));
  const json = types.findIndex((t) => t === 'application/json');
  return zip >= 0 && (json < 0 || zip < json);
}

/**
 * For the old routes: drops the body's top-level fields the schema does not know and names them in a
 * `Warning: 299` header, so a client written against the old server keeps working and can see what
 * was ignored.
 */
function ignoreUnknownFields(schema: object) {
  const known = new Set(Object.keys((schema as { properties?: object }).properties ?? {}));
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return;
    const unknown = Object.keys(body).filter((k) => !known.has(k));
    if (unknown.length === 0) return;
    const kept = Object.fromEntries(Object.entries(body).filter(([k]) => known.has(k)));
    request.body = kept;
    const names = unknown.map((k) => k.replace(/[^\x20-\x7e]|["\\]/g, '?')).join(', ');
    void reply.header('warning', `299 sless "unknown fields ignored: ${names}"`);
  };
}

function limitOf(query: Record<string, string>): number {
  const n = query.limit === undefined ? 100 : Number(query.limit);
  if (n < 1 || n > 1000) throw new HttpError('bad_request', `limit must be between 1 and 1000, not ${query.limit}`);
  return n;
}

function paramsSchema(url: string) {
  const names = [...url.matchAll(/:(\w+)/g)].map((m) => m[1] as string);
  return {
    type: 'object',
    required: names,
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$', maxLength: 63 }])),
  };
}
