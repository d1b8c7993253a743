// The apply step of a repository sync: for each valid function folder of the snapshot, the objects it
// wants (its build context uploaded when the build key is new), compared with the live objects and applied
// only where they differ: the Function first, then its Triggers and FunctionJobs. Folders take turns in one
// bounded pool (repositories take turns in it too); a Function of the same name that this repository does
// not own, and a folder whose upload fails, keep their objects as they are (repository-reconciler.ts).
import { listManifestFiles } from '../../../source/function-files.ts';
import { readFunctionFiles } from '../../../source/read-function-files.ts';
import type { SourceTree } from '../../../source/source-tree.ts';
import type { FunctionEntry } from '../../../source/types.ts';
import { ensureContext } from '../build-context.ts';
import { buildKey } from '../objects/build-key.ts';
import { CRD_SPEC_DEFAULTS } from '../objects/crd-defaults.ts';
import { annotatedBuildKey, ownedByRepository } from '../objects/drift.ts';
import { generatedNameClash } from '../objects/generated-name-clash.ts';
import { ANNOTATIONS, FINALIZER, LABELS } from '../objects/meta.ts';
import { repositoryObjects, type RepositoryObjects } from '../objects/repository-objects.ts';
import type { FunctionResource, RepositoryResource, RepositoryStatus, Resource } from '../objects/resources.ts';
import { FairPool } from '../api-client/fair-lanes.ts';
import { splitKey, type ReconcileContext } from './reconcile-context.ts';

/** Defaults the CRDs fill in, applied to our side before comparing with live objects. */
const DEFAULTS = CRD_SPEC_DEFAULTS;

export type FunctionStatusEntry = NonNullable<RepositoryStatus['functions']>[number];

/** The objects a repository owns now (informer caches), by name. */
export interface LiveObjects {
  readonly functions: ReadonlyMap<string, FunctionResource>;
  readonly triggers: ReadonlyMap<string, RepositoryObjects['triggers'][number]>;
  readonly jobs: ReadonlyMap<string, RepositoryObjects['jobs'][number]>;
}

/** What applying a snapshot's valid functions did. */
export interface AppliedFunctions {
  /** One entry per function, with its error when its objects were kept as they are. */
  readonly statusFunctions: FunctionStatusEntry[];
  /** Functions whose objects must stay as they are: a name taken by another owner, a failed upload. */
  readonly keep: ReadonlySet<string>;
  /** `Kind/name` of every object the applied functions want. */
  readonly wanted: ReadonlySet<string>;
  /** Generation each Function got from this apply, for commit statuses. */
  readonly appliedGenerations: Map<string, number>;
  /** The first upload or apply error (the sync retries with backoff when there is one). */
  readonly firstUploadError: unknown;
}

export class SyncApply {
  /** Bounds the per-function work of syncs (context uploads, applies); repositories take turns. */
  private readonly uploads: FairPool;

  constructor(private readonly ctx: ReconcileContext) {
    const uploads = ctx.settings.concurrency.uploads;
    // One namespace never holds every slot: another's upload starts at once beside a flood of one tenant's
    // changed functions (one slot kept for the others, so one large repository keeps nearly the whole pool).
    this.uploads = new FairPool(uploads, { maxPerTenant: Math.max(1, uploads - 1) });
  }

  /** Applies the valid function folders `valid` of repository `key` at `revision`. */
  async applyFunctions(
    key: string,
    repo: RepositoryResource,
    tree: SourceTree,
    revision: string,
    valid: readonly FunctionEntry[],
    live: LiveObjects,
    /** Reshapes what each folder wants before it is applied (a preview's objects: previews/preview-objects.ts). */
    shape: (objects: RepositoryObjects) => RepositoryObjects = (o) => o,
  ): Promise<AppliedFunctions> {
    const ctx = this.ctx;
    const { namespace, name } = splitKey(key);
    const statusFunctions: FunctionStatusEntry[] = [];
    const keep = new Set<string>();
    const wanted = new Set<string>();
    const appliedGenerations = new Map<string, number>();
    let firstUploadError: unknown;

    await Promise.all(
      valid.map((entry) =>
        this.uploads.add(key, async () => {
          const fnName = entry.manifest!.name;
          const existing = live.functions.get(fnName) ?? ctx.caches.functions.get(fnName, namespace);
          if (existing && !ownedByRepository(existing, name)) {
            const by = existing.metadata?.labels?.[LABELS.repository];
            keep.add(fnName);
            statusFunctions.push({
              name: fnName,
              path: entry.path,
              codeHash: entry.codeHash,
              error: `a Function named ${fnName} already exists in ${namespace}, ${by ? `managed by repository ${by}` : 'made through the API'}; rename one of them`,
            });
            return;
          }
          const clash = generatedNameClash(entry.manifest!, namespace, name, (kind, objectName) =>
            kind === 'Trigger'
              ? (live.triggers.get(objectName) ?? ctx.caches.triggers.get(objectName, namespace))
              : (live.jobs.get(objectName) ?? ctx.caches.functionJobs.get(objectName, namespace)),
          );
          if (clash) {
            keep.add(fnName);
            statusFunctions.push({ name: fnName, path: entry.path, codeHash: entry.codeHash, error: clash });
            return;
          }
          try {
            const objects = shape(await this.desiredFor(repo, tree, entry, revision, existing));
            const generation = await this.applyObjects(objects, live);
            if (generation !== undefined) appliedGenerations.set(fnName, generation);
            for (const o of [objects.fn, ...objects.triggers, ...objects.jobs])
              wanted.add(`${o.kind}/${o.metadata?.name}`);
            statusFunctions.push({ name: fnName, path: entry.path, codeHash: entry.codeHash });
          } catch (err) {
            firstUploadError ??= err;
            keep.add(fnName);
            statusFunctions.push({
              name: fnName,
              path: entry.path,
              codeHash: entry.codeHash,
              error: err instanceof Error ? err.message : String(err),
            });
          }
        }),
      ),
    );
    return { statusFunctions, keep, wanted, appliedGenerations, firstUploadError };
  }

  /** The objects one valid function folder wants; uploads its build context when the build key is new. */
  private async desiredFor(
    repo: RepositoryResource,
    tree: SourceTree,
    entry: FunctionEntry,
    revision: string,
    existing: FunctionResource | undefined,
  ): Promise<RepositoryObjects> {
    const ctx = this.ctx;
    const manifest = entry.manifest!;
    const codeHash = entry.codeHash!;
    const baseImage = ctx.baseImageOf(manifest.runtime);
    const key = buildKey({ codeHash, runtime: manifest.runtime, baseImage });
    let s3Key = existing?.spec?.s3Key;
    if (!s3Key || annotatedBuildKey(existing) !== key || existing?.spec?.entrypoint !== manifest.entrypoint) {
      const listed = await listManifestFiles(tree, entry.path, manifest);
      try {
        const ctxResult = await ensureContext(ctx.store, {
          runtime: manifest.runtime,
          entrypoint: manifest.entrypoint,
          buildKey: key,
          baseImage,
          paths: listed.files.map((f) => f.hashPath),
          files: () => readFunctionFiles(tree, entry),
        });
        s3Key = ctxResult.key;
      } catch (err) {
        throw new Error(
          `uploading the build context to ${ctx.store.location} failed: ${err instanceof Error ? err.message : String(err)}; retrying`,
          {
            cause: err,
          },
        );
      }
    }
    const objects = repositoryObjects(repo, {
      manifest,
      codeHash,
      path: entry.path,
      revision,
      s3Bucket: ctx.settings.s3.bucket,
      s3Key,
    });
    objects.fn.metadata!.annotations = { [ANNOTATIONS.buildKey]: key };
    // Set at creation, so the Function reconciler needs no extra patch to add it.
    objects.fn.metadata!.finalizers = [FINALIZER];
    return objects;
  }

  private async applyObjects(objects: RepositoryObjects, live: LiveObjects): Promise<number | undefined> {
    const owned = this.ctx.owned;
    const name = (o: { metadata?: { name?: string } }) => o.metadata?.name ?? '';
    // The Function first: Triggers and FunctionJobs refer to it.
    const fn = await owned.ensureObject(objects.fn, live.functions.get(name(objects.fn)), DEFAULTS.Function, withoutSource);
    // Then its Triggers and FunctionJobs side by side (they do not refer to each other).
    await Promise.all([
      ...objects.triggers.map((t) => owned.ensureObject(t, live.triggers.get(name(t)), DEFAULTS.Trigger)),
      ...objects.jobs.map((j) => owned.ensureObject(j, live.jobs.get(name(j)), DEFAULTS.FunctionJob)),
    ]);
    return fn.applied ? fn.answer.metadata?.generation : undefined;
  }
}

/** An object pruneOwned removed. */
export interface PrunedObject {
  readonly kind: 'Function' | 'Trigger' | 'FunctionJob';
  readonly name: string;
}

/**
 * Removes the objects a repository owns that no function of the sync wants, unless they belong to a
 * function kept as it is (`keep`: see plan/plan-changes.ts scopeOfSync) or are being deleted already.
 * Answers what it removed, appended to `pruned`: a caller that acts on what went (a preview deletes the
 * images of its pruned Functions) passes its own list and sees those removed before a later delete threw.
 */
export async function pruneOwned(
  kube: Pick<ReconcileContext['kube'], 'delete'>,
  namespace: string,
  owned: ReadonlyArray<readonly [kind: PrunedObject['kind'], list: readonly Resource<unknown, unknown>[]]>,
  wanted: ReadonlySet<string>,
  keep: ReadonlySet<string>,
  pruned: PrunedObject[] = [],
): Promise<PrunedObject[]> {
  for (const [kind, list] of owned) {
    for (const obj of list) {
      const name = obj.metadata?.name ?? '';
      const fnName = obj.metadata?.labels?.[LABELS.function] ?? name;
      if (wanted.has(`${kind}/${name}`) || keep.has(fnName) || obj.metadata?.deletionTimestamp) continue;
      await kube.delete({ apiVersion: obj.apiVersion, kind, metadata: { name, namespace } });
      pruned.push({ kind, name });
    }
  }
  return pruned;
}

/** spec.source.revision changes with every commit; it alone is no reason to touch a Function. */
function withoutSource(fn: FunctionResource | undefined): FunctionResource | undefined {
  if (!fn?.spec) return fn;
  const { source, ...spec } = fn.spec;
  return {
    ...fn,
    spec: { ...spec, source: source ? { ...source, revision: '' } : undefined } as FunctionResource['spec'],
  };
}
