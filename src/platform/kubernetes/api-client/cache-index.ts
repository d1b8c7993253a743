// Lookups of cached objects by a field, as client-go's indexers: "the Triggers of Function ns/fn", "the pods
// of build Job j", "the running build Jobs of namespace ns". Scanning the namespace's list for them made every
// reconcile and every Function event cost O(objects): at 1,000 functions (2,000 Triggers) those scans and
// the arrays list() copies for them were ~10 s of the controller's 82 CPU s (controller.bench CPU profile).
// The informer keeps each index current as events arrive (resilient-informer.ts); a cache without one
// (tests' fakes) is scanned.
import { jobState, type JobConditions } from '../objects/job-state.ts';
import { JOB_NAME_LABEL, LABELS } from '../objects/meta.ts';

/** What an index reads of an object (typed client-node objects and the sless resources alike). */
export interface Indexed {
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly labels?: Record<string, string> };
}

/** One value per object (or none): the index maps each value to the objects that have it. */
export type IndexFn = (obj: Indexed) => string | undefined;

const ns = (o: Indexed) => o.metadata?.namespace ?? '';

/** The namespace of the Function a build Job builds; undefined for any other Job. */
function buildOf(o: Indexed): string | undefined {
  const labels = o.metadata?.labels ?? {};
  return labels[LABELS.component] === 'build' ? labels[LABELS.functionNamespace] : undefined;
}

export const INDEXES = {
  /** Triggers and FunctionJobs by the Function they name: `ns/functionRef`. */
  functionRef: ((o) => {
    const ref = (o as { spec?: { functionRef?: string } }).spec?.functionRef;
    return ref ? `${ns(o)}/${ref}` : undefined;
  }) satisfies IndexFn,
  /** Pods by the Job that made them: `ns/job`. */
  job: ((o) => {
    const job = o.metadata?.labels?.[JOB_NAME_LABEL];
    return job ? `${ns(o)}/${job}` : undefined;
  }) satisfies IndexFn,
  /**
   * Unfinished build Jobs by the namespace of the Function they build (they all run in the build
   * namespace): a build decision reads the few running builds of its namespace; with every build Job of
   * the namespace (1,000 Functions of one namespace) it was O(n^2), ~3 s of a 68-CPU-s controller profile.
   */
  runningBuildsOf: ((o) => (jobState(o as JobConditions) === 'running' ? buildOf(o) : undefined)) satisfies IndexFn,
} as const;

export type IndexName = keyof typeof INDEXES;

/** A cache that may answer index lookups. */
export interface Indexable<T> {
  list(namespace?: string): readonly T[];
  byIndex?(index: IndexName, value: string): readonly T[];
}

/** The objects of `namespace` whose `index` value is `value`: from the index when the cache has it, else by scanning. */
export function select<T extends Indexed>(cache: Indexable<T>, namespace: string, index: IndexName, value: string): readonly T[] {
  if (cache.byIndex) return cache.byIndex(index, value).filter((o) => ns(o) === namespace);
  return cache.list(namespace).filter((o) => INDEXES[index](o) === value);
}

/** The index's bookkeeping: value → keys (`ns/name`), and each key's current value to move it on update. */
export class CacheIndex {
  private readonly keysByValue = new Map<string, Set<string>>();
  private readonly valueByKey = new Map<string, string>();

  constructor(private readonly fn: IndexFn) {}

  /** An object was added or changed. */
  put(obj: Indexed): void {
    const key = `${ns(obj)}/${obj.metadata?.name ?? ''}`;
    const value = this.fn(obj);
    const before = this.valueByKey.get(key);
    if (before === value) return;
    if (before !== undefined) this.drop(key, before);
    if (value === undefined) return;
    this.valueByKey.set(key, value);
    const keys = this.keysByValue.get(value) ?? new Set<string>();
    keys.add(key);
    this.keysByValue.set(value, keys);
  }

  /** An object was deleted. */
  remove(obj: Indexed): void {
    const key = `${ns(obj)}/${obj.metadata?.name ?? ''}`;
    const before = this.valueByKey.get(key);
    if (before !== undefined) this.drop(key, before);
  }

  /** `ns/name` of the objects with this value. */
  keys(value: string): ReadonlySet<string> {
    return this.keysByValue.get(value) ?? new Set();
  }

  private drop(key: string, value: string): void {
    this.valueByKey.delete(key);
    const keys = this.keysByValue.get(value);
    keys?.delete(key);
    if (keys?.size === 0) this.keysByValue.delete(value);
  }
}
