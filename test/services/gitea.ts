// Test service `gitea`: a real Gitea (built from source by .ci/install.d/40-gitea.sh) on 127.0.0.1
// for the whole test run: sqlite, installed and locked, webhooks allowed to loopback, one admin
// user with an access token made through Gitea's own CLI. Tests create their own repositories,
// webhooks and tokens through its API (test/helpers/gitea-api.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestService } from '../run.ts';

const run = promisify(execFile);

export const GITEA_VERSION = 'v1.27.3';

export interface GiteaServer {
  readonly url: string;
  readonly adminUser: string;
  readonly adminPassword: string;
  /** An access token of the admin user with every scope. */
  readonly adminToken: string;
  stop(): Promise<void>;
}

function giteaBinary(): string {
  const override = process.env.SLESS_TEST_GITEA_BIN;
  if (override) return override;
  const bin = path.join(homedir(), '.cache', 'sless-test', 'bin', `gitea-${GITEA_VERSION}`);
  if (!existsSync(bin)) {
    throw new Error(`no Gitea binary at ${bin}; run .ci/install.d/40-gitea.sh (builds ${GITEA_VERSION} from the Go module proxy) or set SLESS_TEST_GITEA_BIN`);
  }
  return bin;
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

function appIni(dir: string, port: number): string {
  const user = process.getuid?.() === 0 ? 'root' : (process.env.USER ?? 'root');
  return `APP_NAME = sless test
RUN_USER = ${user}
RUN_MODE = prod
WORK_PATH = ${dir}
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = ${port}
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:${port}/
APP_DATA_PATH = ${dir}/data
DISABLE_SSH = true
START_SSH_SERVER = false
OFFLINE_MODE = true
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = ${dir}/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = ${dir}/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = ${randomBytes(24).toString('hex')}
INTERNAL_TOKEN = ${randomBytes(48).toString('base64url')}
PASSWORD_COMPLEXITY = off
MIN_PASSWORD_LENGTH = 8
; webhooks to sless on loopback
ALLOWED_HOST_LIST = loopback

[webhook]
DELIVER_TIMEOUT = 10

[service]
DISABLE_REGISTRATION = true

[oauth2]
ENABLED = false

[mailer]
ENABLED = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[log]
MODE = file
LEVEL = Warn
ROOT_PATH = ${dir}/log
`;
}

async function waitForApi(url: string, child: ChildProcess, logFile: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const res = await fetch(`${url}/api/v1/version`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  const log = await readFile(logFile, 'utf8').catch(() => '');
  throw new Error(`Gitea did not answer ${url}/api/v1/version (${child.exitCode !== null ? `exited with ${child.exitCode}` : last}):\n${log.slice(-3000)}`);
}

/** Starts a fresh Gitea in a temp dir; `stop()` ends it and removes everything. */
export async function startGitea(): Promise<GiteaServer> {
  const bin = giteaBinary();
  const dir = await mkdtemp(path.join(tmpdir(), 'sless-gitea-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const config = path.join(dir, 'app.ini');
  await mkdir(path.join(dir, 'log'), { recursive: true });
  await writeFile(config, appIni(dir, port));
  const env = { ...process.env, GITEA_WORK_DIR: dir, HOME: dir, GITEA_CUSTOM: path.join(dir, 'custom') };
  const cli = (args: string[]) => run(bin, [...args, '--config', config], { env, cwd: dir, maxBuffer: 1 << 20 });
  let child: ChildProcess | undefined;
  try {
    await cli(['migrate']);
    const adminUser = 'sless-admin';
    const adminPassword = randomBytes(12).toString('base64url');
    await cli(['admin', 'user', 'create', '--username', adminUser, '--password', adminPassword, '--email', 'admin@sless.test', '--admin', '--must-change-password=false']);
    const stderrFile = path.join(dir, 'log', 'stderr.log');
    child = spawn(bin, ['web', '--config', config], { env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    const errChunks: Buffer[] = [];
    child.stderr?.on('data', (c: Buffer) => errChunks.push(c));
    child.once('exit', () => void writeFile(stderrFile, Buffer.concat(errChunks)).catch(() => undefined));
    await waitForApi(url, child, path.join(dir, 'log', 'gitea.log'), 60_000).catch(async (err: Error) => {
      throw new Error(`${err.message}\n${Buffer.concat(errChunks).toString('utf8').slice(-2000)}`);
    });
    const { stdout } = await cli(['admin', 'user', 'generate-access-token', '--username', adminUser, '--token-name', 'sless-tests', '--scopes', 'all', '--raw']);
    const adminToken = stdout.trim().split('\n').at(-1)?.trim() ?? '';
    if (!/^[0-9a-f]{40}$/.test(adminToken)) throw new Error(`gitea generate-access-token printed no token: ${stdout.slice(0, 200)}`);
    const proc = child;
    return {
      url,
      adminUser,
      adminPassword,
      adminToken,
      async stop() {
        if (proc.exitCode === null) {
          const exited = new Promise((r) => proc.once('exit', r));
          proc.kill('SIGTERM');
          const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        }
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    child?.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}

export const service: TestService = {
  name: 'gitea',
  async start() {
    const gitea = await startGitea();
    return {
      env: {
        SLESS_TEST_GITEA_URL: gitea.url,
        SLESS_TEST_GITEA_USER: gitea.adminUser,
        SLESS_TEST_GITEA_PASSWORD: gitea.adminPassword,
        SLESS_TEST_GITEA_TOKEN: gitea.adminToken,
      },
      stop: () => gitea.stop(),
    };
  },
};
