// Previous snapshot vs next -> what to build, deploy and remove. Pure.
//
// Functions are matched by NAME, the identity their Kubernetes objects carry, never by folder: a folder
// moved or renamed with the same `name` and code is a redeploy (its recorded source path changes),
// never a rebuild, and a `name:` change is a new function plus a removed one.
//
// What each change costs:
// - rebuild: code_hash, runtime or the runtime's base image changed (a new image is needed);
// - redeploy: anything else in function.yaml or the folder path changed. `entrypoint` counts here: the
//   runtime reads it from SLESS_ENTRYPOINT at start, so a new Deployment spec is enough; `include` and
//   `ignore` only matter through code_hash, which already decides whether to rebuild;
// - unchanged: nothing to do.
//
// The safety rules of every sync, on both platforms (scopeOfSync; the Kubernetes sync executes them
// against its live objects, sless dev through planChanges):
// - a function whose folder is broken now (bad YAML, duplicate name, unreadable code) is in `errors`
//   and is never removed: it keeps running its last good version, found by name or by folder;
// - a source with no function folder at all while functions run removes nothing (a wrong path or a
//   bad push, not an intent): `emptySource`.
// `applied` carries what keeps running forward, so pass `plan.applied` (not the raw snapshot) as `prev`
// to the next call: when the folder is fixed, the plan then compares against what is really running.
import { isDeepStrictEqual } from 'node:util';
import { findDuplicateNames } from '../source/find-duplicate-names.ts';
import type { FunctionManifest, Runtime } from '../manifest/types.ts';
import type { FunctionEntry, Snapshot } from '../source/types.ts';

export type BaseImages = Readonly<Partial<Record<Runtime, string>>>;

export interface PlanOptions {
  /** The base image each runtime builds on now (e.g. with its digest); omit to ignore base images. */
  readonly baseImageOf?: (runtime: Runtime) => string;
  /** `plan.baseImages` of the previous plan: what the running images were built on. */
  readonly prevBaseImages?: BaseImages;
}

/** Why a function is rebuilt or redeployed, in the words of function.yaml. */
export type ChangeReason =
  | 'code_hash'
  | 'runtime'
  | 'base_image'
  | 'path'
  | 'entrypoint'
  | 'memory_mb'
  | 'timeout_sec'
  | 'env'
  | 'env_from_secrets'
  | 'include'
  | 'ignore'
  | 'http'
  | 'scale'
  | 'schedules'
  | 'jobs';

export interface Plan {
  /** Healthy now, not running before. */
  readonly added: FunctionEntry[];
  /** Needs a new image (and then a redeploy). */
  readonly rebuild: FunctionEntry[];
  /** Same image, new configuration. */
  readonly redeploy: FunctionEntry[];
  /** Entries of `prev`: gone from the repository, and not merely broken. */
  readonly removed: FunctionEntry[];
  readonly unchanged: FunctionEntry[];
  /** Broken now; whatever ran before keeps running. */
  readonly errors: FunctionEntry[];
  /** No function folder at all while functions ran: nothing was removed (see scopeOfSync). */
  readonly emptySource: boolean;
  /** For every rebuilt or redeployed function name: what changed. */
  readonly reasons: Readonly<Record<string, readonly ChangeReason[]>>;
  /** What runs once this plan is carried out: pass it as `prev` next time. */
  readonly applied: Snapshot;
  /** Base images the applied functions were built on: pass as `prevBaseImages` next time. */
  readonly baseImages: BaseImages;
}

const CONFIG_FIELDS: ReadonlyArray<readonly [ChangeReason, (m: FunctionManifest) => unknown]> = [
  ['entrypoint', (m) => m.entrypoint],
  ['memory_mb', (m) => m.memoryMb],
  ['timeout_sec', (m) => m.timeoutSec],
  ['env', (m) => m.env],
  ['env_from_secrets', (m) => m.envFromSecrets],
  ['include', (m) => m.include],
  ['ignore', (m) => m.ignore],
  ['http', (m) => m.http],
  ['scale', (m) => m.scale],
  ['schedules', (m) => m.schedules],
  ['jobs', (m) => m.jobs],
];

type HealthyEntry = FunctionEntry & { readonly manifest: FunctionManifest; readonly codeHash: string };

/** Deployable: a manifest, a code hash and no problem. */
export function isHealthy(entry: FunctionEntry): entry is HealthyEntry {
  return entry.manifest !== undefined && entry.codeHash !== undefined && entry.problems.length === 0;
}

/** What runs now, as a sync sees it: a function's name and the folder it came from. */
export interface Running {
  readonly name: string;
  readonly path: string;
}

/** What a sync may remove of what runs, and what it must leave as it is. */
export interface SyncScope<R extends Running> {
  /** Names whose running objects stay untouched: every broken folder's, and any running function at a broken folder. */
  readonly kept: ReadonlySet<string>;
  /** Running functions gone from the source and protected by no broken folder (none when `emptySource`). */
  readonly removed: readonly R[];
  /** No function folder at all while functions run: nothing is removed. */
  readonly emptySource: boolean;
}

/** The safety rules of a sync over `running` and the folders of the next snapshot. Pure. */
export function scopeOfSync<R extends Running>(running: readonly R[], next: readonly FunctionEntry[]): SyncScope<R> {
  const broken = next.filter((e) => !isHealthy(e));
  const healthy = new Set(next.filter(isHealthy).map((e) => e.name));
  // A broken folder protects the function it was, found by name (when readable) or by folder.
  const brokenPaths = new Set(broken.map((e) => e.path));
  const kept = new Set(broken.map((e) => e.name));
  for (const r of running) if (!healthy.has(r.name) && brokenPaths.has(r.path)) kept.add(r.name);
  const emptySource = next.length === 0 && running.length > 0;
  const removed = emptySource ? [] : running.filter((r) => !healthy.has(r.name) && !kept.has(r.name));
  return { kept, removed, emptySource };
}

export function planChanges(prev: Snapshot | undefined, next: Snapshot, opts: PlanOptions = {}): Plan {
  // Only what was deployable can be running; a broken entry in a raw `prev` stands for nothing.
  const running = new Map((prev?.functions ?? []).filter(isHealthy).map((e) => [e.name, e] as const));
  // Defensive: two healthy folders with one name must never reach the platform.
  const functions = findDuplicateNames(next.functions);
  const scope = scopeOfSync([...running.values()], functions);

  const plan = {
    added: [] as FunctionEntry[],
    rebuild: [] as FunctionEntry[],
    redeploy: [] as FunctionEntry[],
    removed: [...scope.removed] as FunctionEntry[],
    unchanged: [] as FunctionEntry[],
    errors: functions.filter((e) => !isHealthy(e)),
  };
  const reasons: Record<string, ChangeReason[]> = {};
  const applied: FunctionEntry[] = [];

  for (const entry of functions) {
    if (!isHealthy(entry)) continue;
    applied.push(entry);
    const before = running.get(entry.name);
    if (before === undefined) {
      plan.added.push(entry);
      continue;
    }
    const changes = compare(before, entry, opts);
    if (changes.length === 0) plan.unchanged.push(entry);
    else {
      reasons[entry.name] = changes;
      const needsImage = changes.some((c) => c === 'code_hash' || c === 'runtime' || c === 'base_image');
      (needsImage ? plan.rebuild : plan.redeploy).push(entry);
    }
  }
  // What is neither in the source nor removed keeps running.
  const removed = new Set(scope.removed);
  const seen = new Set(applied.map((e) => e.name));
  for (const before of running.values()) if (!seen.has(before.name) && !removed.has(before)) applied.push(before);

  return {
    ...plan,
    emptySource: scope.emptySource,
    reasons,
    applied: { revision: next.revision, functions: applied },
    baseImages: baseImagesOf(applied, opts),
  };
}

function compare(before: HealthyEntry, after: HealthyEntry, opts: PlanOptions): ChangeReason[] {
  const changes: ChangeReason[] = [];
  if (before.codeHash !== after.codeHash) changes.push('code_hash');
  if (before.manifest.runtime !== after.manifest.runtime) changes.push('runtime');
  else if (opts.baseImageOf !== undefined) {
    const was = opts.prevBaseImages?.[after.manifest.runtime];
    // An unknown previous image is taken as the same: no mass rebuild on the first plan after a restart.
    if (was !== undefined && was !== opts.baseImageOf(after.manifest.runtime)) changes.push('base_image');
  }
  if (before.path !== after.path) changes.push('path');
  for (const [reason, field] of CONFIG_FIELDS) {
    if (!isDeepStrictEqual(field(before.manifest), field(after.manifest))) changes.push(reason);
  }
  return changes;
}

/**
 * Base images per runtime once the plan is carried out: every runtime in use is on its current image
 * (a change made its functions rebuild); runtimes no longer used keep their record. One record per
 * runtime cannot tell that a broken function kept an older image: it is rebuilt only when its code,
 * runtime or the image changes again.
 */
function baseImagesOf(applied: readonly FunctionEntry[], opts: PlanOptions): BaseImages {
  const images: Partial<Record<Runtime, string>> = { ...opts.prevBaseImages };
  if (opts.baseImageOf === undefined) return images;
  for (const entry of applied) {
    const runtime = entry.manifest?.runtime;
    if (runtime !== undefined) images[runtime] = opts.baseImageOf(runtime);
  }
  return images;
}
