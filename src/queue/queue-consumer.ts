// One queue trigger's consumer: the thin amqplib adapter around delivery.ts's decisions.
//
// - At least once: a message is acked only after the function answered 2xx, or after its retry copy
//   (or dead-letter copy) was confirmed by the broker. A crash or a lost connection in between leaves
//   the message unacked, and the broker delivers it again.
// - Retries live in the broker, not in this process: a failed message is republished to a delay queue
//   (`<queue>.retry.<ms>ms`, queue-wide TTL, dead-lettered back to `<queue>`) with its call count in
//   `x-sless-attempts`, so a consumer restart neither forgets the count nor holds a prefetch slot
//   while waiting (an in-process delay would do both).
// - The connection is re-made with growing delays (0.5 s .. 30 s) whenever it drops, until stop().
import type { ChannelModel, ConfirmChannel, ConsumeMessage, Options } from 'amqplib';
import { connect } from 'amqplib';
import type { QueueTriggerSpec } from '../manifest/types.ts';
import {
  ATTEMPTS_HEADER,
  attemptsOf,
  callHeaders,
  decide,
  DEFAULT_RETRY_DELAYS,
  ERROR_HEADER,
  eventSource,
  retryQueues,
  type Decision,
  type RetryDelays,
} from './delivery.ts';
import type { Invoke, InvokeResult } from './invoke.ts';
import { describeBrokerError, PreparedQueueError } from './broker-errors.ts';

export type QueueOutcome = 'acked' | 'retried' | 'dead_lettered';

export interface QueueCredentials {
  readonly username: string;
  readonly password: string;
}

export interface QueueConsumerOptions {
  readonly namespace: string;
  readonly function: string;
  readonly spec: QueueTriggerSpec;
  readonly credentials?: QueueCredentials;
  readonly invoke: Invoke;
  readonly retryDelays?: RetryDelays;
  /** How often the queue's depth (lag) and the dead-letter queue's are read; default 5 s. */
  readonly depthIntervalMs?: number;
  readonly log: { info(msg: string): void; warn(msg: string): void };
  /** After each call: its outcome for the message, and the call itself (for the invocation log). */
  readonly onCall?: (call: { outcome: QueueOutcome; result: InvokeResult; startedAt: Date; durationMs: number; requestBytes: number }) => void;
  /** After each depth reading. */
  readonly onDepth?: (depth: { ready: number; deadLettered: number }) => void;
}

export type ConsumerState = 'connecting' | 'consuming' | 'waiting' | 'stopped';

export interface ConsumerStatus {
  readonly state: ConsumerState;
  /** Why the consumer is not consuming (waiting to reconnect), without credentials. */
  readonly message?: string;
  readonly inFlight: number;
  /** Ready messages in the queue at the last reading. */
  readonly lag?: number;
  readonly deadLettered?: number;
  /** Deliveries the broker marked as redelivered (after a lost connection or a restart). */
  readonly redeliveries: number;
  readonly counts: Readonly<Record<QueueOutcome, number>>;
}

const BACKOFF_MIN_MS = 500;
const BACKOFF_MAX_MS = 30_000;

export class QueueConsumer {
  readonly #o: QueueConsumerOptions;
  readonly #delays: RetryDelays;
  /** ce-source of every call (the same for each message of the trigger). */
  readonly #source: string;
  #model: ChannelModel | undefined;
  #channel: ConfirmChannel | undefined;
  #consumerTag: string | undefined;
  #state: ConsumerState = 'connecting';
  #message: string | undefined;
  #lag: number | undefined;
  #deadLettered: number | undefined;
  #redeliveries = 0;
  readonly #counts: Record<QueueOutcome, number> = { acked: 0, retried: 0, dead_lettered: 0 };
  readonly #inFlight = new Set<Promise<void>>();
  #stopping = false;
  #timer: NodeJS.Timeout | undefined;
  #depthTimer: NodeJS.Timeout | undefined;
  #backoffMs = BACKOFF_MIN_MS;
  #loop: Promise<void> | undefined;

  constructor(opts: QueueConsumerOptions) {
    this.#o = opts;
    this.#delays = opts.retryDelays ?? DEFAULT_RETRY_DELAYS;
    this.#source = eventSource(opts.spec);
  }

  /** Starts connecting in the background; never throws (status() says what goes wrong). */
  start(): void {
    this.#loop ??= this.#connect();
  }

  status(): ConsumerStatus {
    return {
      state: this.#state,
      ...(this.#message === undefined ? {} : { message: this.#message }),
      inFlight: this.#inFlight.size,
      ...(this.#lag === undefined ? {} : { lag: this.#lag }),
      ...(this.#deadLettered === undefined ? {} : { deadLettered: this.#deadLettered }),
      redeliveries: this.#redeliveries,
      counts: { ...this.#counts },
    };
  }

  /** Stops taking messages, lets the calls in flight finish (and settle their messages), then disconnects. */
  async stop(): Promise<void> {
    this.#stopping = true;
    clearTimeout(this.#timer);
    clearInterval(this.#depthTimer);
    const channel = this.#channel;
    if (channel && this.#consumerTag) await channel.cancel(this.#consumerTag).catch(() => undefined);
    await Promise.allSettled([...this.#inFlight]);
    await this.#model?.close().catch(() => undefined);
    await this.#loop;
    this.#state = 'stopped';
  }

  get #where(): string {
    return `${this.#o.namespace}/${this.#o.function} queue trigger ${this.#o.spec.name} (${this.#o.spec.queue} on ${this.#o.spec.url})`;
  }

  async #connect(): Promise<void> {
    if (this.#stopping) return;
    this.#state = 'connecting';
    let model: ChannelModel | undefined;
    try {
      model = await connect(connectOptions(this.#o.spec.url, this.#o.credentials), { timeout: 10_000 });
      this.#model = model;
      // Without a listener an 'error' event would throw; 'close' follows it and reconnects.
      model.on('error', () => undefined);
      model.on('close', () => this.#lost(model, 'the connection closed'));
      await this.#prepare(model);
      const channel = await model.createConfirmChannel();
      channel.on('error', () => undefined);
      channel.on('close', () => this.#lost(model, 'the channel closed'));
      await channel.prefetch(this.#o.spec.prefetch);
      this.#channel = channel;
      const { consumerTag } = await channel.consume(this.#o.spec.queue, (msg) => {
        if (msg === null) {
          this.#lost(model, 'the broker cancelled the consumer (the queue was deleted?)');
          return;
        }
        this.#track(this.#handle(channel, msg));
      });
      this.#consumerTag = consumerTag;
      this.#state = 'consuming';
      this.#o.log.info(`${this.#where}: consuming${this.#message === undefined ? '' : ' again'}`);
      this.#message = undefined;
      this.#backoffMs = BACKOFF_MIN_MS;
      this.#watchDepth(model);
    } catch (err) {
      this.#lost(model, describeBrokerError(err, this.#o.spec));
    }
  }

  /** Declares (declare: true) or checks (declare: false) the queue and its dead-letter queue; declares the delay queues. */
  async #prepare(model: ChannelModel): Promise<void> {
    const { spec } = this.#o;
    // A failed check closes its channel: one channel per step, so the error names the step.
    const step = async <T>(what: string, fn: (ch: Awaited<ReturnType<ChannelModel['createChannel']>>) => Promise<T>): Promise<T> => {
      const ch = await model.createChannel();
      ch.on('error', () => undefined);
      try {
        return await fn(ch);
      } catch (err) {
        throw new PreparedQueueError(what, err, spec);
      } finally {
        await ch.close().catch(() => undefined);
      }
    };
    if (spec.declare) {
      await step(`declaring queue "${spec.queue}"`, (ch) => ch.assertQueue(spec.queue, { durable: true }));
      await step(`declaring dead-letter queue "${spec.deadLetter}"`, (ch) => ch.assertQueue(spec.deadLetter, { durable: true }));
    } else {
      await step(`queue "${spec.queue}" (declare: false)`, (ch) => ch.checkQueue(spec.queue));
      await step(`dead-letter queue "${spec.deadLetter}" (declare: false)`, (ch) => ch.checkQueue(spec.deadLetter));
    }
    for (const { name, delayMs } of retryQueues(spec, this.#delays)) {
      const args: Options.AssertQueue = { durable: true, arguments: { 'x-message-ttl': delayMs, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': spec.queue } };
      await step(`declaring delay queue "${name}"`, (ch) => ch.assertQueue(name, args));
    }
  }

  #watchDepth(model: ChannelModel): void {
    clearInterval(this.#depthTimer);
    const read = async () => {
      try {
        const ch = await model.createChannel();
        ch.on('error', () => undefined);
        try {
          const q = await ch.checkQueue(this.#o.spec.queue);
          const dl = await ch.checkQueue(this.#o.spec.deadLetter);
          this.#lag = q.messageCount;
          this.#deadLettered = dl.messageCount;
          this.#o.onDepth?.({ ready: q.messageCount, deadLettered: dl.messageCount });
        } finally {
          await ch.close().catch(() => undefined);
        }
      } catch {
        // The connection is going; #lost reconnects and reads again.
      }
    };
    void read();
    this.#depthTimer = setInterval(() => void read(), this.#o.depthIntervalMs ?? 5000);
    this.#depthTimer.unref();
  }

  /** The connection (or its channel) of `model` is gone: reconnect after the next backoff step. */
  #lost(model: ChannelModel | undefined, why: string): void {
    if (model !== undefined && model !== this.#model) return; // an older connection's late event
    if (this.#stopping || this.#state === 'waiting') return;
    this.#state = 'waiting';
    this.#channel = undefined;
    this.#consumerTag = undefined;
    clearInterval(this.#depthTimer);
    const old = this.#model;
    this.#model = undefined;
    void old?.close().catch(() => undefined);
    if (why !== this.#message) this.#o.log.warn(`${this.#where}: ${why}; connecting again in ${this.#backoffMs} ms`);
    this.#message = why;
    this.#timer = setTimeout(() => {
      this.#loop = this.#connect();
    }, this.#backoffMs);
    this.#backoffMs = Math.min(BACKOFF_MAX_MS, this.#backoffMs * 2);
  }

  #track(p: Promise<void>): void {
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  async #handle(channel: ConfirmChannel, msg: ConsumeMessage): Promise<void> {
    const { spec } = this.#o;
    if (msg.fields.redelivered) this.#redeliveries++;
    const headers: Record<string, unknown> = { ...(msg.properties.headers ?? {}) };
    const incoming = {
      body: msg.content,
      ...(typeof msg.properties.messageId === 'string' ? { messageId: msg.properties.messageId } : {}),
      ...(typeof msg.properties.timestamp === 'number' ? { timestamp: msg.properties.timestamp } : {}),
      ...(typeof msg.properties.contentType === 'string' ? { contentType: msg.properties.contentType } : {}),
      headers,
    };
    const startedAt = new Date();
    const t0 = performance.now();
    const result = await this.#o.invoke({ namespace: this.#o.namespace, function: this.#o.function, body: msg.content, headers: callHeaders(incoming, this.#source, startedAt) });
    const durationMs = performance.now() - t0;
    const decision = decide(result.outcome, attemptsOf(headers), spec, this.#delays);
    try {
      await this.#settle(channel, msg, decision, headers);
    } catch (err) {
      // The channel went away before the message was settled: the broker delivers it again.
      this.#o.log.warn(`${this.#where}: message ${incoming.messageId ?? '(no id)'} not settled (${(err as Error).message}); the broker will deliver it again`);
      return;
    }
    const outcome: QueueOutcome = decision.kind === 'ack' ? 'acked' : decision.kind === 'retry' ? 'retried' : 'dead_lettered';
    this.#counts[outcome]++;
    this.#o.onCall?.({ outcome, result, startedAt, durationMs, requestBytes: msg.content.length });
  }

  async #settle(channel: ConfirmChannel, msg: ConsumeMessage, decision: Decision, headers: Record<string, unknown>): Promise<void> {
    if (decision.kind !== 'ack') {
      const target = decision.kind === 'retry' ? decision.retryQueue : this.#o.spec.deadLetter;
      const copy = { ...headers, [ATTEMPTS_HEADER]: decision.attempts, [ERROR_HEADER]: decision.error };
      await publishConfirmed(channel, target, msg, copy);
      if (decision.kind === 'dead-letter') this.#o.log.warn(`${this.#where}: message ${String(msg.properties.messageId ?? '(no id)')} dead-lettered to ${target} after ${decision.attempts} calls: ${decision.error}`);
    }
    channel.ack(msg);
  }
}

/** Publishes a copy of `msg` (its properties, new headers) to `queue` and waits for the broker's confirm. */
function publishConfirmed(channel: ConfirmChannel, queue: string, msg: ConsumeMessage, headers: Record<string, unknown>): Promise<void> {
  const p = msg.properties;
  const options: Options.Publish = { persistent: true, headers };
  // userId is left out: the broker refuses a user_id other than the connection's own.
  if (p.contentType !== undefined) options.contentType = p.contentType as string;
  if (p.contentEncoding !== undefined) options.contentEncoding = p.contentEncoding as string;
  if (p.correlationId !== undefined) options.correlationId = p.correlationId as string;
  if (p.replyTo !== undefined) options.replyTo = p.replyTo as string;
  if (p.messageId !== undefined) options.messageId = p.messageId as string;
  if (p.timestamp !== undefined) options.timestamp = p.timestamp as number;
  if (p.type !== undefined) options.type = p.type as string;
  if (p.appId !== undefined) options.appId = p.appId as string;
  if (p.priority !== undefined) options.priority = p.priority as number;
  return new Promise((resolve, reject) => {
    try {
      channel.publish('', queue, msg.content, options, (err: unknown) => (err ? reject(err instanceof Error ? err : new Error(`the broker refused the copy to ${queue}`)) : resolve()));
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}

/** amqplib's connect options from a credential-less URL plus the trigger's credentials. */
export function connectOptions(raw: string, credentials: QueueCredentials | undefined): Options.Connect {
  const url = new URL(raw);
  const vhost = url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : '/';
  const tls = url.protocol === 'amqps:';
  return {
    protocol: tls ? 'amqps' : 'amqp',
    hostname: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (tls ? 5671 : 5672) : Number(url.port),
    vhost,
    // RabbitMQ's default account; it logs in from localhost only (the broker's rule).
    username: credentials?.username ?? 'guest',
    password: credentials?.password ?? 'guest',
    heartbeat: 15,
  };
}
