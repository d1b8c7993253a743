// The queue triggers a process runs: given the wanted set (from the functions' manifests), starts a
// consumer for each new trigger, stops the ones removed, and restarts one whose definition changed.
// Every settled message is counted (queue-metrics.ts) and recorded in the invocation log as a
// `QUEUE /queues/<trigger>` call, beside /fn's calls.
import type { Registry } from 'prom-client';
import type { InvocationLog } from '../store/types.ts';
import type { Invoke, QueueTriggerTarget } from './invoke.ts';
import { QueueConsumer, type ConsumerStatus, type QueueCredentials } from './queue-consumer.ts';
import { queueMetrics } from './queue-metrics.ts';
import type { RetryDelays } from './delivery.ts';

export type { QueueTriggerTarget };

export interface QueueTriggersOptions {
  readonly invoke: Invoke;
  /** The username/password of a trigger's `secret` (throws with a user's message when there is none). */
  readonly credentialsOf: (namespace: string, secret: string) => Promise<QueueCredentials>;
  readonly registry?: Registry;
  readonly invocationLog?: InvocationLog;
  readonly retryDelays?: RetryDelays;
  readonly log: { info(msg: string): void; warn(msg: string): void; error(msg: string): void };
}

export interface QueueTriggerStatus {
  readonly target: QueueTriggerTarget;
  readonly status: ConsumerStatus;
}

interface Running {
  readonly target: QueueTriggerTarget;
  /** The definition it runs, to tell a changed trigger from the same one. */
  readonly definition: string;
  readonly consumer?: QueueConsumer;
  /** Why it does not run (no credentials). */
  readonly problem?: string;
}

const keyOf = (t: QueueTriggerTarget): string => `${t.namespace}/${t.function}/${t.spec.name}`;

function statusOf(r: Running): ConsumerStatus {
  return r.consumer?.status() ?? { state: 'waiting', message: r.problem ?? '', inFlight: 0, redeliveries: 0, counts: { acked: 0, retried: 0, dead_lettered: 0 } };
}

export class QueueTriggers {
  readonly #o: QueueTriggersOptions;
  readonly #running = new Map<string, Running>();
  #applying: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(opts: QueueTriggersOptions) {
    this.#o = opts;
  }

  /** Makes the running set the wanted one. Calls are serialised; a trigger without credentials is tried again on the next call. */
  apply(wanted: readonly QueueTriggerTarget[]): Promise<void> {
    this.#applying = this.#applying.then(() => this.#apply(wanted)).catch((err: unknown) => this.#o.log.error(`queue triggers: ${(err as Error).message}`));
    return this.#applying;
  }

  statuses(): QueueTriggerStatus[] {
    return [...this.#running.values()].map((r) => ({ target: r.target, status: statusOf(r) }));
  }

  /** The status of one trigger, when it is in the running set (applied, and not removed since). */
  statusOf(target: QueueTriggerTarget): ConsumerStatus | undefined {
    const r = this.#running.get(keyOf(target));
    return r && r.definition === JSON.stringify(target.spec) ? statusOf(r) : undefined;
  }

  /** Stops every consumer (each finishes and settles its calls in flight first). */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#applying;
    await Promise.all([...this.#running.values()].map((r) => r.consumer?.stop()));
    this.#running.clear();
  }

  async #apply(wanted: readonly QueueTriggerTarget[]): Promise<void> {
    if (this.#closed) return;
    const next = new Map(wanted.map((t) => [keyOf(t), t]));
    // A waiting trigger is tried again below; its problem is logged again only when it changed.
    const problems = new Map([...this.#running].flatMap(([key, r]) => (r.problem === undefined ? [] : [[key, r.problem] as const])));
    for (const [key, r] of this.#running) {
      const t = next.get(key);
      if (t !== undefined && JSON.stringify(t.spec) === r.definition && r.consumer !== undefined) continue;
      this.#running.delete(key);
      if (this.#o.registry) {
        const labels = { namespace: r.target.namespace, function: r.target.function, trigger: r.target.spec.name };
        queueMetrics(this.#o.registry).lag.remove(labels);
        queueMetrics(this.#o.registry).deadLetterDepth.remove(labels);
      }
      if (r.consumer) {
        await r.consumer.stop();
        this.#o.log.info(`${key}: queue trigger stopped${t ? ' (changed)' : ''}`);
      }
    }
    for (const [key, t] of next) {
      if (this.#running.has(key)) continue;
      const definition = JSON.stringify(t.spec);
      let credentials: QueueCredentials | undefined;
      if (t.spec.secret !== undefined) {
        try {
          credentials = await this.#o.credentialsOf(t.namespace, t.spec.secret);
        } catch (err) {
          const problem = `${key}: ${(err as Error).message}`;
          if (problems.get(key) !== problem) this.#o.log.error(problem);
          this.#running.set(key, { target: t, definition, problem });
          continue;
        }
      }
      const consumer = this.#consumer(t, credentials);
      this.#running.set(key, { target: t, definition, consumer });
      consumer.start();
      this.#o.log.info(`${key}: queue trigger started: ${t.spec.queue} on ${t.spec.url} (prefetch ${t.spec.prefetch}, retries ${t.spec.retries}, dead letters to ${t.spec.deadLetter})`);
    }
  }

  #consumer(t: QueueTriggerTarget, credentials: QueueCredentials | undefined): QueueConsumer {
    const metrics = this.#o.registry ? queueMetrics(this.#o.registry) : undefined;
    const labels = { namespace: t.namespace, function: t.function, trigger: t.spec.name };
    const key = keyOf(t);
    return new QueueConsumer({
      namespace: t.namespace,
      function: t.function,
      spec: t.spec,
      ...(credentials ? { credentials } : {}),
      invoke: this.#o.invoke,
      ...(this.#o.retryDelays ? { retryDelays: this.#o.retryDelays } : {}),
      log: { info: (m) => this.#o.log.info(m), warn: (m) => this.#o.log.warn(m) },
      onCall: ({ outcome, result, startedAt, durationMs, requestBytes }) => {
        metrics?.messages.inc({ ...labels, outcome });
        this.#o.invocationLog?.record({
          namespace: t.namespace,
          function: t.function,
          method: 'QUEUE',
          path: `/queues/${t.spec.name}`,
          status: result.outcome.status,
          durationMs: Math.round(durationMs * 1000) / 1000,
          requestBytes,
          responseBytes: result.responseBytes,
          startedAt: startedAt.toISOString(),
        });
      },
      onDepth: ({ ready, deadLettered }) => {
        if (!this.#running.has(key)) return;
        metrics?.lag.set(labels, ready);
        metrics?.deadLetterDepth.set(labels, deadLettered);
      },
    });
  }
}
