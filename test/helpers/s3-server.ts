// A real S3-compatible server for tests: SeaweedFS `weed mini` (master, volume, filer and S3 gateway
// in one process) on free 127.0.0.1 ports, with one configured identity so SigV4 signatures are
// really checked. `stop()` + `start()` play an outage and a recovery on the same ports and data.
// The binary comes from .ci/install.d/30-seaweedfs.sh (or SLESS_TEST_WEED_BIN).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, DeleteObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';

export interface S3Server {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly accessKey: string;
  readonly secretKey: string;
  readonly region: string;
  /** A bucket created at the first start. */
  readonly bucket: string;
  /** Data directory (and weed.log); removed by dispose(). */
  readonly dir: string;
  /** True between a successful start() and stop(). */
  readonly running: boolean;
  /** Stops the server (an outage); data and ports are kept for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same endpoint and data, and waits until objects can be written. */
  start(): Promise<void>;
  /** stop() and remove the data directory. */
  dispose(): Promise<void>;
}

export interface S3ServerOptions {
  /** How long start() waits for a writable server; default 90 s (the machine may be busy). */
  readonly timeoutMs?: number;
  readonly bucket?: string;
  /** The address to listen on; default 127.0.0.1. */
  readonly host?: string;
}

const PORT_FLAGS = [
  'master.port', 'master.port.grpc', 'volume.port', 'volume.port.grpc',
  'filer.port', 'filer.port.grpc', 's3.port', 's3.port.grpc', 'admin.port', 'admin.port.grpc',
] as const;

export function weedBinary(): string {
  const bin = process.env.SLESS_TEST_WEED_BIN ?? path.join(os.homedir(), '.cache', 'sless-test', 'bin', 'weed');
  if (!existsSync(bin)) {
    throw new Error(`SeaweedFS binary not found at ${bin}: run \`bash .ci/install.d/30-seaweedfs.sh\` (or set SLESS_TEST_WEED_BIN)`);
  }
  return bin;
}

export async function startS3Server(options: S3ServerOptions = {}): Promise<S3Server> {
  const bin = weedBinary();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-s3-'));
  const timeoutMs = options.timeoutMs ?? 90_000;
  const accessKey = `SLESSTEST${randomBytes(6).toString('hex').toUpperCase()}`;
  const secretKey = randomBytes(24).toString('base64url');
  const region = 'us-east-1';
  const bucket = options.bucket ?? 'sless-test';
  const ports = await freePorts(PORT_FLAGS.length);
  const port = (flag: (typeof PORT_FLAGS)[number]) => ports[PORT_FLAGS.indexOf(flag)]!;
  const host = options.host ?? '127.0.0.1';
  const endpoint = `http://${host}:${port('s3.port')}`;

  const s3Config = path.join(dir, 's3.json');
  await writeFile(
    s3Config,
    JSON.stringify({
      identities: [{ name: 'sless-test', credentials: [{ accessKey, secretKey }], actions: ['Admin', 'Read', 'List', 'Tagging', 'Write'] }],
    }),
    { mode: 0o600 },
  );
  const data = path.join(dir, 'data');
  await mkdir(data);
  const args = [
    `-logdir=${dir}`,
    // SLESS_TEST_WEED_VERBOSE=1: weed's info log on the test's stderr, for debugging startup.
    ...(process.env.SLESS_TEST_WEED_VERBOSE ? ['-alsologtostderr'] : []),
    'mini',
    `-dir=${data}`,
    `-ip=${host}`,
    `-ip.bind=${host}`,
    ...PORT_FLAGS.map((f) => `-${f}=${port(f)}`),
    `-s3.config=${s3Config}`,
    // Small volumes: the tests store megabytes, not the default 64 MB+ per volume file.
    '-master.volumeSizeLimitMB=32',
    '-master.telemetry=false',
    // One master: a restart (the outage tests) need not wait the default 10 s for a raft election.
    '-master.electionTimeout=1s',
    '-webdav=false',
    // The admin server runs even without its UI: give it free ports too, and no legacy ports.
    '-admin.ui=false',
    '-admin.port.legacy=0',
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    `-filer.localSocket=${path.join(dir, 'filer.sock')}`,
    `-s3.localSocket=${path.join(dir, 's3.sock')}`,
  ];

  let child: ChildProcess | undefined;
  let bucketCreated = false;
  const lastResort = () => {
    if (child?.pid) signalGroup(child.pid, 'SIGKILL');
  };
  const logFile = path.join(dir, 'weed.log');

  // weed puts a unix socket per gRPC port in /tmp whatever -dir says; a killed weed leaves them.
  const sockets = (['master', 'volume', 'filer', 's3', 'admin'] as const).map(
    (name) => `/tmp/seaweedfs-${name}-grpc-${port(`${name}.port.grpc`)}.sock`,
  );

  const stop = async (): Promise<void> => {
    const c = child;
    child = undefined;
    process.off('exit', lastResort);
    if (!c?.pid) return;
    const exited = new Promise<void>((resolve) => (c.exitCode !== null || c.signalCode !== null ? resolve() : c.once('exit', () => resolve())));
    signalGroup(c.pid, 'SIGTERM');
    const graceful = await Promise.race([exited.then(() => true), sleep(5_000, false, { ref: false })]);
    // Also ends anything weed started in its group (nothing today).
    signalGroup(c.pid, 'SIGKILL');
    if (!graceful) await exited;
    await Promise.all(sockets.map((f) => rm(f, { force: true })));
  };

  const start = async (): Promise<void> => {
    if (child) return;
    const log = openSync(logFile, 'a');
    try {
      // Own process group, so stop() can end weed and anything it starts; the exit hook below
      // covers a test process that ends without calling stop().
      child = spawn(bin, args, { cwd: dir, detached: true, stdio: ['ignore', log, log] });
    } finally {
      closeSync(log);
    }
    process.once('exit', lastResort);
    const c = child;
    const exited = new Promise<number | null>((resolve) => c.once('exit', (code) => resolve(code)));
    const client = new S3Client({
      endpoint, region, forcePathStyle: true, credentials: { accessKeyId: accessKey, secretAccessKey: secretKey },
      requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED', maxAttempts: 1,
      requestHandler: { connectionTimeout: 1_000, socketTimeout: 5_000 },
    });
    const deadline = Date.now() + timeoutMs;
    let lastError: unknown;
    try {
      for (;;) {
        const code = await Promise.race([exited, sleep(250).then(() => 'running' as const)]);
        if (code !== 'running') {
          child = undefined;
          throw new Error(`weed mini exited with code ${code} while starting; log tail:\n${await tail(logFile)}`);
        }
        try {
          // Ready means writable: the S3 gateway answers before writes work (after a restart, the
          // first writes hang for ~10 s while the master settles).
          if (!bucketCreated) {
            await client.send(new CreateBucketCommand({ Bucket: bucket })).catch((err: unknown) => {
              if ((err as Error).name !== 'BucketAlreadyOwnedByYou' && (err as Error).name !== 'BucketAlreadyExists') throw err;
            });
            bucketCreated = true;
          }
          await client.send(new PutObjectCommand({ Bucket: bucket, Key: '.ready-probe', Body: 'ok' }));
          await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: '.ready-probe' }));
          return;
        } catch (err) {
          lastError = err;
        }
        if (Date.now() > deadline) {
          await stop();
          throw new Error(
            `weed mini did not accept writes at ${endpoint} within ${timeoutMs} ms (last error: ${(lastError as Error)?.name ?? lastError}); log tail:\n${await tail(logFile)}`,
          );
        }
      }
    } finally {
      client.destroy();
    }
  };

  try {
    await start();
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    endpoint, accessKey, secretKey, region, bucket, dir,
    get running() {
      return child !== undefined;
    },
    stop,
    start,
    async dispose() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * `n` distinct ports free right now, picked below the Linux ephemeral range (32768+): a port from
 * that range may be taken as the source port of some outgoing connection before weed binds it,
 * or while it is down between stop() and start().
 */
async function freePorts(n: number): Promise<number[]> {
  const held: Server[] = [];
  try {
    while (held.length < n) {
      const port = 10_000 + Math.floor(Math.random() * 22_000);
      const s = await new Promise<Server | undefined>((resolve) => {
        const srv = createServer();
        srv.once('error', () => resolve(undefined));
        srv.listen(port, '127.0.0.1', () => resolve(srv));
      });
      if (s) held.push(s);
    }
    return held.map((s) => (s.address() as AddressInfo).port);
  } finally {
    await Promise.all(held.map((s) => new Promise((resolve) => s.close(resolve))));
  }
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

async function tail(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.split('\n').slice(-30).join('\n');
}
