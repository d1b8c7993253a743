// `sless dev`'s autoscaler (issue 29): once a tick, for every function that serves http, samples the
// calls it had in flight (as /fn reports them through requestBegan), asks the pure decision
// (scale/autoscaler.ts) how many processes it wants, and grows or shrinks its ReplicaSet to that.
// It is also the platform's FunctionScaling: /fn's activator wakes a function at zero through it.
import type { Metrics } from '../../metrics/metrics.ts';
import { decide, INITIAL_STATE, stableWindowMs, type AutoscalerState, type ConcurrencySample } from '../../scale/autoscaler.ts';
import { InFlightMeter } from '../../scale/in-flight-meter.ts';
import type { FunctionScaling, Replicas } from '../types.ts';
import type { LiveFunction } from './function-runner.ts';
import type { Logger } from './logger.ts';
import type { ReplicaSet } from './replica-set.ts';

export interface LocalScalerOptions {
  readonly functions: {
    liveFunction(namespace: string, name: string): LiveFunction | undefined;
    liveFunctions(): LiveFunction[];
  };
  readonly logger: Logger;
  readonly metrics?: Metrics;
  /** How often it decides; default 1 s. */
  readonly tickMs?: number;
  readonly now?: () => number;
}

interface Tracked {
  readonly meter: InFlightMeter;
  samples: ConcurrencySample[];
  state: AutoscalerState;
  desired: number;
  /** The version (its ReplicaSet) last seen, and since when: a new version is not idle at once. */
  replicas?: ReplicaSet;
  since: number;
}

export class LocalScaler implements FunctionScaling {
  readonly #opts: LocalScalerOptions;
  readonly #now: () => number;
  readonly #tracked = new Map<string, Tracked>();
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: LocalScalerOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.tick(), this.#opts.tickMs ?? 1000);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  requestBegan(namespace: string, name: string): () => void {
    return this.#trackedOf(namespace, name).meter.begin();
  }

  async wake(namespace: string, name: string): Promise<void> {
    const live = this.#opts.functions.liveFunction(namespace, name);
    if (!live) throw new Error('it has no running version');
    const t = this.#trackedOf(namespace, name);
    this.#follow(t, live);
    if (t.desired < 1) this.#setDesired(namespace, name, t, 1, 'woken by a call');
    const started = performance.now();
    await live.replicas.wake();
    this.#opts.logger.info(`${namespace}/${name} woke in ${Math.round(performance.now() - started)} ms`);
    this.#gauge(namespace, name, t.desired, live.replicas.ready);
  }

  /** What the console and /v1 show; undefined for a function that does not serve http. */
  replicasOf(namespace: string, name: string): Replicas | undefined {
    const live = this.#opts.functions.liveFunction(namespace, name);
    if (!live) return undefined;
    const t = this.#tracked.get(`${namespace}/${name}`);
    return { desired: t?.desired ?? live.replicas.size, ready: live.replicas.ready };
  }

  /** One round of decisions (the timer's; tests call it too). */
  tick(): void {
    const now = this.#now();
    const live = this.#opts.functions.liveFunctions();
    const seen = new Set<string>();
    for (const fn of live) {
      const key = `${fn.namespace}/${fn.name}`;
      seen.add(key);
      const t = this.#trackedOf(fn.namespace, fn.name);
      this.#follow(t, fn);
      t.samples.push(t.meter.sample());
      const horizon = now - stableWindowMs(fn.scale);
      t.samples = t.samples.filter((s) => s.atMs > horizon);
      const d = decide({
        scale: fn.scale,
        nowMs: now,
        samples: t.samples,
        inFlight: t.meter.inFlight,
        lastRequestAtMs: Math.max(t.meter.lastRequestAtMs ?? 0, t.since),
        ready: fn.replicas.ready,
        desired: t.desired,
        state: t.state,
      });
      t.state = d.state;
      if (d.desired !== t.desired) this.#setDesired(fn.namespace, fn.name, t, d.desired, d.reason);
      // A start under way is waited for, so a version that cannot start is not retried every tick.
      if (fn.replicas.size > t.desired || (fn.replicas.size < t.desired && !fn.replicas.starting)) fn.replicas.scaleTo(t.desired);
      this.#gauge(fn.namespace, fn.name, t.desired, fn.replicas.ready);
    }
    for (const key of this.#tracked.keys()) {
      if (!seen.has(key) && this.#tracked.get(key)?.meter.inFlight === 0) this.#tracked.delete(key);
    }
  }

  #trackedOf(namespace: string, name: string): Tracked {
    const key = `${namespace}/${name}`;
    let t = this.#tracked.get(key);
    if (!t) {
      t = { meter: new InFlightMeter(this.#now), samples: [], state: INITIAL_STATE, desired: -1, since: this.#now() };
      this.#tracked.set(key, t);
    }
    return t;
  }

  /** A new version starts with what the runner gave it, and is not idle before its own `idle`. */
  #follow(t: Tracked, fn: LiveFunction): void {
    if (t.replicas === fn.replicas) return;
    t.replicas = fn.replicas;
    t.since = this.#now();
    if (t.desired < 0) t.desired = fn.replicas.size;
  }

  #setDesired(namespace: string, name: string, t: Tracked, desired: number, reason: string): void {
    const direction = desired > t.desired ? 'up' : 'down';
    this.#opts.metrics?.scaleEvents.inc({ namespace, function: name, direction });
    this.#opts.logger.info(
      `${namespace}/${name} ${desired === 0 ? 'idle (scaled to zero)' : `scaled ${direction} to ${desired} process${desired === 1 ? '' : 'es'}`}: ${reason}`,
    );
    t.desired = desired;
  }

  #gauge(namespace: string, name: string, desired: number, ready: number): void {
    this.#opts.metrics?.replicas.set({ namespace, function: name, state: 'desired' }, desired);
    this.#opts.metrics?.replicas.set({ namespace, function: name, state: 'ready' }, ready);
  }
}
