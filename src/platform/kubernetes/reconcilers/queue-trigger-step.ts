// A queue Trigger's reconcile (docs/queues.md): its consumer runs in this leader (queue-consumers.ts)
// with the username/password of a Secret of the Trigger's own namespace, and its status carries the
// consumer's state and the queue's last readings (lag, in flight, dead-lettered). It reconciles every
// QUEUE_STATUS_INTERVAL_MS for those readings: a modest interval, never a write per message.
import { queueSettingsOf } from '../../../manifest/queue-schema.ts';
import type { ConsumerStatus, QueueCredentials } from '../../../queue/queue-consumer.ts';
import type { FunctionResource, TriggerResource, TriggerStatus } from '../objects/resources.ts';
import type { Reconciled } from './reconcile-object.ts';
import type { ReconcileContext } from './reconcile-context.ts';
import type { KubeQueueConsumers } from '../queue-consumers.ts';
import { envSecretProblem } from '../../tenant-rules.ts';
import type { TenantRefusalReason, TriggerReason } from '../../reasons.ts';

/** How often a queue Trigger's status takes the consumer's readings (the consumer reads the queue every 5 s). */
export const QUEUE_STATUS_INTERVAL_MS = 10_000;
/** A Trigger that cannot run (no Secret, over the namespace's cap) looks again this often. */
const QUEUE_RETRY_MS = 30_000;

class SecretRefused extends Error {
  constructor(
    readonly reason: TenantRefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** Why a Secret cannot serve as a queue trigger's credentials (pure): missing, or without a key. */
export function credentialsFromSecret(namespace: string, name: string, secret: { data: Record<string, string> } | undefined): QueueCredentials | string {
  if (!secret) return `Secret ${namespace}/${name} (spec.queue.secret) does not exist; create it with the keys username and password`;
  const missing = ['username', 'password'].filter((k) => !secret.data[k]);
  if (missing.length > 0) return `Secret ${namespace}/${name} (spec.queue.secret) has no ${missing.join(' or ')} key`;
  return { username: secret.data['username'] as string, password: secret.data['password'] as string };
}

/** The Trigger's Ready condition from its consumer's state (pure). */
export function queueOutcome(status: ConsumerStatus | undefined, queue: string, url: string): Reconciled<TriggerStatus, TriggerReason>['outcome'] {
  if (!status || status.state === 'connecting') return { kind: 'progressing', reason: 'Connecting', message: `connecting to ${url}` };
  if (status.state === 'consuming') return { kind: 'ready', reason: 'Consuming', message: `consuming "${queue}" on ${url}` };
  const why = status.message ?? 'not consuming';
  // The consumer keeps trying (with backoff): a queue created later is consumed without a change here.
  if (/does not exist/.test(why)) return { kind: 'stalled', reason: 'QueueNotFound', message: `${why}; retrying` };
  if (/refused the login/.test(why)) return { kind: 'stalled', reason: 'LoginRefused', message: `${why}; retrying` };
  return { kind: 'progressing', reason: 'Connecting', message: `${why}; retrying` };
}

export async function queueTriggerSteps(
  ctx: Pick<ReconcileContext, 'kube' | 'settings'> & { readonly queues?: KubeQueueConsumers },
  trigger: TriggerResource,
  key: string,
  namespace: string,
  fn: FunctionResource,
): Promise<Reconciled<TriggerStatus, TriggerReason>> {
  const spec = trigger.spec;
  const queues = ctx.queues;
  if (!spec?.queue) return { outcome: { kind: 'stalled', reason: 'InvalidSpec', message: 'a queue trigger needs spec.queue' }, status: { active: false } };
  if (!queues) {
    return { outcome: { kind: 'stalled', reason: 'QueuesUnavailable', message: 'this controller runs no queue consumers (it was started without the function endpoints)' }, status: { active: false } };
  }
  if (spec.enabled === false) {
    await queues.remove(key);
    return { outcome: { kind: 'ready', reason: 'Disabled', message: 'spec.enabled is false: not consuming' }, status: { active: false, queueStats: null } };
  }
  const settings = queueSettingsOf(spec.queue);
  const target = { namespace, function: fn.metadata?.name ?? spec.functionRef, spec: { name: trigger.metadata?.name ?? '', ...settings } };
  const secretName = settings.secret;
  let result;
  try {
    result = await queues.ensure(key, target, async () => {
      if (secretName === undefined) return undefined;
      const secret = await ctx.kube.readSecret(namespace, secretName);
      // The env_from_secrets rules: only an application Secret of the Trigger's own namespace.
      const platformNames = [ctx.settings.registrySecretName, ...ctx.settings.imagePullSecrets];
      const refused = envSecretProblem(namespace, secretName, secret && { type: secret.type }, platformNames);
      if (refused) throw new SecretRefused(refused.reason, refused.message.replace(/^env_from_secrets: /, 'spec.queue.secret: '));
      const got = credentialsFromSecret(namespace, secretName, secret);
      if (typeof got === 'string') throw new SecretRefused('SecretNotFound', got);
      return got;
    });
  } catch (err) {
    if (!(err instanceof SecretRefused)) throw err;
    return { outcome: { kind: 'stalled', reason: err.reason, message: err.message }, status: { active: false, queueStats: null }, requeueAfterMs: QUEUE_RETRY_MS };
  }
  if (result.kind === 'refused') return { outcome: { kind: 'stalled', reason: result.reason, message: result.message }, status: { active: false, queueStats: null }, requeueAfterMs: QUEUE_RETRY_MS };
  const s = result.status;
  return {
    outcome: queueOutcome(s, settings.queue, settings.url),
    status: {
      active: s?.state === 'consuming',
      queueStats: { ...(s?.lag === undefined ? {} : { lag: s.lag }), inFlight: s?.inFlight ?? 0, ...(s?.deadLettered === undefined ? {} : { deadLettered: s.deadLettered }) },
    },
    requeueAfterMs: s?.state === 'consuming' ? QUEUE_STATUS_INTERVAL_MS : 2_000,
  };
}
