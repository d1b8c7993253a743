// The one "apply only if changed" for every object the controller owns: a reconcile builds the object it
// wants, compares it with the live one from the informer cache (drift.ts) and sends a server-side apply
// only when they differ. Two comparisons, by what the object is:
//   - workloads (Deployment, Service, CronJob) carry a hash of the form applied (`stamped`): equal hash
//     and every field still there (`upToDate`); the API server's many defaults are ignored;
//   - the sless objects a repository sync owns (Function, Trigger, FunctionJob) are compared by spec
//     with the CRD's defaults filled in (`inSync`): they are what users read, so they carry no stamp.
// Informer caches lag behind our own writes: a workload applied a moment ago still shows its old form
// there, and comparing again would apply it twice. So what this process applied is remembered with the
// resourceVersion the cache showed then, until the cache moves past it or the object goes (forget).
import { inSync, stamped, upToDate } from './drift.ts';
import { ANNOTATIONS } from './meta.ts';

interface Owned {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: Array<{ uid: string }> };
  spec?: object;
}

/** What ensure() did: nothing (the live object is what we want, or the cache still lags behind our apply), or applied. */
export type Ensured<T> = { readonly applied: false; readonly hash: string } | { readonly applied: true; readonly hash: string; readonly answer: T };

export class OwnedApplier {
  /** Per `namespace/name` and kind: the hash this process applied and the resourceVersion the cache showed then. */
  private readonly applied = new Map<string, Map<string, { readonly hash: string; readonly before: string | undefined }>>();

  constructor(private readonly apply: <T extends Owned>(obj: T) => Promise<T>) {}

  /**
   * A workload: `desired` is stamped with the hash of its form and applied unless `live` is up to date
   * with it, or is the form the cache showed before our own apply of that hash.
   */
  async ensure<T extends Owned>(form: T, live: T | undefined): Promise<Ensured<T>> {
    const desired = stamped(form);
    const hash = desired.metadata?.annotations?.[ANNOTATIONS.appliedHash] ?? '';
    const id = idOf(desired);
    const last = this.applied.get(id)?.get(desired.kind ?? '');
    const before = live?.metadata?.resourceVersion;
    if ((last?.hash === hash && last.before === before) || upToDate(desired, live)) return { applied: false, hash };
    const answer = await this.apply(desired);
    const kinds = this.applied.get(id) ?? new Map<string, { hash: string; before: string | undefined }>();
    this.applied.set(id, kinds.set(desired.kind ?? '', { hash, before }));
    return { applied: true, hash, answer };
  }

  /** Whether a workload's form (stamped as ensure() would) is what `live` already is. */
  upToDate<T extends Owned>(form: T, live: T | undefined): boolean {
    return upToDate(stamped(form), live);
  }

  /**
   * A sless object of a sync: applied unless `live` has the same spec (with the CRD's `defaults` filled
   * in), labels, annotations and owner. `comparable` drops what alone is no reason to apply.
   */
  async ensureObject<T extends Owned>(desired: T, live: T | undefined, defaults: object, comparable: (o: T | undefined) => T | undefined = (o) => o): Promise<Ensured<T>> {
    if (inSync(comparable(desired)!, comparable(live), defaults)) return { applied: false, hash: '' };
    return { applied: true, hash: '', answer: await this.apply(desired) };
  }

  /** The object `namespace/name` went away (or its owner did): what was applied there counts no more. */
  forget(namespace: string, name: string): void {
    this.applied.delete(`${namespace}/${name}`);
  }
}

function idOf(obj: Owned): string {
  return `${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''}`;
}
