// /fn reaching pods directly (SLESS_ROUTE_TO_PODS, docs/pod-routing.md): the EndpointSlice watch feeds
// the pod table, which probes new pods and picks one per call. KubernetesPlatform starts it beside the
// serving watches and asks it for a function's pods in resolveEndpoint; until the watch has listed, or
// for a function whose Service has no slice, /fn keeps calling the Service.
import type { KubeConfig } from '@kubernetes/client-node';
import type { ResilientInformer } from '../api-client/resilient-informer.ts';
import { realTimers, type Timers } from '../api-client/timers.ts';
import type { V1EndpointSlice } from '@kubernetes/client-node';
import { endpointSliceInformer } from './endpoint-slice-informer.ts';
import { httpProbe } from './http-probe.ts';
import { PodTable, type FunctionPods, type Probe } from './pod-table.ts';
import type { ProbePolicy } from './pod-state.ts';

export interface PodRoutingOptions {
  readonly kubeConfig: KubeConfig;
  readonly onError?: (name: string, err: unknown, restartInMs: number) => void;
  readonly log?: { info(message: string, fields?: Record<string, unknown>): void };
  readonly timers?: Timers;
  /** Tests: another probe (default: GET /health on the pod). */
  readonly probe?: Probe;
  readonly policy?: ProbePolicy;
}

export class PodRouting {
  private readonly table: PodTable;
  private readonly informer: ResilientInformer<V1EndpointSlice>;
  private readonly closeProbe: () => Promise<void>;
  private listed = false;
  private readonly waiters = new Set<() => void>();

  constructor(opts: PodRoutingOptions) {
    const http = opts.probe ? undefined : httpProbe();
    this.closeProbe = http ? () => http.close() : () => Promise.resolve();
    this.table = new PodTable({
      probe: opts.probe ?? (http as { probe: Probe }).probe,
      timers: opts.timers ?? realTimers,
      ...(opts.policy ? { policy: opts.policy } : {}),
      onRotation: (key, pod, entered) => {
        opts.log?.info(`${key}: pod ${pod} ${entered ? 'entered' : 'left'} /fn's rotation`, { function: key, pod, reason: entered ? 'PodInRotation' : 'PodOutOfRotation' });
        if (entered) for (const wake of [...this.waiters]) wake();
      },
    });
    this.informer = endpointSliceInformer({
      kubeConfig: opts.kubeConfig,
      onEvent: (event, slice) => this.table.apply(event, slice),
      ...(opts.onError ? { onError: opts.onError } : {}),
      ...(opts.timers ? { timers: opts.timers } : {}),
    });
  }

  /** The function's pods; undefined until the watch has listed or when its Service has no slice. */
  pods(namespace: string, name: string): FunctionPods | undefined {
    return this.listed ? this.table.pods(namespace, name) : undefined;
  }

  /**
   * Resolves when a pod of the function is in rotation (at once if one is), or when `signal` aborts.
   * For a wake (Platform.scaling.wake): it then needs no polling to forward the held calls.
   */
  whenServing(namespace: string, name: string, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const check = (): void => {
        if (!signal.aborted && !this.pods(namespace, name)?.serving) return;
        this.waiters.delete(check);
        signal.removeEventListener('abort', check);
        resolve();
      };
      this.waiters.add(check);
      signal.addEventListener('abort', check, { once: true });
      check();
    });
  }

  /** Starts the watch; resolves once it has listed. */
  async start(): Promise<void> {
    await this.informer.start();
    this.listed = true;
  }

  async stop(): Promise<void> {
    await this.informer.stop();
    this.table.close();
    await this.closeProbe();
  }
}
