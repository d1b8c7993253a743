// The leader's autoscaler on Kubernetes (issue 29): every tick it gathers the calls in flight from every
// controller replica (counts-gatherer.ts), asks the pure decision (scale/autoscaler.ts) per serving
// function, and writes the Deployment's scale subresource only when the wanted count differs from the
// Deployment's: steady traffic costs the API server nothing per call.
// - Disabled functions (the reconciler's DISABLED_ANNOTATION) are left alone: they stay at 0.
// - A leader change must not flap the scale: a new leader starts from each Deployment's current count
//   and does not scale in before one whole stable window of counts has passed.
// - A count raised by someone else (a replica waking the function, a reconcile pulling it into the
//   bounds) is taken as the new starting point; a wake also counts as a call just now (not idle).
import type { V1Deployment } from '@kubernetes/client-node';
import type { Metrics } from '../../../metrics/metrics.ts';
import { decide, INITIAL_STATE, stableWindowMs, type AutoscalerState, type ConcurrencySample } from '../../../scale/autoscaler.ts';
import type { FunctionResource } from '../objects/resources.ts';
import type { GatheredCount } from './counts-gatherer.ts';
import type { ScaleWrite } from './scale-subresource.ts';
import { liveWorkloadOf, scaleOfSpec } from './workload-replicas.ts';

export interface AutoscalerCaches {
  readonly functions: { list(): readonly FunctionResource[] };
  readonly deployments: { get(name: string, namespace: string): V1Deployment | undefined };
}

export interface KubeAutoscalerOptions {
  readonly caches: AutoscalerCaches;
  readonly gather: () => Promise<Map<string, GatheredCount>>;
  readonly write: (namespace: string, name: string, replicas: number, resourceVersion: string | undefined) => Promise<ScaleWrite>;
  readonly maxReplicas: number;
  readonly metrics?: Pick<Metrics, 'replicas' | 'scaleEvents'>;
  readonly logger: { info(message: string, fields?: Record<string, unknown>): void; warn(message: string, fields?: Record<string, unknown>): void };
  /** Default 2 s. */
  readonly tickMs?: number;
  readonly now?: () => number;
}

interface Tracked {
  samples: ConcurrencySample[];
  state: AutoscalerState;
  /** What this leader wants (starts at the Deployment's count). */
  desired: number;
  /** A wake (or this leader's start): the function is not idle before `idle` after it. */
  since: number;
  /** The Deployment's count at the previous tick, to tell others' writes from ours. */
  seen: number;
  /** This leader's last write, so a cache that lags behind it is not written again. */
  written?: { replicas: number; atMs: number };
}

/** A write the cache does not show yet is not repeated for this long. */
const WRITE_SETTLE_MS = 10_000;

export class KubeAutoscaler {
  readonly #opts: KubeAutoscalerOptions;
  readonly #now: () => number;
  readonly #startedAt: number;
  readonly #tracked = new Map<string, Tracked>();
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** Scale writes made (tests count them). */
  writes = 0;

  constructor(opts: KubeAutoscalerOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    this.#startedAt = this.#now();
  }

  start(): void {
    this.#timer ??= setInterval(() => {
      // One tick at a time: a slow gather skips ticks rather than piling them up.
      this.#running ??= this.tick()
        .catch((err: unknown) => this.#opts.logger.warn(`AutoscalerTickFailed: ${err instanceof Error ? err.message : String(err)}`, { reason: 'AutoscalerTickFailed' }))
        .finally(() => (this.#running = undefined));
    }, this.#opts.tickMs ?? 2_000);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** One round: gather, decide, write what changed (the timer's; tests call it). */
  async tick(): Promise<void> {
    const counts = await this.#opts.gather();
    const now = this.#now();
    const seen = new Set<string>();
    for (const fn of this.#opts.caches.functions.list()) {
      const namespace = fn.metadata?.namespace;
      const name = fn.metadata?.name;
      if (!namespace || !name || fn.metadata?.deletionTimestamp) continue;
      const deployment = this.#opts.caches.deployments.get(name, namespace);
      const live = liveWorkloadOf(deployment);
      // No Deployment yet, or switched off: the reconciler's to decide.
      if (!live || live.disabled || live.replicas === undefined) continue;
      const key = `${namespace}/${name}`;
      seen.add(key);
      await this.#decideOne(fn, namespace, name, deployment, live.replicas, counts.get(key), now);
    }
    for (const key of this.#tracked.keys()) if (!seen.has(key)) this.#tracked.delete(key);
  }

  async #decideOne(fn: FunctionResource, namespace: string, name: string, deployment: V1Deployment | undefined, current: number, count: GatheredCount | undefined, now: number): Promise<void> {
    const key = `${namespace}/${name}`;
    const scale = scaleOfSpec(fn.spec, this.#opts.maxReplicas);
    let t = this.#tracked.get(key);
    if (!t) {
      // Running: not idle before `idle` from now (this leader saw no call yet). At zero: idle already.
      t = { samples: [], state: INITIAL_STATE, desired: current, since: current > 0 ? now : 0, seen: current };
      this.#tracked.set(key, t);
    }
    const ours = t.written?.replicas === current;
    if (ours) delete t.written; // the watch shows our write: nothing to wait for any more
    if (current !== t.seen && !ours) {
      // Someone else moved it: a wake (0 → 1) is a call just now (and a scale event, counted here, on
      // the leader, like every other); a reconcile's bound is the new start.
      if (t.seen === 0 && current > 0) {
        t.since = now;
        this.#opts.metrics?.scaleEvents.inc({ namespace, function: name, direction: 'up' });
      }
      t.desired = current;
    }
    t.seen = current;
    t.samples.push({ atMs: now, concurrency: count?.concurrency ?? 0 });
    const horizon = now - stableWindowMs(scale);
    t.samples = t.samples.filter((s) => s.atMs > horizon);
    const ready = deployment?.status?.availableReplicas ?? 0;
    const d = decide({
      scale,
      nowMs: now,
      samples: t.samples,
      inFlight: count?.inFlight ?? 0,
      lastRequestAtMs: Math.max(count?.lastRequestAt ?? 0, t.since),
      ready,
      desired: t.desired,
      state: t.state,
    });
    t.state = d.state;
    let want = d.desired;
    let reason = d.reason;
    // A new leader has not seen a whole window of counts yet: it may scale out, never in.
    if (want < current && now - this.#startedAt < stableWindowMs(scale)) {
      want = current;
      reason = 'a new leader waits one window of counts before scaling in';
    }
    if (want !== t.desired) {
      const direction = want > t.desired ? 'up' : 'down';
      this.#opts.metrics?.scaleEvents.inc({ namespace, function: name, direction });
      this.#opts.logger.info(`${key} ${want === 0 ? 'idle (scaled to zero)' : `scaled ${direction} to ${want} replica${want === 1 ? '' : 's'}`}: ${reason}`, {
        reason: 'Scaled',
        direction,
        replicas: want,
      });
      t.desired = want;
    }
    this.#opts.metrics?.replicas.set({ namespace, function: name, state: 'desired' }, t.desired);
    this.#opts.metrics?.replicas.set({ namespace, function: name, state: 'ready' }, ready);
    if (t.desired === current) return;
    if (t.written?.replicas === t.desired && now - t.written.atMs < WRITE_SETTLE_MS) return;
    const wrote = await this.#opts.write(namespace, name, t.desired, deployment?.metadata?.resourceVersion);
    this.writes++;
    if (wrote === 'written') t.written = { replicas: t.desired, atMs: now };
    // 'conflict': it changed meanwhile (a wake); the next tick starts from what the watch shows.
  }
}
