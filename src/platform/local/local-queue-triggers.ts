// `sless dev`'s queue triggers as /v1 and the console list them: one read-only Trigger per `queues:`
// entry of a function.yaml (named as the Kubernetes sync names it), with the consumer's last readings.
// The consumers themselves run beside the platform (local-queues.ts); this only shows them.
import { queueTriggerName } from '../../manifest/generated-names.ts';
import { PlatformError, type ManagedBy, type QueueStats, type QueueTriggerTarget, type TriggerRecord } from '../types.ts';

/** What the running consumer of a trigger reports: consuming or not, and its last readings. */
export interface QueueReading {
  readonly consuming: boolean;
  readonly stats: QueueStats;
}

export type QueueReader = (target: QueueTriggerTarget) => QueueReading | undefined;

/** The namespace's queue triggers, sorted by name (pure). */
export function queueTriggerRecords(targets: readonly QueueTriggerTarget[], namespace: string, managedBy: ManagedBy, read?: QueueReader): TriggerRecord[] {
  return targets
    .filter((t) => t.namespace === namespace)
    .map((t): TriggerRecord => {
      const { name, ...queue } = t.spec;
      const reading = read?.(t);
      return {
        name: queueTriggerName(t.function, name),
        namespace,
        type: 'queue',
        functionRef: t.function,
        enabled: true,
        active: reading?.consuming ?? false,
        queue,
        ...(reading ? { queueStats: reading.stats } : {}),
        managedBy,
      };
    })
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** A queue trigger is changed in its function.yaml, never through /v1 (409, as for other git-managed triggers). */
export function queueTriggerIsGitOwned(t: TriggerRecord, repoDisplayUrl: string, repoName: string): PlatformError {
  return new PlatformError('managed_by_git', `trigger ${t.namespace}/${t.name} comes from function.yaml of ${t.functionRef} in ${repoDisplayUrl}; change its queues: there`, {
    repository: repoName,
  });
}
