// A real RabbitMQ (Debian's rabbitmq-server) for the queue-trigger tests: one private node per test
// run, with its own node name, its own epmd (ERL_EPMD_PORT: never the machine's shared one on 4369,
// so two runs, or a distribution node, never meet), AMQP on a free 127.0.0.1 port, data and logs in a
// temp dir, no plugins. `startRabbitmq()` is also used directly by tests that stop and restart their
// own broker (the broker-restart test): stop() keeps the data, start() boots the same node again on
// the same ports.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { findFreePort as freePort } from '../../src/platform/local/free-port.ts';
import type { TestService } from '../run.ts';

const SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const BOOT_TIMEOUT_MS = 90_000;

export interface RabbitmqServer {
  /** amqp://guest:guest@127.0.0.1:PORT/%2f (guest works from loopback). */
  readonly url: string;
  /** The same address without credentials (what a function.yaml carries). */
  readonly bareUrl: string;
  readonly port: number;
  /** Stops the node (SIGTERM: a clean shutdown), keeping its data: durable queues and persistent messages survive. */
  stop(): Promise<void>;
  /** Boots the node again on the same ports and data; resolves once it accepts AMQP connections. */
  start(): Promise<void>;
  /** Stops the node and its epmd, and removes its data. */
  destroy(): Promise<void>;
}

async function canConnect(url: string): Promise<boolean> {
  const amqp = await import('amqplib');
  try {
    const conn = await amqp.connect(url, { timeout: 2000 });
    await conn.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * A free port in 40400..40499. A broker URL then holds "404" (and, with 40403, "403"): an error reader
 * that greps whole messages for reply codes takes a refused connection for a missing queue, as the
 * consumer once did on a CI machine whose broker listened on 40471.
 */
async function portHolding404(): Promise<number> {
  const ports = Array.from({ length: 100 }, (_, i) => 40400 + i).sort(() => Math.random() - 0.5);
  for (const port of ports) if (await isFree(port)) return port;
  return freePort();
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

export async function startRabbitmq(): Promise<RabbitmqServer> {
  const base = await mkdtemp(path.join(tmpdir(), 'sless-rabbitmq-'));
  const [port, distPort, epmdPort] = [await portHolding404(), await freePort(), await freePort()];
  const nodeName = `sless${process.pid}x${Math.random().toString(36).slice(2, 8)}@localhost`;
  const conf = path.join(base, 'rabbitmq.conf');
  await writeFile(
    conf,
    [
      `listeners.tcp.1 = 127.0.0.1:${port}`,
      // The test machine's disk may be fuller than RabbitMQ's default 50 MB margin allows for publishing.
      'disk_free_limit.absolute = 1MB',
      'log.console = false',
      'log.file.level = warning',
      '',
    ].join('\n'),
  );
  await writeFile(path.join(base, 'enabled_plugins'), '[].\n');
  await writeFile(path.join(base, 'rabbitmq-env.conf'), '');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: base, // the Erlang cookie lives here
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_CONFIG_FILE: conf,
    RABBITMQ_CONF_ENV_FILE: path.join(base, 'rabbitmq-env.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(base, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: path.join(base, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(base, 'log'),
    RABBITMQ_PID_FILE: path.join(base, 'rabbitmq.pid'),
  };
  const url = `amqp://guest:guest@127.0.0.1:${port}/%2f`;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    const proc = spawn(SERVER, [], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    let gone = false;
    exited = new Promise((resolve) => {
      proc.once('exit', () => {
        gone = true;
        resolve();
      });
      proc.once('error', (err) => {
        stderr += String(err);
        gone = true;
        resolve();
      });
    });
    const deadline = Date.now() + BOOT_TIMEOUT_MS;
    for (;;) {
      if (gone) throw new Error(`rabbitmq-server exited while booting (run .ci/install.d/35-rabbitmq.sh?); logs in ${base}/log: ${stderr}`);
      if (await canConnect(url)) return;
      if (Date.now() > deadline) throw new Error(`rabbitmq did not accept AMQP on ${port} within ${BOOT_TIMEOUT_MS} ms; logs in ${base}/log`);
      await sleep(250);
    }
  };

  const stop = async (): Promise<void> => {
    if (!child || child.exitCode !== null) return;
    child.kill('SIGTERM');
    const killed = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
    if (!killed) {
      child.kill('SIGKILL');
      await exited;
    }
    child = undefined;
  };

  await start();
  return {
    url,
    bareUrl: `amqp://127.0.0.1:${port}/%2f`,
    port,
    start,
    stop,
    destroy: async () => {
      await stop().catch(() => undefined);
      // The node started its own epmd on ERL_EPMD_PORT; it outlives the node unless told to stop.
      await new Promise<void>((resolve) => {
        const kill = spawn('epmd', ['-port', String(epmdPort), '-kill'], { stdio: 'ignore', env });
        kill.once('exit', () => resolve());
        kill.once('error', () => resolve());
      });
      await rm(base, { recursive: true, force: true });
    },
  };
}

export const service: TestService = {
  name: 'rabbitmq',
  async start() {
    const server = await startRabbitmq();
    return { env: { SLESS_TEST_AMQP_URL: server.url }, stop: () => server.destroy() };
  },
};
