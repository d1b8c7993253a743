// The triggers /v1 and the console see in `sless dev`: schedules and other triggers of
// jobs-and-schedules.ts beside the read-only queue triggers of the functions' manifests
// (local-queue-triggers.ts), one list per namespace; queue triggers change in function.yaml only.
import type { ManagedBy, QueueTriggerTarget, TriggerInput, TriggerRecord } from '../types.ts';
import type { JobsAndSchedules } from './jobs-and-schedules.ts';
import { queueTriggerIsGitOwned, queueTriggerRecords, type QueueReader } from './local-queue-triggers.ts';

export interface LocalTriggersOptions {
  readonly jobs: JobsAndSchedules;
  /** The queue triggers the functions' manifests declare now. */
  readonly queueTargets: () => QueueTriggerTarget[];
  readonly managedBy: ManagedBy;
  readonly repoName: string;
  readonly repoDisplayUrl: string;
}

export class LocalTriggers {
  readonly #o: LocalTriggersOptions;
  #queueReader: QueueReader | undefined;

  constructor(opts: LocalTriggersOptions) {
    this.#o = opts;
  }

  /** Where the consumers' readings come from (dev.ts: the running queue triggers). */
  readQueuesFrom(reader: QueueReader): void {
    this.#queueReader = reader;
  }

  list(namespace: string): TriggerRecord[] {
    return [...this.#o.jobs.listTriggers(namespace), ...this.#queueTriggers(namespace)].sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  get(namespace: string, name: string): TriggerRecord {
    return this.#queueTriggers(namespace).find((t) => t.name === name) ?? this.#o.jobs.getTrigger(namespace, name);
  }
  create(namespace: string, input: TriggerInput): Promise<TriggerRecord> {
    return this.#o.jobs.createTrigger(namespace, input);
  }
  async setEnabled(namespace: string, name: string, enabled: boolean): Promise<TriggerRecord> {
    this.#refuseQueueTrigger(namespace, name);
    return this.#o.jobs.setTriggerEnabled(namespace, name, enabled);
  }
  async delete(namespace: string, name: string): Promise<void> {
    this.#refuseQueueTrigger(namespace, name);
    return this.#o.jobs.deleteTrigger(namespace, name);
  }

  #queueTriggers(namespace: string): TriggerRecord[] {
    return queueTriggerRecords(this.#o.queueTargets(), namespace, this.#o.managedBy, this.#queueReader);
  }
  #refuseQueueTrigger(namespace: string, name: string): void {
    const t = this.#queueTriggers(namespace).find((q) => q.name === name);
    if (t) throw queueTriggerIsGitOwned(t, this.#o.repoDisplayUrl, this.#o.repoName);
  }
}
