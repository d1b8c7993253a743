// The `queues:` entries of function.yaml (issue 34): one RabbitMQ queue consumed per entry, each
// message one call of the function. The rules a user sees live here; the defaults in defaults.ts.
import { z } from 'zod';
import type { QueueSettings, QueueTriggerSpec } from './types.ts';
import { QUEUE_DEFAULTS } from './defaults.ts';
import { checkedString, dnsLabel, secretName } from './patterns.ts';

/** AMQP 0-9-1 queue names are short strings of at most 255 bytes; sless's delay queues add `.retry.<ms>ms`. */
const QUEUE_NAME_MAX_BYTES = 235;

/**
 * Why `raw` cannot be a queue trigger's broker URL, or undefined. Credentials are refused: a
 * function.yaml sits in git, readable by everyone who reads the code; they come from `secret:`.
 * The message never repeats the password.
 */
export function checkQueueUrl(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `"${raw}" is not a URL; write amqp://host:5672/vhost (vhost "/" is %2f)`;
  }
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') {
    return `the URL's scheme is "${url.protocol.replace(/:$/, '')}"; a queue trigger takes amqp:// or amqps://`;
  }
  if (url.username !== '' || url.password !== '') {
    return 'the URL carries credentials; remove them and name a secret (secret: <name>) holding username and password';
  }
  if (url.hostname === '') return 'the URL names no host';
  if (url.search !== '' || url.hash !== '') {
    return 'the URL has a query or fragment; sless sets the connection options itself, write amqp://host:port/vhost';
  }
  return undefined;
}

/** Why `name` cannot name a queue, or undefined. */
export function checkQueueName(name: string): string | undefined {
  if (name === '') return 'must not be empty';
  if (Buffer.byteLength(name, 'utf8') > QUEUE_NAME_MAX_BYTES) return `is longer than ${QUEUE_NAME_MAX_BYTES} bytes (AMQP allows 255, and sless names its delay queues <queue>.retry.<ms>ms)`;
  if (name.startsWith('amq.')) return `"${name}" starts with "amq.", which RabbitMQ reserves for itself`;
  return undefined;
}

export const queueTriggerSchema = z.strictObject({
  name: dnsLabel('queue trigger name'),
  url: checkedString(checkQueueUrl),
  secret: secretName().optional(),
  queue: checkedString(checkQueueName),
  declare: z.boolean().default(QUEUE_DEFAULTS.declare),
  prefetch: z
    .int({ error: `must be a whole number from 1 to ${QUEUE_DEFAULTS.maxPrefetch}` })
    .min(1, 'must be at least 1: with 0 the consumer would take every message in the queue at once')
    .max(QUEUE_DEFAULTS.maxPrefetch, `must be at most ${QUEUE_DEFAULTS.maxPrefetch}`)
    .default(QUEUE_DEFAULTS.prefetch),
  retries: z
    .int({ error: `must be a whole number from 0 to ${QUEUE_DEFAULTS.maxRetries}` })
    .min(0, 'must be >= 0 (0: a failed message goes to the dead-letter queue at once)')
    .max(QUEUE_DEFAULTS.maxRetries, `must be at most ${QUEUE_DEFAULTS.maxRetries}`)
    .default(QUEUE_DEFAULTS.retries),
  dead_letter: checkedString(checkQueueName).optional(),
});

export type RawQueueTrigger = z.output<typeof queueTriggerSchema>;

export function toQueueTrigger(q: RawQueueTrigger): QueueTriggerSpec {
  return {
    name: q.name,
    url: q.url,
    ...(q.secret === undefined ? {} : { secret: q.secret }),
    queue: q.queue,
    declare: q.declare,
    prefetch: q.prefetch,
    retries: q.retries,
    deadLetter: q.dead_letter ?? `${q.queue}${QUEUE_DEFAULTS.deadLetterSuffix}`,
  };
}

/** Rules across a queue entry's fields (cross-check.ts runs them on the raw YAML). */
export function queueEntryProblems(item: Record<string, unknown>): Array<{ key: string; message: string }> {
  const queue = item['queue'];
  const dead = item['dead_letter'] ?? (typeof queue === 'string' ? `${queue}${QUEUE_DEFAULTS.deadLetterSuffix}` : undefined);
  if (typeof queue === 'string' && dead === queue) {
    return [{ key: 'dead_letter', message: `is the consumed queue "${queue}" itself; a failed message would come straight back` }];
  }
  return [];
}

/** A queue trigger's settings as /v1 takes them (snake-case mapping done by the caller): what is left out gets the defaults. */
export interface QueueSettingsLike {
  readonly url: string;
  readonly queue: string;
  readonly secret?: string | undefined;
  readonly declare?: boolean | undefined;
  readonly prefetch?: number | undefined;
  readonly retries?: number | undefined;
  readonly deadLetter?: string | undefined;
}

/** The settings with every default filled in (the same defaults as function.yaml's `queues:`). */
export function queueSettingsOf(q: QueueSettingsLike): QueueSettings {
  return {
    url: q.url,
    ...(q.secret === undefined ? {} : { secret: q.secret }),
    queue: q.queue,
    declare: q.declare ?? QUEUE_DEFAULTS.declare,
    prefetch: q.prefetch ?? QUEUE_DEFAULTS.prefetch,
    retries: q.retries ?? QUEUE_DEFAULTS.retries,
    deadLetter: q.deadLetter ?? `${q.queue}${QUEUE_DEFAULTS.deadLetterSuffix}`,
  };
}

/** Why queue settings from outside function.yaml (/v1, a Trigger) cannot be taken, or undefined; the same rules as `queues:`. */
export function queueSettingsProblem(q: QueueSettingsLike): string | undefined {
  const url = checkQueueUrl(q.url);
  if (url) return `queue.url: ${url}`;
  const name = checkQueueName(q.queue);
  if (name) return `queue.queue: ${name}`;
  if (q.deadLetter !== undefined) {
    const dead = checkQueueName(q.deadLetter);
    if (dead) return `queue.dead_letter: ${dead}`;
  }
  const settings = queueSettingsOf(q);
  if (settings.deadLetter === settings.queue) return `queue.dead_letter: is the consumed queue "${settings.queue}" itself; a failed message would come straight back`;
  if (!Number.isInteger(settings.prefetch) || settings.prefetch < 1 || settings.prefetch > QUEUE_DEFAULTS.maxPrefetch) {
    return `queue.prefetch: must be a whole number from 1 to ${QUEUE_DEFAULTS.maxPrefetch} (0 would hand the consumer every message at once)`;
  }
  if (!Number.isInteger(settings.retries) || settings.retries < 0 || settings.retries > QUEUE_DEFAULTS.maxRetries) {
    return `queue.retries: must be a whole number from 0 to ${QUEUE_DEFAULTS.maxRetries}`;
  }
  return undefined;
}
