// Small AMQP helpers the queue tests and the bench share.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { connect, type ChannelModel } from 'amqplib';

/** Ready messages in `queue` (a passive declare on a channel of its own: a missing queue closes only that channel). */
export async function queueDepth(conn: ChannelModel, queue: string): Promise<number> {
  const ch = await conn.createChannel();
  try {
    return (await ch.checkQueue(queue)).messageCount;
  } finally {
    await ch.close().catch(() => undefined);
  }
}

/**
 * The test run's RabbitMQ (SLESS_TEST_AMQP_URL) as the `sless dev` queue tests use it: a connection,
 * the broker's URL without credentials (what a function.yaml's `queues:` names), and a --secrets-dir
 * folder whose secret `rabbit` holds the credentials (`rabbit/username`, `rabbit/password`).
 */
export interface DevAmqp {
  readonly conn: ChannelModel;
  readonly bareUrl: string;
  readonly secretsDir: string;
  /** Closes the connection and removes the secrets folder. */
  close(): Promise<void>;
}

export async function devAmqp(): Promise<DevAmqp> {
  const amqpUrl = process.env.SLESS_TEST_AMQP_URL;
  assert.ok(amqpUrl, 'SLESS_TEST_AMQP_URL is not set: run through `npm test` with SLESS_TEST_SERVICES naming rabbitmq (test/services/rabbitmq.ts)');
  const conn = await connect(amqpUrl);
  const secretsDir = await mkdtemp(path.join(os.tmpdir(), 'sless-dev-secrets-'));
  const u = new URL(amqpUrl);
  await mkdir(path.join(secretsDir, 'rabbit'));
  // A trailing newline (as `echo` writes it) is not part of the value.
  await writeFile(path.join(secretsDir, 'rabbit/username'), `${decodeURIComponent(u.username)}\n`);
  await writeFile(path.join(secretsDir, 'rabbit/password'), decodeURIComponent(u.password));
  const bare = new URL(amqpUrl);
  bare.username = '';
  bare.password = '';
  return {
    conn,
    bareUrl: bare.toString(),
    secretsDir,
    async close() {
      await conn.close().catch(() => undefined);
      await rm(secretsDir, { recursive: true, force: true });
    },
  };
}
