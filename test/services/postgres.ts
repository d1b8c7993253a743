// A real PostgreSQL (Debian's postgresql package) for the store tests: initdb in a temp dir, one
// server on a free 127.0.0.1 port, fsync off. As root, the server runs as the `postgres` user.
// `startPostgres()` is also used directly by tests that stop and restart their own server (outage).
import { execFile } from 'node:child_process';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestService } from '../run.ts';

const run = promisify(execFile);

export interface PostgresServer {
  readonly url: string;
  readonly port: number;
  /** Stops the server (fast shutdown), keeping the data. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops the server and removes its data. */
  destroy(): Promise<void>;
}

async function findBinDir(): Promise<string> {
  for (const v of ['17', '16', '15', '14', '13']) {
    const dir = `/usr/lib/postgresql/${v}/bin`;
    try {
      await run(path.join(dir, 'pg_ctl'), ['--version']);
      return dir;
    } catch {
      // try the next version
    }
  }
  throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql/*/bin; run .ci/install.d/10-postgres.sh (apt-get install postgresql)');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = await findBinDir();
  const asRoot = process.getuid?.() === 0;
  const base = await mkdtemp(path.join(tmpdir(), 'sless-pg-'));
  const data = path.join(base, 'data');
  const log = path.join(base, 'server.log');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(base, Number(stdout.trim()), Number(gid.trim()));
    await chmod(base, 0o700);
  }
  const as = (cmd: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));
  await as(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const port = await freePort();
  const opts = `-p ${port} -k ${base} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const pgCtl = path.join(bin, 'pg_ctl');
  const start = async () => {
    await as(pgCtl, ['-D', data, '-l', log, '-o', opts, '-w', '-t', '60', 'start']);
  };
  const stop = async () => {
    await as(pgCtl, ['-D', data, '-m', 'fast', '-w', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    destroy: async () => {
      await stop().catch(() => undefined);
      await rm(base, { recursive: true, force: true });
    },
  };
}

/** A fresh database on the server, so concurrent test files never see each other's rows. */
export async function freshDatabase(serverUrl: string): Promise<string> {
  const { default: pg } = await import('pg');
  const name = `t_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export const service: TestService = {
  name: 'postgres',
  async start() {
    const server = await startPostgres();
    return { env: { SLESS_TEST_DATABASE_URL: server.url }, stop: () => server.destroy() };
  },
};

