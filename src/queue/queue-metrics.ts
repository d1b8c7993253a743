// Prometheus handles of the queue triggers, made once per registry (prom-client refuses to register
// a name twice; metrics.ts's createMetrics keeps the same rule).
import { Counter, Gauge, type Registry } from 'prom-client';

function makeQueueMetrics(registry: Registry) {
  const registers = [registry];
  const labelNames = ['namespace', 'function', 'trigger'] as const;
  return {
    /** Messages settled, by outcome: acked (2xx), retried (sent to a delay queue), dead_lettered. */
    messages: new Counter({
      name: 'sless_queue_messages_total',
      help: 'Queue trigger messages settled, by outcome (acked, retried, dead_lettered)',
      labelNames: [...labelNames, 'outcome'],
      registers,
    }),
    /** Ready messages in the consumed queue at the last reading. */
    lag: new Gauge({ name: 'sless_queue_lag', help: "Ready messages waiting in a queue trigger's queue (last reading)", labelNames, registers }),
    /** Messages in the trigger's dead-letter queue at the last reading. */
    deadLetterDepth: new Gauge({ name: 'sless_queue_dead_letter_messages', help: "Messages in a queue trigger's dead-letter queue (last reading)", labelNames, registers }),
  };
}

export type QueueMetrics = ReturnType<typeof makeQueueMetrics>;
const made = new WeakMap<Registry, QueueMetrics>();

export function queueMetrics(registry: Registry): QueueMetrics {
  const metrics = made.get(registry) ?? makeQueueMetrics(registry);
  made.set(registry, metrics);
  return metrics;
}
