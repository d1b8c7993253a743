// How a broker failure reads in a Trigger's status and in logs.
//
// The broker's verdict is read from amqplib's reply code and reply text, never from the whole message:
// a message may hold the broker's address, and a port such as 40471 is not a 404.
import type { QueueTriggerSpec } from '../manifest/types.ts';

type Where = Pick<QueueTriggerSpec, 'url' | 'secret'>;

/** A failed step of preparing the queues, already worded: "queue "x" (declare: false): does not exist on …". */
export class PreparedQueueError extends Error {
  constructor(what: string, cause: unknown, spec: Where) {
    super(`${what}: ${describeBrokerError(cause, spec)}`, { cause });
    this.name = 'PreparedQueueError';
  }
}

/** An error as a line for status and logs: amqplib's messages name the broker's reply, never credentials. */
export function describeBrokerError(err: unknown, spec: Where): string {
  if (err instanceof PreparedQueueError) return err.message;
  const e = err as { code?: unknown; message?: string };
  const text = e.message ?? String(err);
  // A refused handshake carries no code; its text is the broker's ("ACCESS_REFUSED - Login was refused …").
  if (/ACCESS_REFUSED - Login was refused|Handshake terminated by server: 403\b/.test(text)) {
    return `the broker at ${spec.url} refused the login${spec.secret ? ` of secret ${spec.secret}` : ' (no secret: the guest account logs in from localhost only)'}`;
  }
  if (e.code === 404 || /\bNOT_FOUND - /.test(text)) return `does not exist on ${spec.url} (create it, or set declare: true)`;
  if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'ETIMEDOUT') return `cannot reach ${spec.url} (${String(e.code)})`;
  return text.replace(/\s+/g, ' ');
}
