// Runs the real `sless dev` command as a child process (node bin/sless.js dev ...) for end-to-end
// tests and benchmarks, plus the tools they share: signed Gitea push deliveries, an `eventually`
// poll, and the process tree of a pid (to prove that stopping dev leaves no child behind).
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface DevProcess {
  readonly url: string;
  readonly pid: number;
  readonly dataDir: string;
  readonly webhookSecret: string;
  readonly jwtSecret: string;
  /** Everything dev printed so far (stdout + stderr). */
  log(): string;
  /** Resolves with the first log line matching `re` printed after `fromOffset` (default: any). */
  waitForLog(re: RegExp, opts?: { timeoutMs?: number; fromOffset?: number }): Promise<string>;
  /** Sends a signal and waits for the exit; resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** Stops dev (SIGKILL when still running) and deletes the data dir if the harness made it. */
  dispose(): Promise<void>;
  adminToken(): Promise<string>;
}

export async function startDevProcess(opts: {
  repo: string;
  path?: string;
  dataDir?: string;
  pollInterval?: string;
  extraArgs?: readonly string[];
  /** Extra environment for the dev process (e.g. SLESS_COMMIT_STATUS_TOKEN). */
  env?: Readonly<Record<string, string>>;
}): Promise<DevProcess> {
  const ownDataDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'sless-dev-e2e-')));
  const webhookSecret = randomBytes(12).toString('hex');
  const jwtSecret = randomBytes(24).toString('hex');
  const args = [
    path.join(root, 'bin/sless.js'),
    'dev',
    '--repo',
    opts.repo,
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--poll-interval',
    opts.pollInterval ?? '1h',
    '--webhook-secret',
    webhookSecret,
    ...(opts.path ? ['--path', opts.path] : []),
    ...(opts.extraArgs ?? []),
  ];
  const env: Record<string, string | undefined> = { ...process.env, SLESS_JWT_SECRET: jwtSecret };
  for (const k of Object.keys(env)) if (k.startsWith('SLESS_TEST_')) delete env[k];
  Object.assign(env, opts.env ?? {});
  const child: ChildProcess = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString('utf8');
    for (const w of waiters) w();
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => {
    gone = true;
    for (const w of waiters) w();
  });

  const waitForLog = (re: RegExp, o: { timeoutMs?: number; fromOffset?: number } = {}) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = out
          .slice(o.fromOffset ?? 0)
          .split('\n')
          .find((l) => re.test(l));
        if (line !== undefined) {
          done();
          resolve(line);
        } else if (gone) {
          done();
          reject(new Error(`sless dev exited before printing ${re}; its output:\n${out}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`sless dev did not print ${re} within ${o.timeoutMs ?? 60_000} ms; its output:\n${out}`));
      }, o.timeoutMs ?? 60_000);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });

  const listening = await waitForLog(/sless dev listening on (http:\/\/\S+)/);
  const url = (/listening on (http:\/\/\S+)/.exec(listening) as RegExpExecArray)[1] as string;
  return {
    url,
    pid: child.pid as number,
    dataDir,
    webhookSecret,
    jwtSecret,
    log: () => out,
    waitForLog,
    async stop(signal = 'SIGTERM') {
      if (!gone) child.kill(signal);
      return exited;
    },
    async dispose() {
      if (!gone) child.kill('SIGKILL');
      await exited;
      if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
    },
    adminToken: () =>
      new SignJWT({ sless_admin: true })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('e2e')
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(jwtSecret)),
  };
}

/** POSTs a push delivery exactly as Gitea signs it (hex HMAC-SHA256 of the raw body). */
export async function giteaPush(
  dev: Pick<DevProcess, 'url' | 'webhookSecret'>,
  opts: { after: string; branch?: string; cloneUrl?: string; namespace?: string; repoName?: string; secret?: string },
): Promise<Response> {
  const body = JSON.stringify(
    {
      ref: `refs/heads/${opts.branch ?? 'main'}`,
      before: '0'.repeat(40),
      after: opts.after,
      repository: { full_name: 'e2e/functions', clone_url: opts.cloneUrl ?? 'http://git.invalid/e2e/functions.git' },
      commits: [],
      total_commits: 1,
    },
    null,
    2,
  );
  const signature = createHmac('sha256', opts.secret ?? dev.webhookSecret)
    .update(body)
    .digest('hex');
  return fetch(`${dev.url}/hooks/${opts.namespace ?? 'dev'}/${opts.repoName ?? 'local'}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gitea-event': 'push',
      'x-gitea-delivery': randomBytes(8).toString('hex'),
      'x-gitea-signature': signature,
    },
    body,
  });
}

/** POSTs a pull_request delivery of a same-repository branch against `main`, signed as Gitea signs it. */
export async function giteaPullRequest(
  dev: Pick<DevProcess, 'url' | 'webhookSecret'>,
  opts: { action: string; number: number; branch: string; sha: string; merged?: boolean; namespace?: string },
): Promise<Response> {
  const { number } = opts;
  const body = JSON.stringify({
    action: opts.action,
    number,
    pull_request: { number, merged: opts.merged ?? false, head: { ref: opts.branch, sha: opts.sha, repo: { id: 1 } }, base: { ref: 'main', repo: { id: 1 } } },
    repository: { id: 1, full_name: 'e2e/functions' },
  });
  return fetch(`${dev.url}/hooks/${opts.namespace ?? 'dev'}/local`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gitea-event': 'pull_request',
      'x-gitea-delivery': randomBytes(8).toString('hex'),
      'x-gitea-signature': createHmac('sha256', dev.webhookSecret).update(body).digest('hex'),
    },
    body,
  });
}

export async function eventually<T>(fn: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
}

/** GET /fn/<ns>/<name> → {status, body}; never throws for HTTP errors. */
export async function callFunction(url: string, name: string, init?: RequestInit, namespace = 'dev'): Promise<{ status: number; body: string }> {
  const res = await fetch(`${url}/fn/${namespace}/${name}`, init);
  return { status: res.status, body: await res.text() };
}

/** Every process below `pid` (children, grandchildren...), from /proc. */
export async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces) start after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(name));
      parents.set(ppid, list);
    } catch {
      // The process ended while we looked.
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of parents.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

export function isAlive(pid: number): boolean {
  try {
    // A zombie (exited, not yet reaped) runs nothing: count it as gone.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** A benchmark's teardown: dev stopped (SIGTERM), its working clone, git server and data dir removed. */
export async function disposeBenchRun(dev: DevProcess, clone: { dispose(): Promise<void> }, server: { root: string; stop(): Promise<void> }): Promise<void> {
  await dev.stop('SIGTERM');
  await clone.dispose();
  await server.stop();
  await rm(server.root, { recursive: true, force: true });
  await rm(dev.dataDir, { recursive: true, force: true });
}
