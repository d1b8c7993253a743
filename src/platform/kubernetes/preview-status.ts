// A FunctionRepository's `status.previews` (written by the leader's controller, one entry per open
// pull-request preview) as /fn and /v1 read it, and the PreviewRecords /v1 and the console show. Pure:
// the watches (kube-preview-serving.ts) and the reads before they have listed both go through here.
// Entries come from the API server: one that does not have the shape is left out, never a crash.
import { PREVIEW_DEFAULTS, ttlToMs } from '../../preview/preview-settings.ts';
import type { PreviewFunctionState } from '../../preview/preview-plan.ts';
import type { FunctionPhase, PreviewRecord } from '../types.ts';
import { publicFunctionUrl } from './records.ts';

const STATES: ReadonlySet<string> = new Set<PreviewFunctionState>(['built', 'production', 'removed', 'failed']);

export interface PreviewEntry {
  readonly number: number;
  readonly namespace: string;
  readonly branch: string;
  readonly head: string;
  readonly updatedAt: string;
  readonly planned: boolean;
  readonly functions: readonly { readonly name: string; readonly state: PreviewFunctionState }[];
}

/** What is read of a repository: its name and namespace, `spec.previews.ttl`, `status.previews`. */
export interface RepositoryPreviews {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: object;
  readonly status?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The well-formed entries of `status.previews`, each cut down to what /fn and /v1 read. */
export function previewEntriesOf(status: unknown): PreviewEntry[] {
  const raw = isObject(status) ? status['previews'] : undefined;
  if (!Array.isArray(raw)) return [];
  const out: PreviewEntry[] = [];
  for (const e of raw as unknown[]) {
    if (!isObject(e)) continue;
    const { number, namespace, branch, head, updatedAt, planned, functions } = e;
    if (typeof number !== 'number' || typeof namespace !== 'string') continue;
    const fns = Array.isArray(functions)
      ? (functions as unknown[]).flatMap((f) =>
          isObject(f) && typeof f['name'] === 'string' && typeof f['state'] === 'string' && STATES.has(f['state'])
            ? [{ name: f['name'], state: f['state'] as PreviewFunctionState }]
            : [],
        )
      : [];
    out.push({
      number,
      namespace,
      branch: typeof branch === 'string' ? branch : '',
      head: typeof head === 'string' ? head : '',
      updatedAt: typeof updatedAt === 'string' ? updatedAt : '',
      planned: planned === true,
      functions: fns,
    });
  }
  return out;
}

/** `status.previews` as the serving watch keeps it (serving-cache.ts trimRepository). */
export function trimPreviewStatus(status: unknown): { previews: PreviewEntry[] } | undefined {
  const entries = previewEntriesOf(status);
  return entries.length > 0 ? { previews: entries } : undefined;
}

/** spec.previews.ttl in ms; the default when absent or not a duration (the CRD's pattern refuses those). */
function ttlMsOf(spec: object | undefined): number {
  const previews = isObject(spec) ? spec['previews'] : undefined;
  const ttl = isObject(previews) && typeof previews['ttl'] === 'string' ? previews['ttl'] : PREVIEW_DEFAULTS.ttl;
  return ttlToMs(ttl) ?? (ttlToMs(PREVIEW_DEFAULTS.ttl) as number);
}

/** The open preview of `previewNamespace` among a namespace's repositories, if any. */
export function previewEntryFor(repositories: readonly RepositoryPreviews[], previewNamespace: string): PreviewEntry | undefined {
  for (const r of repositories) {
    const found = previewEntriesOf(r.status).find((e) => e.namespace === previewNamespace);
    if (found) return found;
  }
  return undefined;
}

export interface PreviewRecordInputs {
  readonly repositories: readonly RepositoryPreviews[];
  /** The phase of a Function in a preview namespace (undefined: no such Function). */
  readonly phaseOf: (namespace: string, name: string) => FunctionPhase | undefined;
  readonly publicBaseUrl: string | undefined;
}

/**
 * The open previews of a namespace's repositories, by PR number: expires_at = updatedAt + spec.previews.ttl,
 * the phase of the functions the preview runs itself, the preview URL for those and the production URL
 * for the ones that answer from production.
 */
export function previewRecords(input: PreviewRecordInputs): PreviewRecord[] {
  const out: PreviewRecord[] = [];
  for (const r of input.repositories) {
    const baseNamespace = r.metadata?.namespace ?? '';
    const ttlMs = ttlMsOf(r.spec);
    for (const p of previewEntriesOf(r.status)) {
      const updated = Date.parse(p.updatedAt);
      out.push({
        number: p.number,
        namespace: p.namespace,
        repository: r.metadata?.name ?? '',
        branch: p.branch,
        head: p.head,
        url: publicFunctionUrl(input.publicBaseUrl, p.namespace, ''),
        expiresAt: Number.isNaN(updated) ? '' : new Date(updated + ttlMs).toISOString(),
        functions: p.functions.map((f) => {
          const phase = f.state === 'built' || f.state === 'failed' ? input.phaseOf(p.namespace, f.name) : undefined;
          const url =
            f.state === 'built' ? publicFunctionUrl(input.publicBaseUrl, p.namespace, f.name) : f.state === 'production' ? publicFunctionUrl(input.publicBaseUrl, baseNamespace, f.name) : undefined;
          return { name: f.name, state: f.state, ...(phase ? { phase } : {}), ...(url ? { url } : {}) };
        }),
      });
    }
  }
  return out.sort((a, b) => a.number - b.number || a.repository.localeCompare(b.repository));
}
