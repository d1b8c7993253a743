// Platform.scaling on Kubernetes (issue 29), on every controller replica: /fn's calls are counted here
// (replica-counts.ts; the leader gathers every replica's counts), and a function at zero is woken by the
// replica that got the call: one write of the Deployment's scale subresource to 1, conditioned on the
// resourceVersion it saw at 0 (several replicas waking at once: one write wins, the others see 1), then
// wait until the serving watches say a replica serves. Any replica may wake; only the leader scales in.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Endpoint, FunctionScaling } from '../../types.ts';
import type { ReplicaCounts } from './replica-counts.ts';
import type { ScaleSubresource } from './scale-subresource.ts';

/** The function's Deployment as far as a wake reads it. */
export interface ScaleView {
  readonly replicas: number;
  readonly resourceVersion: string | undefined;
}

export interface KubeScalingOptions {
  /** The namespace whose function a call counts for and wakes (production's, for a preview URL it answers); default: the one called. */
  readonly servedBy?: (namespace: string, name: string) => string;
  readonly counts: ReplicaCounts;
  readonly scale: ScaleSubresource;
  /** From the serving watches; undefined when they have not listed yet (the wake then reads the API server). */
  readonly deployment: (namespace: string, name: string) => ScaleView | undefined | 'unknown';
  readonly resolveEndpoint: (namespace: string, name: string) => Promise<Endpoint>;
  /** SLESS_COLD_START_TIMEOUT: a wake gives up after this long. */
  readonly timeoutMs: number;
  /** How often a wake looks whether a replica serves (the watches are in memory). Default 50 ms. */
  readonly pollMs?: number;
  /**
   * With /fn routing to pods (PodRouting.whenServing): resolves the moment one of the function's pods
   * enters rotation, so the held calls go on at once instead of at the next poll (up to pollMs later).
   */
  readonly whenServing?: (namespace: string, name: string, signal: AbortSignal) => Promise<void>;
  readonly logger?: { info(message: string, fields?: Record<string, unknown>): void };
}

export class KubeScaling implements FunctionScaling {
  /** The wake under way per function on this replica: concurrent wakes share it (one write at most). */
  readonly #waking = new Map<string, Promise<void>>();

  constructor(private readonly opts: KubeScalingOptions) {}

  requestBegan(namespace: string, name: string): () => void {
    return this.opts.counts.begin(this.opts.servedBy?.(namespace, name) ?? namespace, name);
  }

  wake(called: string, name: string): Promise<void> {
    const namespace = this.opts.servedBy?.(called, name) ?? called;
    const key = `${namespace}/${name}`;
    let p = this.#waking.get(key);
    if (!p) {
      p = this.#wakeOnce(namespace, name).finally(() => this.#waking.delete(key));
      this.#waking.set(key, p);
    }
    return p;
  }

  async #wakeOnce(namespace: string, name: string): Promise<void> {
    const started = performance.now();
    /** The resourceVersion this wake wrote against: written once per zero it sees, not once per poll. */
    let wroteAgainst: string | undefined | null = null;
    let servingSeen = false;
    for (;;) {
      const endpoint = await this.opts.resolveEndpoint(namespace, name);
      switch (endpoint.kind) {
        case 'ready':
          this.opts.logger?.info(`${namespace}/${name} woke in ${Math.round(performance.now() - started)} ms`, { reason: 'Woken' });
          return;
        case 'not-found':
          throw new Error('the function was removed');
        case 'disabled':
          throw new Error('its http serving is disabled');
        case 'not-ready':
          throw new Error(endpoint.reason);
        case 'idle':
          break;
      }
      let view = this.opts.deployment(namespace, name);
      if (view === 'unknown') view = await this.opts.scale.read(namespace, name);
      if (!view) throw new Error('its Deployment is not there');
      if (view.replicas === 0 && view.resourceVersion !== wroteAgainst) {
        wroteAgainst = view.resourceVersion;
        const wrote = await this.opts.scale.set(namespace, name, 1, view.resourceVersion);
        if (wrote === 'missing') throw new Error('its Deployment is not there');
        if (wrote === 'written') this.opts.logger?.info(`${namespace}/${name} scaled up to 1 replica: woken by a call`, { reason: 'Woken' });
        // 'conflict': another replica (or the leader) wrote first; the watch shows what it wrote.
      }
      const waitedMs = performance.now() - started;
      if (waitedMs > this.opts.timeoutMs) throw new Error(`no replica became ready within ${(this.opts.timeoutMs / 1000).toFixed(this.opts.timeoutMs % 1000 ? 1 : 0)} s`);
      // Once a pod served and the function still did not resolve (e.g. its Deployment still at 0 in the
      // watch), only the poll: whenServing would resolve at once again and spin.
      const serving: KubeScalingOptions['whenServing'] = servingSeen ? undefined : this.opts.whenServing;
      servingSeen = (await this.#pause(namespace, name, serving)) || servingSeen;
    }
  }

  /** Waits pollMs, or less when `whenServing` says a pod entered rotation first; true in that case. */
  async #pause(namespace: string, name: string, whenServing: KubeScalingOptions['whenServing']): Promise<boolean> {
    const done = new AbortController();
    try {
      const poll = sleep(this.opts.pollMs ?? 50, false, { signal: done.signal });
      return await Promise.race(whenServing ? [poll, whenServing(namespace, name, done.signal).then(() => true)] : [poll]);
    } finally {
      done.abort();
    }
  }
}
