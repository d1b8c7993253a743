// Pull-request previews as the console shows them (docs/previews.md), pure: the open previews of each
// repository on the Repositories page, and the badge on the functions of a preview namespace
// (`<namespace>-pr-<N>`) that links back to its pull request's entry there.
import { parsePreviewNamespace } from '../preview/preview-name.ts';
import type { PreviewRecord } from '../platform/types.ts';
import { consolePaths, phaseTone, timeView, type PhaseTone, type TimeView } from './view-models.ts';

export interface PreviewFunctionView {
  readonly name: string;
  readonly state: string;
  readonly tone: PhaseTone;
  /** The console page of the function that answers: the preview's own for built ones, production's for the others. */
  readonly href?: string;
  /** The /fn URL that answers (the preview URL for built functions). */
  readonly url?: string;
  readonly phase?: string;
}

export interface PreviewView {
  readonly number: number;
  /** Anchor on the Repositories page (`#pr-<N>`). */
  readonly id: string;
  readonly namespace: string;
  readonly repository: string;
  readonly branch: string;
  readonly head: string;
  readonly headShort: string;
  readonly url: string;
  readonly expires?: TimeView;
  /** "2 built, 5 from production, 1 removed". */
  readonly summary: string;
  /** The preview namespace's functions page. */
  readonly href: string;
  readonly functions: readonly PreviewFunctionView[];
}

const STATE_TONE: Readonly<Record<string, PhaseTone>> = { built: 'ok', production: 'idle', removed: 'idle', failed: 'bad' };

export function previewView(p: PreviewRecord, baseNamespace: string): PreviewView {
  const counts = new Map<string, number>();
  for (const f of p.functions) counts.set(f.state, (counts.get(f.state) ?? 0) + 1);
  const parts = [
    ['built', 'built'],
    ['production', 'from production'],
    ['removed', 'removed'],
    ['failed', 'failed'],
  ].flatMap(([state, text]) => (counts.get(state as string) ? [`${counts.get(state as string)} ${text}`] : []));
  return {
    number: p.number,
    id: `pr-${p.number}`,
    namespace: p.namespace,
    repository: p.repository,
    branch: p.branch,
    head: p.head,
    headShort: /^[0-9a-f]{40}$/.test(p.head) ? p.head.slice(0, 7) : p.head,
    url: p.url,
    expires: timeView(p.expiresAt),
    summary: parts.length > 0 ? parts.join(', ') : 'not planned yet',
    href: consolePaths.functions(p.namespace),
    functions: p.functions.map((f) => {
      // A built function's phase colours it (Building, Failed); the others say where they answer from.
      const tone = f.state === 'built' && f.phase ? phaseTone(f.phase) : (STATE_TONE[f.state] ?? 'idle');
      const href = f.state === 'built' || f.state === 'failed' ? consolePaths.fn(p.namespace, f.name) : f.state === 'production' ? consolePaths.fn(baseNamespace, f.name) : undefined;
      return { name: f.name, state: f.state, tone, ...(href ? { href } : {}), ...(f.url ? { url: f.url } : {}), ...(f.phase ? { phase: f.phase } : {}) };
    }),
  };
}

/** The previews of each repository of `namespace`, by repository name then PR number. */
export function previewsByRepository(previews: readonly PreviewRecord[], namespace: string): ReadonlyMap<string, PreviewView[]> {
  const out = new Map<string, PreviewView[]>();
  for (const p of [...previews].sort((a, b) => a.number - b.number)) {
    const list = out.get(p.repository) ?? [];
    list.push(previewView(p, namespace));
    out.set(p.repository, list);
  }
  return out;
}

/** The badge of a preview namespace's functions: which pull request, and where its entry is. */
export interface PreviewBadge {
  readonly number: number;
  readonly branch: string;
  readonly baseNamespace: string;
  readonly repository: string;
  /** The pull request's entry on the base namespace's Repositories page. */
  readonly href: string;
}

/**
 * The badge when `namespace` is an open preview (one of `basePreviews`, the open previews of the base
 * namespace its name points at); a namespace that only looks like one gets none.
 */
export function previewBadge(namespace: string, basePreviews: readonly PreviewRecord[]): PreviewBadge | undefined {
  const parsed = parsePreviewNamespace(namespace);
  const p = parsed && basePreviews.find((r) => r.namespace === namespace);
  if (!parsed || !p) return undefined;
  return { number: p.number, branch: p.branch, baseNamespace: parsed.namespace, repository: p.repository, href: `${consolePaths.repositories(parsed.namespace)}#pr-${p.number}` };
}
