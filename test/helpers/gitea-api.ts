// The few calls of Gitea's REST API the tests need (repositories, tokens, webhooks, branches,
// commit statuses), against the test service's Gitea (test/services/gitea.ts).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);

export interface GiteaEnv {
  readonly url: string;
  readonly user: string;
  readonly password: string;
  readonly token: string;
}

/** The test service's Gitea, or undefined when it is not running (SLESS_TEST_SERVICES without gitea). */
export function giteaFromEnv(): GiteaEnv | undefined {
  const { SLESS_TEST_GITEA_URL: url, SLESS_TEST_GITEA_USER: user, SLESS_TEST_GITEA_PASSWORD: password, SLESS_TEST_GITEA_TOKEN: token } = process.env;
  return url && user && password && token ? { url, user, password, token } : undefined;
}

export interface HookOptions {
  readonly type?: 'gitea' | 'gogs';
  readonly contentType?: 'json' | 'form';
  /** Empty: a webhook without a secret. */
  readonly secret: string;
  readonly url: string;
  readonly events?: readonly string[];
}

export interface CommitStatusRecord {
  readonly id: number;
  readonly context: string;
  readonly status: string;
  readonly description: string;
  readonly target_url: string;
}

export class GiteaApi {
  constructor(readonly env: GiteaEnv) {}

  async call<T = unknown>(method: string, apiPath: string, body?: unknown, token = this.env.token): Promise<T> {
    const res = await fetch(`${this.env.url}/api/v1${apiPath}`, {
      method,
      headers: { authorization: `token ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`Gitea ${method} ${apiPath}: HTTP ${res.status} ${text.slice(0, 300)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** A repository of the admin user (private unless told otherwise), empty. */
  async createRepo(name: string, opts: { private?: boolean } = {}): Promise<{ cloneUrl: string; fullName: string }> {
    const repo = await this.call<{ clone_url: string; full_name: string }>('POST', '/user/repos', {
      name,
      private: opts.private ?? true,
      default_branch: 'main',
      auto_init: false,
    });
    return { cloneUrl: repo.clone_url, fullName: repo.full_name };
  }

  /** A new access token of the admin user with these scopes (e.g. `read:repository`). */
  async createToken(name: string, scopes: readonly string[]): Promise<string> {
    const res = await fetch(`${this.env.url}/api/v1/users/${this.env.user}/tokens`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${this.env.user}:${this.env.password}`).toString('base64')}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name, scopes }),
    });
    const body = (await res.json()) as { sha1?: string; message?: string };
    if (!res.ok || !body.sha1) throw new Error(`Gitea token ${name}: HTTP ${res.status} ${body.message ?? ''}`);
    return body.sha1;
  }

  async createHook(fullName: string, opts: HookOptions): Promise<number> {
    const hook = await this.call<{ id: number }>('POST', `/repos/${fullName}/hooks`, {
      type: opts.type ?? 'gitea',
      active: true,
      events: opts.events ?? ['push', 'delete'],
      config: { url: opts.url, content_type: opts.contentType ?? 'json', secret: opts.secret },
    });
    return hook.id;
  }

  async deleteHook(fullName: string, id: number): Promise<void> {
    await this.call('DELETE', `/repos/${fullName}/hooks/${id}`);
  }

  /** Gitea's "Test Delivery" button: a push event for the branch head, `"ref": "<branch>"` unqualified. */
  async testHook(fullName: string, id: number, ref = 'main'): Promise<void> {
    await this.call('POST', `/repos/${fullName}/hooks/${id}/tests?ref=${encodeURIComponent(ref)}`);
  }

  async deleteBranch(fullName: string, branch: string): Promise<void> {
    await this.call('DELETE', `/repos/${fullName}/branches/${encodeURIComponent(branch)}`);
  }

  /**
   * Every status posted on the commit, newest first. Gitea sorts by created_unix (whole seconds)
   * only, so statuses posted within one second come back in no useful order: sorted here by id.
   */
  async statuses(fullName: string, sha: string): Promise<CommitStatusRecord[]> {
    const list = await this.call<CommitStatusRecord[]>('GET', `/repos/${fullName}/commits/${sha}/statuses?limit=50`);
    return [...list].sort((a, b) => b.id - a.id);
  }

  /** The latest status per context (the one with the highest id). */
  async latestStatuses(fullName: string, sha: string): Promise<Map<string, CommitStatusRecord>> {
    const out = new Map<string, CommitStatusRecord>();
    for (const s of await this.statuses(fullName, sha)) if (!out.has(s.context)) out.set(s.context, s);
    return out;
  }

  /**
   * A pull request from a fork: a new organisation forks `repo`, commits `files` on `branch` over the
   * base's main, and opens the PR against main. Answers the fork's head and the PR number.
   */
  async forkPullRequest(repo: { cloneUrl: string; fullName: string }, files: Record<string, string | null>, branch = 'from-fork'): Promise<{ head: string; number: number }> {
    const org = `forkers-${Math.random().toString(16).slice(2, 8)}`;
    await this.call('POST', '/orgs', { username: org });
    const fork = await this.call<{ clone_url: string }>('POST', `/repos/${repo.fullName}/forks`, { organization: org });
    const forkWc = await WorkingCopy.create(this.pushUrl(fork.clone_url));
    try {
      await forkWc.git('fetch', '-q', this.pushUrl(repo.cloneUrl), 'main');
      await forkWc.git('reset', '-q', '--hard', 'FETCH_HEAD');
      const head = await forkWc.commit(files, 'from a fork', branch);
      const pr = await this.call<{ number: number }>('POST', `/repos/${repo.fullName}/pulls`, { head: `${org}:${branch}`, base: 'main', title: 'fork' });
      return { head, number: pr.number };
    } finally {
      await forkWc.remove();
    }
  }

  /** A URL with the admin's credentials for `git push` (a token works as the password). */
  pushUrl(cloneUrl: string): string {
    const u = new URL(cloneUrl);
    u.username = this.env.user;
    u.password = this.env.token;
    return u.toString();
  }
}

/** A scratch working copy that commits files and pushes them to a Gitea repository. */
export class WorkingCopy {
  private constructor(
    readonly dir: string,
    private readonly remote: string,
  ) {}

  static async create(remote: string): Promise<WorkingCopy> {
    const dir = await mkdtemp(path.join(tmpdir(), 'sless-gitea-wc-'));
    const wc = new WorkingCopy(dir, remote);
    await wc.git('init', '-q', '-b', 'main');
    await wc.git('config', 'user.email', 'ada@sless.test');
    await wc.git('config', 'user.name', 'Ada');
    return wc;
  }

  async git(...args: string[]): Promise<string> {
    const { stdout } = await exec('git', args, { cwd: this.dir, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } });
    return stdout.trim();
  }

  /** Writes files (path → content; null deletes), commits and pushes; returns the new commit. */
  async commit(files: Record<string, string | null>, message = 'change', branch = 'main'): Promise<string> {
    const { mkdir, writeFile, rm: remove } = await import('node:fs/promises');
    for (const [file, content] of Object.entries(files)) {
      const full = path.join(this.dir, file);
      if (content === null) {
        await remove(full, { force: true });
      } else {
        await mkdir(path.dirname(full), { recursive: true });
        await writeFile(full, content);
      }
    }
    await this.git('add', '-A');
    await this.git('commit', '-q', '--allow-empty', '-m', message);
    await this.git('push', '-q', this.remote, `HEAD:refs/heads/${branch}`);
    return this.git('rev-parse', 'HEAD');
  }

  async remove(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
