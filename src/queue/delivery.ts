// What happens to one queue message, as pure decisions: the CloudEvents headers of its call, how many
// calls it has had, and after a call what the consumer does with it (ack, retry later, dead-letter).
// The consumer (queue-consumer.ts) only carries these out.
import { createHash } from 'node:crypto';
import type { QueueTriggerSpec } from '../manifest/types.ts';

/** Header carrying the number of calls a message has had (on retried and dead-lettered copies). */
export const ATTEMPTS_HEADER = 'x-sless-attempts';
/** Header carrying the last failure (on retried and dead-lettered copies). */
export const ERROR_HEADER = 'x-sless-error';
export const CE_TYPE = 'ru.kube5s.sless.queue.message';

/** Growing delays between calls of a failing message: base, 2x base, 4x base ... at most max. */
export interface RetryDelays {
  readonly baseMs: number;
  readonly maxMs: number;
}
export const DEFAULT_RETRY_DELAYS: RetryDelays = { baseMs: 1000, maxMs: 300_000 };

/** What the consumer needs of an AMQP message (amqplib's ConsumeMessage, narrowed). */
export interface IncomingMessage {
  readonly body: Buffer;
  readonly messageId?: string;
  /** AMQP timestamp property: seconds since the epoch. */
  readonly timestamp?: number;
  readonly contentType?: string;
  readonly headers: Readonly<Record<string, unknown>>;
}

export type CallOutcome = { readonly ok: true; readonly status: number } | { readonly ok: false; readonly status: number; readonly error: string };

export type Decision =
  | { readonly kind: 'ack' }
  | { readonly kind: 'retry'; readonly attempts: number; readonly delayMs: number; readonly retryQueue: string; readonly error: string }
  | { readonly kind: 'dead-letter'; readonly attempts: number; readonly error: string };

/** Calls the message has had before this delivery (0 for a fresh message; a header of ours otherwise). */
export function attemptsOf(headers: Readonly<Record<string, unknown>>): number {
  const raw = headers[ATTEMPTS_HEADER];
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw) : NaN;
  return Number.isInteger(n) && n > 0 ? n : 0;
}

/** The delay after the `attempts`-th failed call (1-based). */
export function retryDelayMs(attempts: number, delays: RetryDelays): number {
  return Math.min(delays.maxMs, delays.baseMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * The delay queue for one delay: messages wait there (queue-wide TTL, so they expire in order) and
 * are dead-lettered back to the consumed queue through the default exchange.
 */
export function retryQueueName(queue: string, delayMs: number): string {
  return `${queue}.retry.${delayMs}ms`;
}

/** Every delay queue a trigger may use: one per distinct delay up to `retries`. */
export function retryQueues(spec: Pick<QueueTriggerSpec, 'queue' | 'retries'>, delays: RetryDelays): Array<{ name: string; delayMs: number }> {
  const seen = new Map<number, string>();
  for (let attempt = 1; attempt <= spec.retries; attempt++) {
    const delayMs = retryDelayMs(attempt, delays);
    seen.set(delayMs, retryQueueName(spec.queue, delayMs));
  }
  return [...seen].map(([delayMs, name]) => ({ name, delayMs }));
}

/** After a call: ack a success; retry a failure while calls remain; else dead-letter. */
export function decide(outcome: CallOutcome, previousAttempts: number, spec: Pick<QueueTriggerSpec, 'queue' | 'retries'>, delays: RetryDelays): Decision {
  if (outcome.ok) return { kind: 'ack' };
  const attempts = previousAttempts + 1;
  if (attempts > spec.retries) return { kind: 'dead-letter', attempts, error: outcome.error };
  const delayMs = retryDelayMs(attempts, delays);
  return { kind: 'retry', attempts, delayMs, retryQueue: retryQueueName(spec.queue, delayMs), error: outcome.error };
}

/**
 * The event id handlers dedupe on: the message's message_id, else a digest of the body (the same on
 * every redelivery of the message, unlike anything sless could make up per delivery).
 */
export function eventId(msg: Pick<IncomingMessage, 'messageId' | 'body'>): string {
  if (msg.messageId) return msg.messageId;
  return `sha256:${createHash('sha256').update(msg.body).digest('hex')}`;
}

/** The broker and queue as a URI reference, without credentials (the URL has none: manifest rule). */
export function eventSource(spec: Pick<QueueTriggerSpec, 'url' | 'queue'>): string {
  const url = new URL(spec.url);
  const vhost = url.pathname === '' || url.pathname === '/' ? '/%2F' : url.pathname;
  return `${url.protocol}//${url.host}${vhost}/${encodeURIComponent(spec.queue)}`;
}

/** CloudEvents 1.0 binary-mode headers of the call, plus the call's number (1-based); `source` is eventSource(spec), made once per consumer. */
export function callHeaders(msg: IncomingMessage, source: string, now: Date): Record<string, string> {
  const time = msg.timestamp !== undefined && Number.isFinite(msg.timestamp) ? new Date(msg.timestamp * 1000) : now;
  return {
    'content-type': msg.contentType ?? 'application/octet-stream',
    'ce-specversion': '1.0',
    'ce-id': eventId(msg),
    'ce-source': source,
    'ce-type': CE_TYPE,
    'ce-time': (Number.isNaN(time.getTime()) ? now : time).toISOString(),
    'x-sless-attempt': String(attemptsOf(msg.headers) + 1),
  };
}

/** Header values a broker accepts and a reader can use: one line, bounded. */
export function headerText(text: string, max = 1000): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
