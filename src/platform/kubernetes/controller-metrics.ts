// Controller metrics on the process registry (the HTTP layer serves them on /metrics): syncs, builds,
// queue depth and reconcile durations. Idempotent per registry, like src/metrics.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { createMetrics, type Metrics } from '../../metrics/metrics.ts';

export interface ControllerMetrics {
  readonly syncs: Counter<'outcome'>;
  /** Syncs that stopped after ls-remote: the remote head was the revision applied last (reconcilers/unchanged-sync.ts). */
  readonly syncsUnchanged: Counter;
  readonly builds: Counter<'outcome'>;
  readonly queueDepth: Gauge<'queue'>;
  /** Runs a queue held back for a group's share of run time (api-client/time-budget.ts), and for how long in all. */
  readonly budgetWaits: Counter<'queue'>;
  readonly budgetWaitSeconds: Counter<'queue'>;
  readonly reconcileDuration: Histogram<'kind' | 'outcome'>;
  readonly apiRequests: Gauge;
  readonly syncDuration: Metrics['syncDuration'];
  readonly buildDuration: Metrics['buildDuration'];
}

const cache = new WeakMap<Registry, ControllerMetrics>();

export function createControllerMetrics(registry: Registry): ControllerMetrics {
  const known = cache.get(registry);
  if (known) return known;
  const registers = [registry];
  const shared = createMetrics(registry);
  const metrics: ControllerMetrics = {
    syncs: new Counter({ name: 'sless_repository_syncs_total', help: 'Repository syncs by outcome', labelNames: ['outcome'], registers }),
    syncsUnchanged: new Counter({
      name: 'sless_repository_syncs_unchanged_total',
      help: 'Repository syncs that stopped after ls-remote: the remote head was the revision applied last and nothing else changed',
      registers,
    }),
    builds: new Counter({
      name: 'sless_builds_total',
      help: 'Image builds by outcome (started, succeeded, failed)',
      labelNames: ['outcome'],
      registers,
    }),
    queueDepth: new Gauge({ name: 'sless_workqueue_depth', help: 'Keys waiting or running per work queue', labelNames: ['queue'], registers }),
    budgetWaits: new Counter({
      name: 'sless_workqueue_budget_waits_total',
      help: 'Runs held back because their repository or namespace used its share of run time',
      labelNames: ['queue'],
      registers,
    }),
    budgetWaitSeconds: new Counter({
      name: 'sless_workqueue_budget_wait_seconds_total',
      help: 'Seconds runs were held back for their share of run time, summed',
      labelNames: ['queue'],
      registers,
    }),
    reconcileDuration: new Histogram({
      name: 'sless_reconcile_duration_seconds',
      help: 'Duration of one reconcile by kind and outcome',
      labelNames: ['kind', 'outcome'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    apiRequests: new Gauge({ name: 'sless_controller_api_requests', help: 'Kubernetes API requests made by reconcilers', registers }),
    syncDuration: shared.syncDuration,
    buildDuration: shared.buildDuration,
  };
  cache.set(registry, metrics);
  return metrics;
}
