// The one wait a repository's queue imposes on purpose (api-client/time-budget.ts: a repository or namespace
// that used its share of sync time waits to earn it back) must not look like a stuck controller: each
// deferral is a log line and two counters, so "my push took 20 s" has an answer in the logs and on /metrics.
import type { ControllerMetrics } from './controller-metrics.ts';
import type { ControllerLogger } from './reconcilers/reconcile-context.ts';

export function reportBudgetWait(metrics: ControllerMetrics, logger: ControllerLogger, queue: string): (key: string, waitMs: number) => void {
  return (key, waitMs) => {
    metrics.budgetWaits.inc({ queue });
    metrics.budgetWaitSeconds.inc({ queue }, waitMs / 1000);
    logger.info(`SyncDeferred: ${queue} ${key} used its share of sync time; its next run waits ${(waitMs / 1000).toFixed(1)} s`, {
      reason: 'SyncDeferred',
      queue,
      key,
      waitMs,
    });
  };
}
