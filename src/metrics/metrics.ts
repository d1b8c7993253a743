// Typed prom-client handles on one registry, shared by the HTTP surface, syncs and builds.
// createMetrics is idempotent per registry (prom-client refuses to register a name twice), so every
// component can call it with the registry it was given.
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CompactCounter } from './compact-counter.ts';
import { CompactHistogram, type LabeledHistogram } from './compact-histogram.ts';

export interface Metrics {
  /** /fn calls, labels namespace, function, status_class (2xx..5xx). Compact: /fn counts every call (invocationSeries). */
  readonly invocations: CompactCounter<'namespace' | 'function' | 'status_class'>;
  readonly invocationDuration: CompactHistogram<'namespace' | 'function' | 'status_class'>;
  /** /hooks deliveries by provider and outcome (accepted, ignored, unauthorized, not_found, bad_request). */
  readonly webhooks: Counter<'provider' | 'outcome'>;
  /** /v1 (and console) requests refused because the token did not verify, by reason. */
  readonly authFailures: Counter<'reason'>;
  /** Invocation/build records dropped because the queue was full or the database unreachable. */
  readonly invocationLogDropped: Counter<'reason'>;
  readonly buildLogDropped: Counter<'reason'>;
  /** For the sync code: one observation per repository sync. */
  readonly syncDuration: Histogram<'namespace' | 'repository' | 'outcome'>;
  /** For the build code: one observation per image build; one series per function (compact-histogram.ts: ~15 KB each in prom-client's). */
  readonly buildDuration: LabeledHistogram<'namespace' | 'function' | 'outcome'>;
  /** Scaling (issue 29, both platforms): replicas wanted (state desired) and serving (state ready). */
  readonly replicas: Gauge<'namespace' | 'function' | 'state'>;
  /** A call held for a function at zero: from held to forwarded to the new replica. */
  readonly coldStart: LabeledHistogram<'namespace' | 'function'>;
  /** Changes of the desired replicas, direction up or down. */
  readonly scaleEvents: Counter<'namespace' | 'function' | 'direction'>;
  /** The optional record store (DATABASE_URL): 1 when its last check or write succeeded, 0 when not.
   * A label, not a bare gauge: prom-client shows an unlabelled gauge as 0 before it is set, which
   * would read as "down" on a controller without a database. */
  readonly databaseUp: Gauge<'store'>;
}

const cache = new WeakMap<Registry, Metrics>();

export function createMetrics(registry: Registry): Metrics {
  const known = cache.get(registry);
  if (known) return known;
  const registers = [registry];
  const metrics: Metrics = {
    invocations: new CompactCounter('sless_invocations_total', 'Calls through /fn, by function and status class', ['namespace', 'function', 'status_class'], registers),
    invocationDuration: new CompactHistogram(
      'sless_invocation_duration_seconds',
      'Time from request to the end of the response through /fn',
      ['namespace', 'function', 'status_class'],
      [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    ),
    webhooks: new Counter({
      name: 'sless_webhooks_total',
      help: 'Webhook deliveries on /hooks, by provider and outcome',
      labelNames: ['provider', 'outcome'],
      registers,
    }),
    authFailures: new Counter({
      name: 'sless_auth_failures_total',
      help: 'Requests refused because their token did not verify, by reason (missing, expired, bad_signature, ...)',
      labelNames: ['reason'],
      registers,
    }),
    invocationLogDropped: new Counter({
      name: 'sless_invocation_log_dropped_total',
      help: 'Invocation records not stored (queue full or database unreachable)',
      labelNames: ['reason'],
      registers,
    }),
    buildLogDropped: new Counter({
      name: 'sless_build_log_dropped_total',
      help: 'Build records not stored (queue full or database unreachable)',
      labelNames: ['reason'],
      registers,
    }),
    syncDuration: new Histogram({
      name: 'sless_sync_duration_seconds',
      help: 'Duration of one repository sync',
      labelNames: ['namespace', 'repository', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    buildDuration: new CompactHistogram(
      'sless_build_duration_seconds',
      'Duration of one function image build',
      ['namespace', 'function', 'outcome'],
      [1, 5, 10, 30, 60, 120, 300, 600, 1200],
      registers,
    ),
    replicas: new Gauge({
      name: 'sless_function_replicas',
      help: 'Replicas of a function: desired (what the autoscaler wants) and ready (serving)',
      labelNames: ['namespace', 'function', 'state'],
      registers,
    }),
    coldStart: new CompactHistogram(
      'sless_cold_start_seconds',
      'Time a /fn call waited for a function at zero to start (held to forwarded)',
      ['namespace', 'function'],
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    ),
    scaleEvents: new Counter({
      name: 'sless_scale_events_total',
      help: 'Changes of the desired replicas of a function, by direction (up, down)',
      labelNames: ['namespace', 'function', 'direction'],
      registers,
    }),
    databaseUp: new Gauge({
      name: 'sless_database_up',
      help: 'The invocation/build log database (DATABASE_URL): 1 when its last check or write succeeded, 0 when not',
      labelNames: ['store'],
      registers,
    }),
  };
  cache.set(registry, metrics);
  return metrics;
}

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
const BUILD_OUTCOMES = ['succeeded', 'failed'] as const;
const SYNC_OUTCOMES = ['success', 'failure'] as const;

export interface InvocationSeries {
  readonly count: { inc(): void };
  readonly duration: { observe(value: number): void };
}
const seriesCache = new WeakMap<Metrics, Map<string, InvocationSeries>>();

/** The /fn series of one function and status class, held per key: finding a series by its labels costs more than counting. */
export function invocationSeries(metrics: Metrics, namespace: string, fn: string, status: string): InvocationSeries {
  let byKey = seriesCache.get(metrics);
  if (!byKey) seriesCache.set(metrics, (byKey = new Map()));
  const key = `${namespace}/${fn}/${status}`;
  let series = byKey.get(key);
  if (!series) {
    const labels = { namespace, function: fn, status_class: status };
    series = { count: metrics.invocations.child(labels), duration: metrics.invocationDuration.child(labels) };
    // dropFunctionSeries removes a deleted function's entries; the bound covers processes that never hear of deletions.
    if (byKey.size > 10_000) byKey.clear();
    byKey.set(key, series);
  }
  return series;
}

/** A deleted function's series go with it (otherwise every function ever deployed stays in /metrics). */
export function dropFunctionSeries(metrics: Metrics, namespace: string, fn: string): void {
  const cached = seriesCache.get(metrics);
  for (const status_class of STATUS_CLASSES) {
    metrics.invocations.remove({ namespace, function: fn, status_class });
    metrics.invocationDuration.remove({ namespace, function: fn, status_class });
    cached?.delete(`${namespace}/${fn}/${status_class}`);
  }
  for (const outcome of BUILD_OUTCOMES) metrics.buildDuration.remove({ namespace, function: fn, outcome });
  for (const state of ['desired', 'ready']) metrics.replicas.remove({ namespace, function: fn, state });
  for (const direction of ['up', 'down']) metrics.scaleEvents.remove({ namespace, function: fn, direction });
  metrics.coldStart.remove({ namespace, function: fn });
}

/** A deleted repository's sync series go with it. */
export function dropRepositorySeries(metrics: Pick<Metrics, 'syncDuration'>, namespace: string, repository: string): void {
  for (const outcome of SYNC_OUTCOMES) metrics.syncDuration.remove({ namespace, repository, outcome });
}

/** `2xx`, `4xx`, ... for a status code. */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}
