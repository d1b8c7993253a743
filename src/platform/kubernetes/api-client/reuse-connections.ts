// @kubernetes/client-node 2.x builds a new undici Agent for every API call (KubeConfig.createDispatcher runs
// in applySecurityAuthentication, uncached), so no connection is ever reused: every request pays a TCP
// connect (and a TLS handshake against a real API server) and leaves an idle socket behind. This keeps one
// dispatcher per cluster, user and TLS options on the KubeConfig instance, so requests share keep-alive
// connections the way client-go's transport does.
//
// The dispatchers are made by api-dispatcher.ts (HTTP/1.1, watches apart from calls).
//
// Every request of every client made from the KubeConfig (API calls, informers' lists and watches, the
// Lease) passes that dispatcher, so it is also where they are counted: an interceptor tells the observer of
// each one as it is dispatched (sless_kube_requests_total, api-request-metrics.ts).
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import type { Dispatcher } from 'undici';
import { apiDispatcher } from './api-dispatcher.ts';
import { apiRequestKind, type ApiVerb } from './api-request-kind.ts';

export type ApiRequestObserver = (verb: ApiVerb, resource: string) => void;

type CreateDispatcher = (cluster: unknown, agentOptions: Record<string, unknown>) => unknown;
const PATCHED = Symbol.for('sless.reuseConnections');

interface Patched {
  createDispatcher?: CreateDispatcher;
  [PATCHED]?: { observer: ApiRequestObserver | undefined };
}

/**
 * Makes `kc` reuse one dispatcher per (cluster, user, TLS options); idempotent. `observer`, when given,
 * hears of every request from then on (a later call with another observer replaces it). Returns kc.
 */
export function reuseConnections(kc: KubeConfig, observer?: ApiRequestObserver): KubeConfig {
  const target = kc as unknown as Patched;
  const known = target[PATCHED];
  if (known) {
    if (observer) known.observer = observer;
    return kc;
  }
  if (typeof target.createDispatcher !== 'function') return kc;
  const state: { observer: ApiRequestObserver | undefined } = { observer };
  const original = target.createDispatcher.bind(kc);
  // With client-node's TLS options. Without any, client-node answers undefined (fetch then takes undici's
  // global dispatcher, which nothing here would see); one of our own keeps those requests counted too.
  // Proxies and SOCKS keep client-node's own dispatcher.
  const make = (cluster: unknown, agentOptions: Record<string, unknown>): Dispatcher => {
    const options = kc.createDispatcherOptions(cluster as Cluster | null, agentOptions);
    if (options.type === 'agent') return apiDispatcher(options.connect);
    if (options.type === 'none') return apiDispatcher(undefined);
    return (original(cluster, agentOptions) as Dispatcher | undefined) ?? apiDispatcher(undefined);
  };
  const cache = new Map<string, unknown>();
  // Read at each request, so an observer set after clients were made still hears of their requests.
  const observe = (dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch => (opts, handler) => {
    if (state.observer) {
      const { verb, resource } = apiRequestKind(opts.method, opts.path);
      // Counting must never fail the request it counts.
      try {
        state.observer(verb, resource);
      } catch {
        // ignored
      }
    }
    return dispatch(opts, handler);
  };
  target.createDispatcher = (cluster, agentOptions) => {
    const c = cluster as { name?: string; server?: string } | null;
    const key = JSON.stringify([c?.name, c?.server, kc.getCurrentUser()?.name, fingerprint(agentOptions)]);
    if (!cache.has(key)) {
      cache.set(key, make(cluster, agentOptions).compose(observe));
    }
    return cache.get(key);
  };
  target[PATCHED] = state;
  return kc;
}

/** The TLS options by value (Buffers by length and a sample, enough to tell a rotated certificate). */
function fingerprint(options: Record<string, unknown>): string {
  return JSON.stringify(options, (_k, v: unknown) => {
    if (v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer' && Array.isArray((v as { data?: unknown }).data)) {
      const data = (v as { data: number[] }).data;
      return `buffer:${data.length}:${data.slice(-64).join(',')}`;
    }
    return v;
  });
}
