// Kubernetes Events the way client-go's event recorder sends them: the first occurrence of an outcome on
// an object (same type, reason and message) creates an Event; repeats within the window only count, and
// the count reaches the API server as a series update of that one Event at most once per `updateEveryMs`
// (client-go's correlator aggregates and rate-limits the same way), never one Event per attempt. What it
// remembers is bounded (least recently used first out) and dropped with the object (forget).
//
// Routine outcomes of many objects of one owner (a repository's Functions built and deployed) aggregate on
// the owner instead (`aggregate`): one Event per owner and reason whose count and message say how many and
// which was the latest; the last count reaches the API server within `updateEveryMs` (a trailing update).
import type { CoreV1Event } from '@kubernetes/client-node';

export interface EventTarget {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
}

export interface EventSink {
  create(namespace: string, body: CoreV1Event): Promise<{ name: string } | undefined>;
  /** Sets count and lastTimestamp of an Event this recorder created. */
  update(namespace: string, name: string, count: number, lastTimestamp: Date, message?: string): Promise<void>;
}

export interface EventRecorderOptions {
  readonly sink: EventSink;
  readonly now?: () => Date;
  /** Repeats within this long after the first occurrence belong to its Event (client-go: 10 minutes). */
  readonly windowMs?: number;
  /** At most one series update per Event this often. */
  readonly updateEveryMs?: number;
  /** How many distinct outcomes it remembers (client-go: 4,096). */
  readonly maxEntries?: number;
  readonly component?: string;
  /** Schedules the trailing update of an aggregate (tests pass their own). */
  readonly later?: (fn: () => void, ms: number) => void;
}

const laterUnref = (fn: () => void, ms: number): void => {
  setTimeout(fn, ms).unref();
};

interface Seen {
  readonly uid: string;
  readonly namespace: string;
  /** The Event's name once created; a create still under way has none yet. */
  name?: string;
  readonly firstAt: number;
  count: number;
  /** When the API server last heard of this Event (create or update). */
  sentAt: number;
  /** Aggregates: the message as it stands, whether the API server has heard the latest, a trailing update pending. */
  message?: string;
  dirty?: boolean;
  flushing?: boolean;
}

export type Recorded = 'created' | 'updated' | 'counted';

export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly now: () => Date;
  private readonly windowMs: number;
  private readonly updateEveryMs: number;
  private readonly maxEntries: number;
  private readonly component: string;
  private readonly later: (fn: () => void, ms: number) => void;

  constructor(private readonly opts: EventRecorderOptions) {
    this.now = opts.now ?? (() => new Date());
    this.windowMs = opts.windowMs ?? 10 * 60_000;
    this.updateEveryMs = opts.updateEveryMs ?? 60_000;
    this.maxEntries = opts.maxEntries ?? 4096;
    this.component = opts.component ?? 'sless-controller';
    this.later = opts.later ?? laterUnref;
  }

  /** Outcomes remembered (for tests and the memory bound). */
  get size(): number {
    return this.seen.size;
  }

  /** Records one occurrence; failures are swallowed (events are best effort). */
  async record(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): Promise<Recorded | undefined> {
    const namespace = target.metadata?.namespace;
    if (!namespace) return undefined;
    const uid = target.metadata?.uid ?? `${target.kind ?? ''}/${namespace}/${target.metadata?.name ?? ''}`;
    const text = message.slice(0, 1024);
    const key = `${uid}\u0000${type}\u0000${reason}\u0000${text}`;
    const now = this.now();
    const at = now.getTime();
    const known = this.seen.get(key);
    if (known && at - known.firstAt < this.windowMs) {
      known.count++;
      this.touch(key, known);
      if (!known.name || at - known.sentAt < this.updateEveryMs) return 'counted';
      known.sentAt = at;
      try {
        await this.opts.sink.update(namespace, known.name, known.count, now);
      } catch {
        // best effort
      }
      return 'updated';
    }
    const entry: Seen = { uid, namespace, firstAt: at, count: 1, sentAt: at };
    this.touch(key, entry);
    await this.create(key, entry, target, type, reason, text, now);
    return 'created';
  }

  /**
   * One occurrence of a routine outcome of `member` (a Function's name), recorded on its owner: the first
   * within the window creates the owner's Event for this reason, later ones count and name the latest
   * (`BuildSucceeded: 37 Functions of this repository; latest fn-0036: ...`), sent as a series update at
   * most once per `updateEveryMs`, the last one by a trailing update.
   */
  async aggregate(owner: EventTarget, reason: string, member: string, message: string): Promise<Recorded | undefined> {
    const namespace = owner.metadata?.namespace;
    if (!namespace) return undefined;
    const uid = owner.metadata?.uid ?? `${owner.kind ?? ''}/${namespace}/${owner.metadata?.name ?? ''}`;
    const key = `${uid}\u0000aggregate\u0000${reason}`;
    const now = this.now();
    const at = now.getTime();
    const known = this.seen.get(key);
    const fresh = !known || at - known.firstAt >= this.windowMs;
    const entry: Seen = fresh ? { uid, namespace, firstAt: at, count: 0, sentAt: at } : known;
    entry.count++;
    entry.message = `${entry.count} ${owner.kind === 'FunctionRepository' ? 'Function(s) of this repository' : 'object(s)'}; latest ${member}: ${message}`.slice(0, 1024);
    this.touch(key, entry);
    if (fresh) {
      await this.create(key, entry, owner, 'Normal', reason, entry.message, now);
      return 'created';
    }
    entry.dirty = true;
    if (entry.name && at - entry.sentAt >= this.updateEveryMs) {
      await this.flush(entry);
      return 'updated';
    }
    if (!entry.flushing) {
      entry.flushing = true;
      this.later(() => void this.flush(entry), Math.max(0, entry.sentAt + this.updateEveryMs - at));
    }
    return 'counted';
  }

  private async flush(entry: Seen): Promise<void> {
    entry.flushing = false;
    if (!entry.dirty || !entry.name) return;
    entry.dirty = false;
    const now = this.now();
    entry.sentAt = now.getTime();
    try {
      await this.opts.sink.update(entry.namespace, entry.name, entry.count, now, entry.message);
    } catch {
      // best effort
    }
  }

  private async create(key: string, entry: Seen, target: EventTarget, type: 'Normal' | 'Warning', reason: string, text: string, now: Date): Promise<void> {
    const namespace = entry.namespace;
    try {
      const created = await this.opts.sink.create(namespace, {
        metadata: { generateName: `${target.metadata?.name ?? 'sless'}.`, namespace },
        involvedObject: { apiVersion: target.apiVersion, kind: target.kind, name: target.metadata?.name, namespace, uid: target.metadata?.uid },
        type,
        reason,
        message: text,
        source: { component: this.component },
        reportingComponent: this.component,
        reportingInstance: this.component,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      });
      if (created) entry.name = created.name;
    } catch {
      // best effort: an event that cannot be written must never fail a reconcile; the next occurrence tries again
      if (this.seen.get(key) === entry) this.seen.delete(key);
    }
  }

  /** The object is gone: forget its outcomes. */
  forget(uid: string | undefined): void {
    if (!uid) return;
    for (const [k, v] of this.seen) if (v.uid === uid) this.seen.delete(k);
  }

  private touch(key: string, entry: Seen): void {
    this.seen.delete(key);
    this.seen.set(key, entry);
    while (this.seen.size > this.maxEntries) this.seen.delete(this.seen.keys().next().value as string);
  }
}
