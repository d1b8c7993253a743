// sless_kube_requests_total{verb, resource}: every request this process sent to the API server, counted
// at the one dispatcher they all pass (reuse-connections.ts). KubeClient's own count (sless_controller_api_requests)
// sees only the reconcilers' calls; the informers' LISTs and WATCHes, the Lease and the serving cache's
// watches are here too, so a benchmark or an operator can read the controller's whole API load from /metrics.
import type { KubeConfig } from '@kubernetes/client-node';
import { Counter, type Registry } from 'prom-client';
import type { ApiVerb } from './api-request-kind.ts';
import { reuseConnections, type ApiRequestObserver } from './reuse-connections.ts';

/** More label pairs than the controller's code can make (~40 today); past it new ones count as `other`. */
const MAX_SERIES = 200;

const counters = new WeakMap<Registry, Counter<'verb' | 'resource'>>();

function counterOf(registry: Registry): Counter<'verb' | 'resource'> {
  let counter = counters.get(registry);
  if (!counter) {
    counter = new Counter({
      name: 'sless_kube_requests_total',
      help: 'Requests this process sent to the Kubernetes API server, by verb (a GET of a collection is LIST, a watch WATCH) and resource (plural, with /subresource)',
      labelNames: ['verb', 'resource'],
      registers: [registry],
    });
    counters.set(registry, counter);
  }
  return counter;
}

/** An observer that counts into `counter`, with at most `maxSeries` label pairs. */
export function boundedRequestCounter(counter: Pick<Counter<'verb' | 'resource'>, 'labels'>, maxSeries = MAX_SERIES): ApiRequestObserver {
  // prom-client hashes the label set on every inc(): the children are kept per key.
  const children = new Map<string, { inc(): void }>();
  const child = (verb: ApiVerb, resource: string) => {
    const key = `${verb} ${resource}`;
    let c = children.get(key);
    if (!c) {
      if (children.size >= maxSeries && resource !== 'other') return child(verb, 'other');
      c = counter.labels({ verb, resource });
      children.set(key, c);
    }
    return c;
  };
  return (verb, resource) => child(verb, resource).inc();
}

/** Counts every request of `kc`'s clients into `registry` (and makes them share connections); returns kc. */
export function countApiRequests(kc: KubeConfig, registry: Registry): KubeConfig {
  return reuseConnections(kc, boundedRequestCounter(counterOf(registry)));
}
