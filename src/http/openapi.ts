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
  readonly success: { readonly status: number; readonly schema?: object; readonly contentType?: string };
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
            content: route.success.contentType
              ? { [route.success.contentType]: { schema: { type: 'string', format: 'binary' } } }
              : { 'application/json': { schema: route.success.schema ?? {} } },
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
      summary: route.summary,
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
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
      schemas: {
        Error: { type: 'object', required: ['error', 'code'], properties: { error: { type: 'string' }, code: { type: 'string' } } },
      },
    },
  };
}
