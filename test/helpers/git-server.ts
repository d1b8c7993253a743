// A real git server for tests: node:http in front of Debian's `git http-backend` (CGI), serving
// bare repositories under one root on 127.0.0.1, with optional basic or token auth per repository
// (kept in a file inside the repository, so test processes can set it without talking to the server).
// Also a working-clone helper that writes files, commits and really pushes (incl. --force).
//
//   shared:   the `git` test service (test/services/git.ts) exports SLESS_TEST_GIT_URL/_ROOT;
//             `sharedGitServer()` reads them, `createRepo(server, name)` makes a bare repo.
//   private:  `startGitServer()` for tests that stop the server (the "server down" case).
import { execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile, chmod, symlink, unlink, readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
const AUTH_FILE = 'sless-test-auth.json';

export type RepoAuth = { readonly token: string } | { readonly username: string; readonly password: string };

export interface GitServer {
  /** Base URL, e.g. http://127.0.0.1:41234 ; a repository is `${url}/${name}.git`. */
  readonly url: string;
  /** Folder holding the bare repositories. */
  readonly root: string;
  stop(): Promise<void>;
}

function gitBackendPath(): string {
  return process.env.SLESS_TEST_GIT_HTTP_BACKEND ?? '/usr/lib/git-core/git-http-backend';
}

function authorized(header: string | undefined, auth: RepoAuth): boolean {
  if (!header) return false;
  const [scheme, value = ''] = header.split(' ', 2);
  if ('token' in auth && scheme?.toLowerCase() === 'bearer') return value === auth.token;
  if (scheme?.toLowerCase() !== 'basic') return false;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = decoded.slice(0, colon);
  const pass = decoded.slice(colon + 1);
  // Like Gitea/GitHub/GitLab: a token goes in the password (any user name) or alone as the user name.
  if ('token' in auth) return pass === auth.token || (user === auth.token && (pass === '' || pass === 'x-oauth-basic'));
  return user === auth.username && pass === auth.password;
}

async function repoAuth(root: string, repo: string): Promise<RepoAuth | undefined> {
  try {
    return JSON.parse(await readFile(path.join(root, repo, AUTH_FILE), 'utf8')) as RepoAuth;
  } catch {
    return undefined;
  }
}

function handle(root: string, req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://x');
  const pathInfo = decodeURIComponent(url.pathname);
  const repo = /^\/([^/]+\.git)(\/|$)/.exec(pathInfo)?.[1];
  if (!repo || pathInfo.includes('..')) {
    // Stands in for "a URL that is not a git repository": an ordinary web page.
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>not a git server</body></html>');
    return;
  }
  void repoAuth(root, repo).then((auth) => {
    if (auth && !authorized(req.headers.authorization, auth)) {
      req.resume();
      res.writeHead(401, { 'www-authenticate': 'Basic realm="sless-test"' }).end('authentication required\n');
      return;
    }
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
      GIT_CONFIG_KEY_1: 'uploadpack.allowFilter',
      GIT_CONFIG_VALUE_1: 'true',
      HOME: root,
      PATH_INFO: pathInfo,
      REQUEST_METHOD: req.method ?? 'GET',
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: req.headers['content-type'] ?? '',
      REMOTE_ADDR: req.socket.remoteAddress ?? '127.0.0.1',
      REMOTE_USER: auth ? 'test' : '',
      GATEWAY_INTERFACE: 'CGI/1.1',
    };
    if (req.headers['content-length']) env.CONTENT_LENGTH = req.headers['content-length'];
    if (req.headers['content-encoding']) env.HTTP_CONTENT_ENCODING = req.headers['content-encoding'];
    const protocol = req.headers['git-protocol'];
    if (typeof protocol === 'string') env.GIT_PROTOCOL = protocol;

    const cgi = spawn(gitBackendPath(), [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    req.pipe(cgi.stdin);
    cgi.stdin.on('error', () => undefined);
    let stderr = '';
    cgi.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (headersDone) {
        res.write(chunk);
        return;
      }
      head = Buffer.concat([head, chunk]);
      let end = head.indexOf('\r\n\r\n');
      let sepLen = 4;
      if (end < 0) {
        end = head.indexOf('\n\n');
        sepLen = 2;
      }
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i < 0) continue;
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + sepLen));
    });
    cgi.on('close', (code) => {
      if (!headersDone) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`git http-backend failed (${code}): ${stderr}`);
        return;
      }
      res.end();
    });
    cgi.on('error', (err) => {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    });
  });
}

/** Starts a git server on 127.0.0.1 (or `host`; random port) over `root` (a fresh temp folder by default). */
export async function startGitServer(options: { root?: string; port?: number; host?: string } = {}): Promise<GitServer> {
  const host = options.host ?? '127.0.0.1';
  const root = options.root ?? (await mkdtemp(path.join(os.tmpdir(), 'sless-git-')));
  await mkdir(root, { recursive: true });
  const server = http.createServer((req, res) => handle(root, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    root,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The shared server started by `npm test` (service `git`); fails clearly when it is not running. */
export function sharedGitServer(): Pick<GitServer, 'url' | 'root'> {
  const url = process.env.SLESS_TEST_GIT_URL;
  const root = process.env.SLESS_TEST_GIT_ROOT;
  if (!url || !root) {
    throw new Error('SLESS_TEST_GIT_URL/SLESS_TEST_GIT_ROOT are not set: run this test through `npm test` (it starts the git service)');
  }
  return { url, root };
}

export interface TestRepo {
  readonly name: string;
  /** Clone URL without credentials. */
  readonly url: string;
  /** Clone URL with the repo's credentials (for the git CLI), or `url` when it has none. */
  readonly pushUrl: string;
  readonly gitdir: string;
}

let seq = 0;
/** Creates an empty bare repository (default branch main); names get a unique suffix. */
export async function createRepo(server: Pick<GitServer, 'url' | 'root'>, name: string, options: { auth?: RepoAuth } = {}): Promise<TestRepo> {
  const unique = `${name}-${process.pid}-${Date.now().toString(36)}-${seq++}.git`;
  const gitdir = path.join(server.root, unique);
  await git(['init', '--bare', '--quiet', '--initial-branch=main', gitdir]);
  if (options.auth) await writeFile(path.join(gitdir, AUTH_FILE), JSON.stringify(options.auth));
  const url = `${server.url}/${unique}`;
  let pushUrl = url;
  if (options.auth) {
    const u = new URL(url);
    if ('token' in options.auth) {
      u.username = 'test';
      u.password = options.auth.token;
    } else {
      u.username = options.auth.username;
      u.password = options.auth.password;
    }
    pushUrl = u.toString();
  }
  return { name: unique, url, pushUrl, gitdir };
}

/** Deletes a branch on the server side, as a repository admin would. */
export async function deleteBranch(repo: TestRepo, branch: string): Promise<void> {
  await git(['--git-dir', repo.gitdir, 'update-ref', '-d', `refs/heads/${branch}`]);
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'sless test',
  GIT_AUTHOR_EMAIL: 'test@sless.invalid',
  GIT_COMMITTER_NAME: 'sless test',
  GIT_COMMITTER_EMAIL: 'test@sless.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
};

export async function git(args: readonly string[], cwd?: string): Promise<string> {
  const { stdout } = await execFileP('git', [...args], {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.trim();
}

/** File contents: a string, or `{content, mode}` to set 'exec' or 'symlink' (content = target); null deletes. */
export type FileSpec = string | { readonly content: string; readonly mode?: 'exec' | 'symlink' } | null;

/** Writes files into a folder (see FileSpec); also handy for working-tree fixtures. */
export async function writeFiles(dir: string, files: Record<string, FileSpec>): Promise<void> {
  for (const [rel, spec] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    await rm(abs, { recursive: true, force: true });
    if (spec === null) continue;
    await mkdir(path.dirname(abs), { recursive: true });
    if (typeof spec === 'string') await writeFile(abs, spec);
    else if (spec.mode === 'symlink') await symlink(spec.content, abs);
    else {
      await writeFile(abs, spec.content);
      if (spec.mode === 'exec') await chmod(abs, 0o755);
    }
  }
}

/** A working clone that writes files, commits and pushes with the git CLI. */
export class WorkClone {
  private constructor(
    readonly dir: string,
    readonly repo: TestRepo,
  ) {}

  static async create(repo: TestRepo, branch = 'main'): Promise<WorkClone> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'sless-clone-'));
    await git(['init', '--quiet', `--initial-branch=${branch}`, dir]);
    await git(['remote', 'add', 'origin', repo.pushUrl], dir);
    return new WorkClone(dir, repo);
  }

  async write(files: Record<string, FileSpec>): Promise<this> {
    await writeFiles(this.dir, files);
    return this;
  }

  async chmod(rel: string, executable: boolean): Promise<this> {
    await chmod(path.join(this.dir, rel), executable ? 0o755 : 0o644);
    return this;
  }

  async remove(rel: string): Promise<this> {
    await rm(path.join(this.dir, rel), { recursive: true, force: true }).catch(() => unlink(path.join(this.dir, rel)));
    return this;
  }

  async rename(from: string, to: string): Promise<this> {
    await mkdir(path.dirname(path.join(this.dir, to)), { recursive: true });
    await git(['mv', from, to], this.dir);
    return this;
  }

  /** Stages everything and commits; returns the new commit SHA. */
  async commit(message = 'change'): Promise<string> {
    await git(['add', '-A'], this.dir);
    await git(['commit', '--quiet', '--allow-empty', '-m', message], this.dir);
    return git(['rev-parse', 'HEAD'], this.dir);
  }

  async push(options: { force?: boolean; branch?: string } = {}): Promise<void> {
    const branch = options.branch ?? 'main';
    await git(['push', '--quiet', ...(options.force ? ['--force'] : []), 'origin', `HEAD:refs/heads/${branch}`], this.dir);
  }

  /** commit + push in one step; returns the commit SHA. */
  async commitAndPush(message = 'change', options: { force?: boolean; branch?: string } = {}): Promise<string> {
    const sha = await this.commit(message);
    await this.push(options);
    return sha;
  }

  /** Runs any git command in the clone (e.g. `reset --hard HEAD~1` before a force-push). */
  run(...args: string[]): Promise<string> {
    return git(args, this.dir);
  }

  async dispose(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
