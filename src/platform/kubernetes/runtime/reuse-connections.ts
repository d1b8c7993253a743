// @kubernetes/client-node 2.x builds a new undici Agent for every API call (KubeConfig.createDispatcher runs
// in applySecurityAuthentication, uncached), so no connection is ever reused: every request pays a TCP
// connect (and a TLS handshake against a real API server) and leaves an idle socket behind. This keeps one
// dispatcher per cluster, user and TLS options on the KubeConfig instance, so requests share keep-alive
// connections the way client-go's transport does.
//
// Every request of every client made from the KubeConfig (API calls, informers' lists and watches, the
// Lease) passes that dispatcher, so it is also where they are counted: an interceptor tells the observer of
// each one as it is dispatched (sless_kube_requests_total, api-request-metrics.ts).
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, type Dispatcher } from 'undici';
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
      // Without TLS options client-node answers undefined (fetch then takes undici's global dispatcher, which
      // nothing here would see); an Agent of our own, as that global one is, keeps those requests counted.
      const dispatcher = (original(cluster, agentOptions) as Dispatcher | undefined) ?? new Agent();
      cache.set(key, dispatcher.compose(observe));
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
