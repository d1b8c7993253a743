// /v1 revisions and rollback (issue 33, docs/rollback.md): the kept revisions of a function, a rollback
// that serves one of them at once and pins the function to it, and its undo. Part of api-plugin.ts's
// route table (and so of /v1/openapi.json).
import type { Platform, RevisionRecord } from '../platform/types.ts';
import * as map from './api-mappers.ts';
import * as s from './api-schemas.ts';
import type { ApiRoute } from './openapi.ts';

const str = { type: 'string' } as const;
const time = { type: 'string', format: 'date-time' } as const;

export const revisionSchema = {
  type: 'object',
  properties: {
    revision: { type: 'integer' },
    code_hash: str,
    image: { type: 'string', description: 'what runs it: an image reference, `local:<build key>` in sless dev' },
    commit: { type: 'string', description: 'the git commit it came from (git-managed functions)' },
    live_from: time,
    live_until: { type: ['string', 'null'], format: 'date-time', description: 'null for the live revision' },
  },
} as const;

export const rollbackBodySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    revision: { type: 'integer', minimum: 1, description: 'the revision to serve; left out: the one before the live one' },
  },
} as const;

export function revisionJson(r: RevisionRecord) {
  return {
    revision: r.revision,
    code_hash: r.codeHash,
    image: r.image,
    commit: r.commit,
    live_from: r.liveFrom,
    live_until: r.liveUntil ?? null,
  };
}

export function revisionRoutes(platform: Platform, fnRoot: string, maxReplicas?: number): ApiRoute[] {
  return [
    {
      method: 'GET',
      url: `${fnRoot}/revisions`,
      summary: 'The kept revisions (the last 10 that went live), by number; live_until null for the live one',
      success: { status: 200, schema: s.arrayOf(revisionSchema) },
      handler: async ({ ns, name }) => (await platform.listRevisions(ns, name)).map(revisionJson),
    },
    {
      method: 'POST',
      url: `${fnRoot}/rollback`,
      summary: 'Serve a kept revision at once (no build) and pin the function to it; new code builds but waits (400 when there is no such revision)',
      body: rollbackBodySchema,
      success: { status: 200, schema: s.functionSchema },
      handler: async ({ ns, name }, body) => {
        const revision = (body as { revision?: number } | undefined)?.revision;
        return map.functionJson(await platform.rollback(ns, name, revision), maxReplicas);
      },
    },
    {
      method: 'DELETE',
      url: `${fnRoot}/rollback`,
      summary: 'Undo a rollback: the function’s own spec (git’s head, the last upload) serves again',
      success: { status: 200, schema: s.functionSchema },
      handler: async ({ ns, name }) => map.functionJson(await platform.undoRollback(ns, name), maxReplicas),
    },
  ];
}
