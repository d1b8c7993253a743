// /v1/openapi.json (OpenAPI 3.1, whose schemas are JSON Schema, so the validation schemas fit as
// they are), assembled from the same route table and schemas that validate requests.
import type { FastifyReply } from 'fastify';

export interface ApiRoute {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** fastify syntax, relative to the prefix: /namespaces/:ns/... */
  readonly url: string;
  readonly summary: string;
  readonly body?: object;
  readonly querystring?: { properties: Record<string, object> };
  /** A zip in the body (raw or multipart field "file") instead of JSON. */
  readonly upload?: boolean;
  /**
   * A route the old server had: unknown top-level fields of the body are ignored (and named in a
   * `Warning` header) instead of refused, as Go's encoding/json did.
   */
  readonly lenient?: boolean;
  readonly success: {
    readonly status: number;
    readonly schema?: object;
    readonly contentType?: string;
    /** With contentType: the schema of each record of a streamed answer (application/x-ndjson: each line). */
    readonly itemSchema?: object;
    /** Other representations a client can ask for with Accept, e.g. a zip: content type -> schema. */
    readonly alternatives?: Readonly<Record<string, object>>;
  };
  readonly handler: (
    params: { ns: string; name: string },
    body: unknown,
    query: Record<string, string>,
    reply: FastifyReply,
  ) => Promise<unknown>;
}

const errorRef = { $ref: '#/components/schemas/Error' };

export function openApiDocument(routes: readonly ApiRoute[], prefix: string): object {
  const paths: Record<string, Record<string, object>> = {};
  for (const route of routes) {
    const path = prefix + route.url.replace(/:(\w+)/g, '{$1}');
    const params = [...route.url.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
    }));
    const query = Object.entries(route.querystring?.properties ?? {}).map(([name, schema]) => ({ name, in: 'query', schema }));
    const success =
      route.success.status === 204
        ? { description: 'done' }
        : {
            description: 'ok',
            content: {
              ...(route.success.contentType
                ? { [route.success.contentType]: { schema: route.success.itemSchema ?? { type: 'string', format: 'binary' } } }
                : { 'application/json': { schema: route.success.schema ?? {} } }),
              ...Object.fromEntries(Object.entries(route.success.alternatives ?? {}).map(([type, schema]) => [type, { schema }])),
            },
          };
    const zip = { type: 'string', format: 'binary' };
    const requestBody = route.upload
      ? {
          required: true,
          content: {
            'application/zip': { schema: zip },
            'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: zip } } },
          },
        }
      : route.body
        ? { required: true, content: { 'application/json': { schema: route.body } } }
        : undefined;
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.lenient ? `${route.summary}. Unknown fields are ignored and named in a Warning header` : route.summary,
      parameters: [...params, ...query],
      ...(requestBody ? { requestBody } : {}),
      responses: {
        [route.success.status]: success,
        '4XX': { description: 'client error', content: { 'application/json': { schema: errorRef } } },
        '5XX': { description: 'server error', content: { 'application/json': { schema: errorRef } } },
      },
      security: [{ bearer: [] }],
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'sless management API', version: 'v1' },
    paths: { ...paths, ...proxyPaths() },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Error: { type: 'object', required: ['error', 'code'], properties: { error: { type: 'string' }, code: { type: 'string' } } },
      },
    },
  };
}

const PROXY_METHODS = ['get', 'post', 'put', 'patch', 'delete', 'head', 'options'] as const;

/** The public invoke proxy (docs/contract.md §3): no token, any method, the function answers. */
function proxyPaths(): Record<string, Record<string, object>> {
  const param = (name: string, description: string) => ({ name, in: 'path', required: true, description, schema: { type: 'string' } });
  const error = (description: string) => ({ description, content: { 'application/json': { schema: errorRef } } });
  const operation = (rest: boolean) => ({
    summary: `Call the function${rest ? ' with a sub-path (handed to it as context.path)' : ''}`,
    description:
      'Forwards the method, path, query, headers and streamed body to the function and streams its answer back; ' +
      'hop-by-hop headers are dropped and X-Forwarded-* added. Every answer carries X-Request-Id.',
    parameters: [
      param('namespace', 'the function\'s namespace'),
      param('name', 'the function\'s name'),
      ...(rest ? [param('rest', 'the rest of the path, any number of segments')] : []),
    ],
    requestBody: { required: false, content: { '*/*': { schema: {} } } },
    responses: {
      default: { description: "the function's own answer (status, headers and body as it returns them)" },
      '404': error('no such function'),
      '413': error('the body is larger than the limit (SLESS_MAX_BODY_BYTES, default 6 MiB)'),
      '502': error('the function could not be reached'),
      '503': error('the function is disabled (its http triggers are all disabled) or not ready yet'),
      '504': error('the function took longer than its timeout_sec'),
    },
    security: [],
  });
  const ops = (rest: boolean) => Object.fromEntries(PROXY_METHODS.map((m) => [m, operation(rest)]));
  return { '/fn/{namespace}/{name}': ops(false), '/fn/{namespace}/{name}/{rest}': ops(true) };
}
