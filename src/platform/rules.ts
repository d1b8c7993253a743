// Rules both platforms (and the test MemoryPlatform) apply the same way, so a client sees one behaviour.
import { checkCron, checkTimezone } from '../manifest/check-cron.ts';
import { httpTriggerName } from '../manifest/generated-names.ts';
import { queueSettingsProblem } from '../manifest/queue-schema.ts';
import type { TriggerInput } from './types.ts';

/**
 * Whether a function serves /fn, given the enabled flags of its http triggers: while it has none, or
 * while any of them is enabled. Disabled means /fn answers 503 (and 0 replicas on Kubernetes).
 */
export function servesHttp(httpTriggersEnabled: readonly boolean[]): boolean {
  return httpTriggersEnabled.length === 0 || httpTriggersEnabled.includes(true);
}

/**
 * Why a trigger input cannot be taken (undefined when it can): a cron trigger needs a schedule both
 * Kubernetes CronJobs and croner accept, and an IANA time zone if it names one (the function.yaml rule).
 */
export function triggerInputProblem(input: Pick<TriggerInput, 'name' | 'type' | 'schedule' | 'timezone' | 'queue'>): string | undefined {
  if (input.type === 'queue') {
    if (!input.queue) return `queue trigger ${input.name} needs queue: {url, queue}, e.g. {"url": "amqp://rabbitmq:5672/%2f", "queue": "orders"}`;
    const problem = queueSettingsProblem(input.queue);
    return problem ? `trigger ${input.name}: ${problem}` : undefined;
  }
  if (input.queue) return `trigger ${input.name}: queue belongs to type queue only`;
  if (input.type !== 'cron') return undefined;
  if (!input.schedule) return `cron trigger ${input.name} needs a schedule, e.g. "0 3 * * *"`;
  const problem = checkCron(input.schedule) ?? (input.timezone ? checkTimezone(input.timezone) : undefined);
  return problem ? `trigger ${input.name}: ${problem}` : undefined;
}

/** What a function's http_enabled setting (POST/PUT) does to its http triggers. */
export interface HttpTriggerChanges {
  /** Triggers whose enabled flag changes to the setting. */
  readonly set: readonly string[];
  /** A disabled `<fn>-http` to make, so that "disabled" is visible as a trigger (the function had none). */
  readonly create?: string;
}

/**
 * http_enabled is not stored apart from the triggers (the one rule above decides): left out, nothing
 * changes; false disables every http trigger of the function, or makes a disabled `<fn>-http` when it
 * has none; true enables every one.
 */
export function httpTriggerChanges(
  fn: string,
  httpTriggers: readonly { readonly name: string; readonly enabled: boolean }[],
  httpEnabled: boolean | undefined,
): HttpTriggerChanges {
  if (httpEnabled === undefined) return { set: [] };
  const set = httpTriggers.filter((t) => t.enabled !== httpEnabled).map((t) => t.name);
  return !httpEnabled && httpTriggers.length === 0 ? { set, create: httpTriggerName(fn) } : { set };
}
