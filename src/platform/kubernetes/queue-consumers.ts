// The queue consumers of the controller leader (docs/queues.md): one per enabled queue Trigger, with
// per-namespace limits so one tenant's queues cannot starve another's or /fn on this replica — at most
// `consumersPerNamespace` consumers (the rest are refused: the Trigger reports it) and at most
// `inFlightPerNamespace` calls at once for all of a namespace's consumers together (each trigger's
// prefetch is capped to it too, so a consumer never holds more unacked messages than its namespace
// may call). Credentials are read by the caller from the tenant's own Secret, only when a consumer
// starts. A new leader starts its consumers from the Triggers; what the old one had unacked the broker
// delivers again (at least once).
import PQueue from 'p-queue';
import type { Registry } from 'prom-client';
import type { InvocationLog } from '../../store/types.ts';
import type { Invoke } from '../../queue/invoke.ts';
import type { ConsumerStatus, QueueCredentials } from '../../queue/queue-consumer.ts';
import { QueueTriggers, type QueueTriggerTarget } from '../../queue/queue-triggers.ts';
import type { RetryDelays } from '../../queue/delivery.ts';

export interface QueueLimits {
  readonly consumersPerNamespace: number;
  readonly inFlightPerNamespace: number;
}

export interface KubeQueueConsumersOptions {
  readonly invoke: Invoke;
  readonly limits: QueueLimits;
  readonly registry?: Registry;
  readonly invocationLog?: InvocationLog;
  readonly retryDelays?: RetryDelays;
  readonly log: { info(msg: string): void; warn(msg: string): void; error(msg: string): void };
}

export type EnsureResult =
  | { readonly kind: 'running'; readonly status: ConsumerStatus | undefined }
  | { readonly kind: 'refused'; readonly reason: 'QueueConsumerLimit'; readonly message: string };

/** Whether one more consumer fits in a namespace holding `held` (pure). */
export function consumerLimitProblem(namespace: string, held: number, cap: number): string | undefined {
  if (held < cap) return undefined;
  return `namespace ${namespace} already runs ${held} queue consumers, the most one namespace may (SLESS_MAX_QUEUE_CONSUMERS_PER_NAMESPACE=${cap}); disable or remove another queue trigger`;
}

/** A consumer's prefetch within its namespace's in-flight cap (pure). */
export function effectivePrefetch(prefetch: number, inFlightPerNamespace: number): number {
  return Math.max(1, Math.min(prefetch, inFlightPerNamespace));
}

export class KubeQueueConsumers {
  readonly #o: KubeQueueConsumersOptions;
  readonly #triggers: QueueTriggers;
  /** Trigger key (ns/name) → what runs for it. */
  readonly #wanted = new Map<string, QueueTriggerTarget>();
  readonly #credentials = new Map<string, QueueCredentials>();
  /** One bounded lane per namespace: its consumers' calls together. */
  readonly #lanes = new Map<string, PQueue>();

  constructor(o: KubeQueueConsumersOptions) {
    this.#o = o;
    this.#triggers = new QueueTriggers({
      invoke: (req) => this.#lane(req.namespace).add(() => o.invoke(req)),
      credentialsOf: async (namespace, secret) => {
        const c = this.#credentials.get(`${namespace}/${secret}`);
        if (!c) throw new Error(`Secret ${namespace}/${secret} was not read`);
        return c;
      },
      ...(o.registry ? { registry: o.registry } : {}),
      ...(o.invocationLog ? { invocationLog: o.invocationLog } : {}),
      ...(o.retryDelays ? { retryDelays: o.retryDelays } : {}),
      log: o.log,
    });
  }

  /**
   * Runs (or keeps running) the consumer of Trigger `key` as `target` says. `credentials` is called only
   * when the consumer (re)starts; what it throws is passed on (the reconciler stalls the Trigger).
   */
  async ensure(key: string, target: QueueTriggerTarget, credentials: () => Promise<QueueCredentials | undefined>): Promise<EnsureResult> {
    const capped: QueueTriggerTarget = { ...target, spec: { ...target.spec, prefetch: effectivePrefetch(target.spec.prefetch, this.#o.limits.inFlightPerNamespace) } };
    const current = this.#wanted.get(key);
    if (current && JSON.stringify(current) === JSON.stringify(capped)) {
      return { kind: 'running', status: this.#triggers.statusOf(capped) };
    }
    if (!current) {
      const held = [...this.#wanted.values()].filter((t) => t.namespace === target.namespace).length;
      const problem = consumerLimitProblem(target.namespace, held, this.#o.limits.consumersPerNamespace);
      if (problem) return { kind: 'refused', reason: 'QueueConsumerLimit', message: problem };
    }
    const secret = target.spec.secret;
    const c = await credentials();
    if (secret !== undefined && c) this.#credentials.set(`${target.namespace}/${secret}`, c);
    this.#wanted.set(key, capped);
    await this.#apply();
    return { kind: 'running', status: this.#triggers.statusOf(capped) };
  }

  /** Stops the consumer of `key` (removed or disabled Trigger); its calls in flight finish and settle first. */
  async remove(key: string): Promise<void> {
    if (!this.#wanted.delete(key)) return;
    await this.#apply();
  }

  has(key: string): boolean {
    return this.#wanted.has(key);
  }

  async close(): Promise<void> {
    this.#wanted.clear();
    await this.#triggers.close();
  }

  #apply(): Promise<void> {
    return this.#triggers.apply([...this.#wanted.values()]);
  }

  #lane(namespace: string): PQueue {
    let lane = this.#lanes.get(namespace);
    if (!lane) {
      lane = new PQueue({ concurrency: this.#o.limits.inFlightPerNamespace });
      this.#lanes.set(namespace, lane);
    }
    return lane;
  }
}
