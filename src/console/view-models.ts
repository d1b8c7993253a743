// From platform records and logs to what a console page shows (pure): every value a template prints
// is decided here, so templates only lay it out (and escape it).
import { Cron } from 'croner';
import type { FunctionRecord, JobRecord, RepositoryRecord, TriggerRecord } from '../platform/types.ts';
import type { BuildRecord, InvocationRecord } from '../store/types.ts';

/**
 * A time as a page shows it: ISO for <time datetime> and a short UTC text. The server renders no
 * "3 min ago" (the script does), so a page's HTML stays the same until its data changes.
 */
export interface TimeView {
  readonly iso: string;
  readonly text: string;
}

export function timeView(iso: string | undefined): TimeView | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return undefined;
  const d = new Date(t).toISOString();
  return { iso: d, text: `${d.slice(0, 19).replace('T', ' ')} UTC` };
}

/** `sha256:0123456789ab…` for tables; the full value goes into a title. */
export function shortHash(hash: string | undefined): string | undefined {
  if (!hash) return undefined;
  const [algo, hex] = hash.includes(':') ? (hash.split(':', 2) as [string, string]) : ['', hash];
  return `${algo ? `${algo}:` : ''}${hex.slice(0, 12)}`;
}

export type PhaseTone = 'ok' | 'busy' | 'bad' | 'idle';

export function phaseTone(phase: string): PhaseTone {
  if (phase === 'Ready' || phase === 'Succeeded') return 'ok';
  if (phase === 'Building' || phase === 'Running' || phase === 'Pending') return 'busy';
  if (phase === 'Failed') return 'bad';
  return 'idle';
}

export interface Owner {
  readonly kind: 'git' | 'api';
  /** `git:<repository>` or `api`. */
  readonly label: string;
  readonly repository?: string;
}

export function ownerOf(managedBy: string): Owner {
  if (managedBy.startsWith('git:')) return { kind: 'git', label: managedBy, repository: managedBy.slice(4) };
  return { kind: 'api', label: 'api' };
}

export interface FunctionRow {
  readonly name: string;
  readonly href: string;
  readonly runtime: string;
  readonly phase: string;
  readonly tone: PhaseTone;
  /** The platform's message, cut to a line a table can hold; `message` has all of it. */
  readonly reason?: string;
  readonly message?: string;
  readonly url?: string;
  readonly lastBuilt?: TimeView;
  readonly codeHash?: string;
  readonly codeHashShort?: string;
  readonly owner: Owner;
  /** Processes or pods: "idle (scaled to zero)", "1 replica", "2 of 3 replicas ready"; undefined when not reported. */
  readonly replicas?: string;
}

/** The replicas in a reader's words (replicasText in the table and on the function's page). */
export function replicasText(f: Pick<FunctionRecord, 'replicas' | 'httpEnabled'>): string | undefined {
  const r = f.replicas;
  if (!r || !f.httpEnabled) return undefined;
  if (r.desired === 0 && r.ready === 0) return 'idle (scaled to zero)';
  if (r.ready === r.desired) return `${r.ready} replica${r.ready === 1 ? '' : 's'}`;
  return `${r.ready} of ${r.desired} replicas ready`;
}

export const consolePaths = {
  functions: (ns: string) => `/funcs/${ns}`,
  fn: (ns: string, name: string) => `/funcs/${ns}/functions/${name}`,
  source: (ns: string, name: string) => `/funcs/${ns}/source/${name}`,
  trigger: (ns: string, name: string) => `/funcs/${ns}/triggers/${name}`,
  repositories: (ns: string) => `/funcs/${ns}/repositories`,
  sync: (ns: string, name: string) => `/funcs/${ns}/repositories/${name}/sync`,
};

export function functionRow(f: FunctionRecord): FunctionRow {
  return {
    name: f.name,
    href: consolePaths.fn(f.namespace, f.name),
    runtime: f.runtime,
    phase: f.phase,
    tone: phaseTone(f.phase),
    reason: shortReason(f.message),
    message: f.message || undefined,
    url: f.url,
    lastBuilt: timeView(f.lastBuiltAt),
    codeHash: f.codeHash,
    codeHashShort: shortHash(f.codeHash),
    owner: ownerOf(f.managedBy),
    ...(replicasText(f) === undefined ? {} : { replicas: replicasText(f) }),
  };
}

export const REASON_CHARS = 160;

export function shortReason(message: string | undefined): string | undefined {
  if (!message) return undefined;
  const flat = message.replace(/\s+/g, ' ').trim();
  return flat.length > REASON_CHARS ? `${flat.slice(0, REASON_CHARS - 1)}…` : flat;
}

/** One line per function for curl and scripts: name, runtime, phase, URL, tab-separated ("-" for none). */
export function plainTextListing(functions: readonly FunctionRecord[]): string {
  return functions.map((f) => `${[f.name, f.runtime, f.phase, f.url ?? '-'].join('\t')}\n`).join('');
}

/** A folder problem as `file:line: message` lines (a folder's error joins its problems with "; "). */
export function problemLines(error: string | undefined): string[] {
  if (!error) return [];
  return error.split(/; (?=\S+?:\d+: )/).filter(Boolean);
}

export interface FolderProblem {
  readonly repository: string;
  readonly folder: string;
  readonly lines: readonly string[];
}

export function folderProblems(repositories: readonly RepositoryRecord[]): FolderProblem[] {
  return repositories.flatMap((r) =>
    r.functions.filter((f) => f.error).map((f) => ({ repository: r.name, folder: f.path || '.', lines: problemLines(f.error) })),
  );
}

/** Where a git-managed function's settings live: `<path>/function.yaml` in its repository. */
export function manifestFileOf(fn: FunctionRecord, repositories: readonly RepositoryRecord[]): { repository: string; url?: string; file: string } | undefined {
  const owner = ownerOf(fn.managedBy);
  if (owner.kind !== 'git' || !owner.repository) return undefined;
  const repo = repositories.find((r) => r.name === owner.repository);
  const folder = repo?.functions.find((f) => f.name === fn.name)?.path;
  return { repository: owner.repository, url: repo?.url, file: folder ? `${folder}/function.yaml` : `function.yaml of ${fn.name}` };
}

export interface TriggerView {
  readonly name: string;
  readonly type: TriggerRecord['type'];
  readonly enabled: boolean;
  readonly active: boolean;
  readonly action: string;
  /** Set when git owns the switch: the console shows it and says where to change it. */
  readonly gitOwned?: { readonly repository: string; readonly file: string; readonly key: string };
  readonly schedule?: string;
  readonly timezone?: string;
  readonly nextRun?: TimeView;
  readonly lastRun?: TimeView;
  readonly url?: string;
  /** Type queue: the queue consumed and its broker, and the last readings (absent: not read yet). */
  readonly queue?: { readonly name: string; readonly url: string; readonly lag?: number; readonly inFlight?: number; readonly deadLettered?: number };
}

export function nextRunOf(schedule: string | undefined, timezone: string | undefined, now: number): string | undefined {
  if (!schedule) return undefined;
  try {
    const cron = new Cron(schedule, { paused: true, ...(timezone ? { timezone } : {}) });
    const next = cron.nextRun(new Date(now));
    cron.stop();
    return next?.toISOString();
  } catch {
    return undefined;
  }
}

export function triggerView(t: TriggerRecord, manifest: { repository: string; file: string } | undefined, now: number): TriggerView {
  const owner = ownerOf(t.managedBy);
  return {
    name: t.name,
    type: t.type,
    enabled: t.enabled,
    active: t.active,
    action: consolePaths.trigger(t.namespace, t.name),
    ...(owner.kind === 'git'
      ? {
          gitOwned: {
            repository: owner.repository ?? '',
            file: manifest?.file ?? 'function.yaml',
            key: t.type === 'http' ? 'http.enabled' : t.type === 'queue' ? 'queues' : 'schedules',
          },
        }
      : {}),
    schedule: t.schedule,
    timezone: t.timezone,
    nextRun: t.type === 'cron' && t.enabled ? timeView(nextRunOf(t.schedule, t.timezone, now)) : undefined,
    lastRun: timeView(t.lastScheduleTime),
    url: t.url,
    ...(t.queue ? { queue: { name: t.queue.queue, url: t.queue.url, ...t.queueStats } } : {}),
  };
}

export interface JobView {
  readonly name: string;
  readonly runId: number;
  readonly phase: string;
  readonly tone: PhaseTone;
  readonly started?: TimeView;
  readonly completed?: TimeView;
  readonly result?: string;
}

export function jobView(j: JobRecord): JobView {
  return {
    name: j.name,
    runId: j.runId,
    phase: j.phase,
    tone: phaseTone(j.phase),
    started: timeView(j.startTime),
    completed: timeView(j.completionTime),
    result: j.message,
  };
}

export interface InvocationView {
  readonly at?: TimeView;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly ok: boolean;
  readonly durationMs: number;
  /** Set when the call waited for the function to start from zero: how long (ms, part of durationMs). */
  readonly coldStartMs?: number;
}

export function invocationView(i: InvocationRecord): InvocationView {
  return {
    at: timeView(i.startedAt),
    method: i.method,
    path: i.path || '/',
    status: i.status,
    ok: i.status < 400,
    durationMs: Math.round(i.durationMs),
    ...(i.coldStartMs === undefined ? {} : { coldStartMs: Math.round(i.coldStartMs) }),
  };
}

export interface BuildView {
  readonly started?: TimeView;
  readonly outcome: string;
  readonly tone: PhaseTone;
  readonly codeHashShort?: string;
  readonly durationMs?: number;
  readonly imageRef?: string;
  /** The last lines of a failed build's log. */
  readonly logTail?: string;
}

export const LOG_TAIL_LINES = 40;

export function logTail(message: string | undefined, lines = LOG_TAIL_LINES): string | undefined {
  if (!message) return undefined;
  const all = message.trimEnd().split('\n');
  return (all.length > lines ? ['…', ...all.slice(-lines)] : all).join('\n');
}

export function buildView(b: BuildRecord): BuildView {
  return {
    started: timeView(b.startedAt),
    outcome: b.outcome,
    tone: b.outcome === 'succeeded' ? 'ok' : b.outcome === 'failed' ? 'bad' : 'busy',
    codeHashShort: shortHash(b.codeHash),
    durationMs: b.durationMs === undefined ? undefined : Math.round(b.durationMs),
    imageRef: b.imageRef,
    logTail: b.outcome === 'failed' ? logTail(b.message) : undefined,
  };
}

export interface RepositoryView {
  readonly name: string;
  readonly url: string;
  readonly branch: string;
  readonly path: string;
  readonly revision?: string;
  readonly revisionShort?: string;
  readonly lastSync?: TimeView;
  readonly status: string;
  readonly statusMessage?: string;
  readonly tone: PhaseTone;
  readonly webhookPath: string;
  readonly syncAction: string;
  /** `exists`: a folder whose manifest never worked has no function page to link to. */
  readonly folders: ReadonlyArray<{ name: string; exists: boolean; path: string; codeHashShort?: string; problems: readonly string[] }>;
}

export function repositoryView(r: RepositoryRecord, existing: ReadonlySet<string>): RepositoryView {
  const ready = r.ready;
  return {
    name: r.name,
    url: r.url,
    branch: r.branch,
    path: r.path || '/',
    revision: r.revision,
    revisionShort: r.revision && /^[0-9a-f]{40}$/.test(r.revision) ? r.revision.slice(0, 7) : r.revision,
    lastSync: timeView(r.lastSyncTime),
    status: ready ? (ready.status === 'True' ? 'Synced' : ready.status === 'False' ? ready.reason || 'Failed' : 'Syncing') : 'Unknown',
    statusMessage: ready?.message,
    tone: !ready ? 'idle' : ready.status === 'True' ? 'ok' : ready.status === 'False' ? 'bad' : 'busy',
    webhookPath: r.webhookPath,
    syncAction: consolePaths.sync(r.namespace, r.name),
    folders: r.functions.map((f) => ({ name: f.name, exists: existing.has(f.name), path: f.path || '.', codeHashShort: shortHash(f.codeHash), problems: problemLines(f.error) })),
  };
}

/** A page keeps refreshing itself quickly while anything on it is still changing. */
export function isBusy(phases: Iterable<string>): boolean {
  for (const p of phases) if (phaseTone(p) === 'busy') return true;
  return false;
}
