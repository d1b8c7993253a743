// Small AMQP helpers the queue tests and the bench share.
import type { ChannelModel } from 'amqplib';

/** Ready messages in `queue` (a passive declare on a channel of its own: a missing queue closes only that channel). */
export async function queueDepth(conn: ChannelModel, queue: string): Promise<number> {
  const ch = await conn.createChannel();
  try {
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await ch.close().catch(() => undefined);
  }
}
