// `sless dev`'s queue triggers: every second, the triggers the functions' manifests declare are
// applied (a sync that adds, changes or removes one takes effect within that second), credentials
// from --secrets-dir, calls through the local platform's endpoints.
import type { Registry } from 'prom-client';
import type { Logger } from './logger.ts';
import { readSecretDir } from './secrets-dir.ts';
import type { Platform } from '../types.ts';
import type { InvocationLog } from '../../store/types.ts';
import { httpInvoker } from '../queue-invoker.ts';
import type { QueueCredentials } from '../../queue/queue-consumer.ts';
import { QueueTriggers, type QueueTriggerTarget } from '../../queue/queue-triggers.ts';

export interface DevQueuesOptions {
  readonly platform: Pick<Platform, 'resolveEndpoint'> & { queueTriggers(): QueueTriggerTarget[] };
  readonly secretsDir?: string;
  readonly registry: Registry;
  readonly invocationLog: InvocationLog;
  readonly logger: Logger;
  readonly intervalMs?: number;
}

/** username and password of a secret folder; a missing key is named. */
export async function queueCredentialsFrom(secretsDir: string | undefined, secret: string): Promise<QueueCredentials> {
  const keys = await readSecretDir(secretsDir, secret);
  const missing = ['username', 'password'].filter((k) => keys[k] === undefined);
  if (missing.length > 0) throw new Error(`secret "${secret}" has no ${missing.join(' or ')} (a file per key in its folder)`);
  return { username: keys['username'] as string, password: keys['password'] as string };
}

export function startDevQueues(o: DevQueuesOptions): { triggers: QueueTriggers; close(): Promise<void> } {
  const triggers = new QueueTriggers({
    invoke: httpInvoker(o.platform),
    credentialsOf: (_namespace, secret) => queueCredentialsFrom(o.secretsDir, secret),
    registry: o.registry,
    invocationLog: o.invocationLog,
    log: o.logger,
  });
  const tick = () => void triggers.apply(o.platform.queueTriggers());
  tick();
  const timer = setInterval(tick, o.intervalMs ?? 1000);
  timer.unref();
  return {
    triggers,
    async close() {
      clearInterval(timer);
      await triggers.close();
    },
  };
}
