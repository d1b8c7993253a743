// What each console page reads from the platform and the logs, in parallel, and turns into view
// models. The same Platform methods as /v1, so the console works on both platforms alike.
import { PlatformError, type CodeFile, type FunctionRecord, type JobRecord, type Platform, type PreviewRecord, type RepositoryRecord, type TriggerRecord } from '../platform/types.ts';
import { parsePreviewNamespace } from '../preview/preview-name.ts';
import { previewBadge, previewsByRepository, type PreviewBadge, type PreviewView } from './previews-view.ts';
import type { BuildLog, BuildRecord, InvocationLog, InvocationRecord } from '../store/types.ts';
import type { FunctionFilter } from './function-filter.ts';
import { sourceView, type SourceFileView } from './source-view.ts';
import {
  buildView,
  folderProblems,
  functionRow,
  invocationView,
  isBusy,
  jobView,
  manifestFileOf,
  repositoryView,
  triggerView,
  type BuildView,
  type FolderProblem,
  type FunctionRow,
  type InvocationView,
  type JobView,
  type RepositoryView,
  type TriggerView,
} from './view-models.ts';

export interface PageSources {
  readonly platform: Platform;
  readonly invocationLog: InvocationLog;
  readonly buildLog: BuildLog;
  readonly visible: FunctionFilter;
  readonly now: () => number;
}

export const RECENT_INVOCATIONS = 10;
export const RECENT_BUILDS = 10;

/** The function, unless the console hides it (then it does not exist here). */
export async function visibleFunction(src: PageSources, ns: string, name: string): Promise<FunctionRecord> {
  if (!src.visible(name)) throw new PlatformError('not_found', `function ${ns}/${name} does not exist`);
  return src.platform.getFunction(ns, name);
}

export async function visibleFunctions(src: PageSources, ns: string): Promise<FunctionRecord[]> {
  const all = await src.platform.listFunctions(ns);
  return all.filter((f) => src.visible(f.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Repositories are extra detail on most pages: a platform that cannot list them shows none. */
async function repositoriesOrNone(src: PageSources, ns: string): Promise<RepositoryRecord[]> {
  return src.platform.listRepositories(ns).catch(() => []);
}

/** Previews are extra detail too: a platform without them, or failing to list them, shows none. */
async function previewsOrNone(src: PageSources, ns: string): Promise<PreviewRecord[]> {
  return (await src.platform.previews?.list(ns).catch(() => [])) ?? [];
}

/** The preview badge of a namespace that is an open preview (`<namespace>-pr-<N>`). */
async function badgeOf(src: PageSources, ns: string): Promise<PreviewBadge | undefined> {
  const parsed = parsePreviewNamespace(ns);
  return parsed ? previewBadge(ns, await previewsOrNone(src, parsed.namespace)) : undefined;
}

export interface FunctionsPage {
  readonly records: FunctionRecord[];
  /** Set when the namespace is an open pull-request preview. */
  readonly preview?: PreviewBadge;
  readonly rows: FunctionRow[];
  readonly problems: FolderProblem[];
  readonly summary: string;
  readonly busy: boolean;
}

export function summaryOf(records: readonly FunctionRecord[]): string {
  if (records.length === 0) return 'No functions.';
  const counts = new Map<string, number>();
  for (const f of records) counts.set(f.phase, (counts.get(f.phase) ?? 0) + 1);
  const parts = ['Ready', 'Building', 'Pending', 'Failed'].filter((p) => counts.has(p)).map((p) => `${counts.get(p)} ${p}`);
  return `${records.length} function${records.length === 1 ? '' : 's'}: ${parts.join(', ')}.`;
}

export async function functionsPage(src: PageSources, ns: string): Promise<FunctionsPage> {
  const [records, repositories, preview] = await Promise.all([visibleFunctions(src, ns), repositoriesOrNone(src, ns), badgeOf(src, ns)]);
  return {
    records,
    ...(preview ? { preview } : {}),
    rows: records.map((f) => functionRow(f)),
    problems: folderProblems(repositories).filter((p) => p.lines.length > 0),
    summary: summaryOf(records),
    busy: isBusy(records.map((f) => f.phase)),
  };
}

export interface FunctionPage {
  readonly record: FunctionRecord;
  /** Set when the function is in an open pull-request preview's namespace. */
  readonly preview?: PreviewBadge;
  /** The records behind the views, for the page's JSON answer. */
  readonly raw: {
    readonly triggers: TriggerRecord[];
    readonly jobs: JobRecord[];
    readonly invocations: InvocationRecord[];
    readonly builds: BuildRecord[];
  };
  readonly fn: FunctionRow;
  readonly manifest?: { repository: string; url?: string; file: string };
  readonly triggers: TriggerView[];
  readonly schedules: TriggerView[];
  /** Queue triggers, with their last readings (lag, in flight, dead letters). */
  readonly queues: TriggerView[];
  readonly jobs: JobView[];
  readonly invocations: InvocationView[];
  readonly builds: BuildView[];
  readonly files?: SourceFileView[];
  readonly sourceMissing: string;
  readonly busy: boolean;
}

/** The code, or why there is none to show yet (a function made through /v1 before its upload). */
export async function sourceOf(src: PageSources, ns: string, name: string): Promise<{ files?: CodeFile[]; missing: string }> {
  try {
    return { files: await src.platform.getSource(ns, name), missing: '' };
  } catch (err) {
    if (err instanceof PlatformError && err.code === 'not_found') return { missing: err.message };
    throw err;
  }
}

export async function functionPage(src: PageSources, ns: string, name: string): Promise<FunctionPage> {
  const record = await visibleFunction(src, ns, name);
  const [triggers, jobs, repositories, invocations, builds, source, preview] = await Promise.all([
    src.platform.listTriggers(ns),
    src.platform.listJobs(ns),
    record.managedBy === 'api' ? Promise.resolve([]) : repositoriesOrNone(src, ns),
    src.invocationLog.list(ns, name, RECENT_INVOCATIONS),
    src.buildLog.list(ns, name, RECENT_BUILDS),
    sourceOf(src, ns, name),
    badgeOf(src, ns),
  ]);
  const now = src.now();
  const manifest = manifestFileOf(record, repositories);
  const ownTriggers = triggers
    .filter((t) => t.functionRef === name)
    .sort((a, b) => (a.type === b.type ? (a.name < b.name ? -1 : 1) : a.type === 'http' ? -1 : 1));
  const own = ownTriggers.map((t) => triggerView(t, manifest, now));
  const ownJobs = jobs.filter((j) => j.functionRef === name).sort((a, b) => (a.name < b.name ? -1 : 1));
  return {
    record,
    ...(preview ? { preview } : {}),
    raw: { triggers: ownTriggers, jobs: ownJobs, invocations, builds },
    fn: functionRow(record),
    manifest,
    triggers: own,
    schedules: own.filter((t) => t.type === 'cron'),
    queues: own.filter((t) => t.type === 'queue'),
    jobs: ownJobs.map((j) => jobView(j)),
    invocations: invocations.map((i) => invocationView(i)),
    builds: builds.map((b) => buildView(b)),
    files: source.files ? sourceView(source.files) : undefined,
    sourceMissing: source.missing,
    busy: isBusy([record.phase, ...ownJobs.map((j) => j.phase)]),
  };
}

export interface RepositoriesPage {
  /** Each with its open pull-request previews. */
  readonly repositories: (RepositoryView & { readonly previews: readonly PreviewView[] })[];
  readonly busy: boolean;
}

export async function repositoriesPage(src: PageSources, ns: string): Promise<RepositoriesPage> {
  const [repositories, functions, previews] = await Promise.all([src.platform.listRepositories(ns), src.platform.listFunctions(ns), previewsOrNone(src, ns)]);
  const exists = new Set(functions.map((f) => f.name));
  const byRepository = previewsByRepository(previews, ns);
  const views = repositories
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((r) => ({ ...repositoryView({ ...r, functions: r.functions.filter((f) => src.visible(f.name)) }, exists), previews: byRepository.get(r.name) ?? [] }));
  const building = views.some((r) => r.previews.some((p) => p.functions.some((f) => f.tone === 'busy')));
  return { repositories: views, busy: building || views.some((r) => r.tone === 'busy') };
}
