import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { reportBudgetWait } from './budget-wait-report.ts';
import { createControllerMetrics } from './controller-metrics.ts';

describe('reportBudgetWait: a sync held back for its share of sync time is visible', () => {
  it('logs which repository waits, how long and why, and counts the waits and their seconds per queue', async () => {
    const registry = new Registry();
    const metrics = createControllerMetrics(registry);
    const lines: Array<{ message: string; fields?: Record<string, unknown> }> = [];
    const logger = { info: (message: string, fields?: Record<string, unknown>) => void lines.push({ message, fields }), warn() {}, error() {} };
    const report = reportBudgetWait(metrics, logger, 'FunctionRepository');
    report('team-a/busy-repo', 20_000);
    report('team-a/busy-repo', 5_500);

    assert.equal(lines.length, 2);
    assert.match(lines[0]!.message, /^SyncDeferred: FunctionRepository team-a\/busy-repo .*share of sync time.* 20\.0 s/);
    assert.deepEqual(lines[0]!.fields, { reason: 'SyncDeferred', queue: 'FunctionRepository', key: 'team-a/busy-repo', waitMs: 20_000 });
    const text = await registry.metrics();
    assert.match(text, /sless_workqueue_budget_waits_total\{queue="FunctionRepository"\} 2/);
    assert.match(text, /sless_workqueue_budget_wait_seconds_total\{queue="FunctionRepository"\} 25\.5/);
  });
});
