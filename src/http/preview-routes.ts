// GET /v1/namespaces/{ns}/previews: the open pull-request previews of the namespace's repositories
// (docs/previews.md). Kept apart from api-plugin.ts, which lists it with the other routes.
import type { Platform, PreviewRecord } from '../platform/types.ts';
import type { ApiRoute } from './openapi.ts';

const str = { type: 'string' } as const;

export const previewSchema = {
  type: 'object',
  required: ['number', 'branch', 'head', 'url', 'expires_at', 'functions'],
  properties: {
    number: { type: 'integer' },
    namespace: { ...str, description: 'the preview namespace, <namespace>-pr-<number>' },
    repository: str,
    branch: { ...str, description: "the pull request's head branch" },
    head: { ...str, description: 'the head commit the preview was last built from' },
    url: { ...str, description: '/fn/<namespace>-pr-<number>/ on this server' },
    expires_at: { type: 'string', format: 'date-time', description: 'spec.previews.ttl after the last push' },
    functions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'state'],
        properties: {
          name: str,
          state: { type: 'string', enum: ['built', 'production', 'removed', 'failed'] },
          phase: { ...str, description: 'for functions the preview runs itself' },
          url: { ...str, description: 'the preview URL for built functions, the production URL for the others' },
        },
      },
    },
  },
} as const;

export function previewJson(p: PreviewRecord) {
  return {
    number: p.number,
    namespace: p.namespace,
    repository: p.repository,
    branch: p.branch,
    head: p.head,
    url: p.url,
    expires_at: p.expiresAt,
    functions: p.functions.map((f) => ({ name: f.name, state: f.state, ...(f.phase ? { phase: f.phase } : {}), ...(f.url ? { url: f.url } : {}) })),
  };
}

export function previewRoutes(platform: Platform): ApiRoute[] {
  return [
    {
      method: 'GET',
      url: '/namespaces/:ns/previews',
      summary: 'List the open pull-request previews of the namespace’s repositories (empty when previews are off)',
      success: { status: 200, schema: { type: 'array', items: previewSchema } },
      handler: async ({ ns }) => ((await platform.previews?.list(ns)) ?? []).map(previewJson),
    },
  ];
}
