// The bare cache repository of one repository+branch on disk: created with a remote (isomorphic-git
// needs one before a fetch), its refs, its packs (counted and measured: MAX_PACKS, the size limit)
// and removal. Both fetch paths (git command line, isomorphic-git) write the same two refs, so
// either can fetch into the cache next time.
import fs from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import git from 'isomorphic-git';

export class GitCacheRepo {
  /** isomorphic-git's cache object, shared by every call on this repository; dropped with the cache. */
  cache: object = {};

  constructor(
    readonly gitdir: string,
    private readonly url: string,
    private readonly branch: string,
  ) {}

  get remoteRef(): string {
    return `refs/remotes/origin/${this.branch}`;
  }

  async ensure(): Promise<void> {
    if (fs.existsSync(path.join(this.gitdir, 'config'))) return;
    await mkdir(this.gitdir, { recursive: true });
    await git.init({ fs, gitdir: this.gitdir, bare: true, defaultBranch: this.branch });
    // A bare repo needs a remote before fetch, else NoRefspecError (FIELD-NOTES).
    await git.addRemote({ fs, gitdir: this.gitdir, remote: 'origin', url: this.url, force: true });
  }

  async remove(): Promise<void> {
    this.cache = {};
    await rm(this.gitdir, { recursive: true, force: true });
  }

  /** The cached head (the remote-tracking ref), or undefined. */
  cachedHead(): Promise<string | undefined> {
    return git.resolveRef({ fs, gitdir: this.gitdir, ref: this.remoteRef }).catch(() => undefined);
  }

  async hasCommit(oid: string): Promise<boolean> {
    try {
      await git.readCommit({ fs, gitdir: this.gitdir, oid, cache: this.cache });
      return true;
    } catch {
      return false;
    }
  }

  /** Points the remote-tracking ref (unless `remoteToo` is false) and refs/heads/<branch> at `oid`. */
  async writeHeads(oid: string, remoteToo = true): Promise<void> {
    if (remoteToo) await git.writeRef({ fs, gitdir: this.gitdir, ref: this.remoteRef, value: oid, force: true });
    // isomorphic-git offers the server as "have" only what the fetched ref expands to locally
    // (refs/heads/<branch>): without it every isomorphic-git fetch re-downloads the whole tree.
    await git.writeRef({ fs, gitdir: this.gitdir, ref: `refs/heads/${this.branch}`, value: oid, force: true });
  }

  async packBytes(): Promise<number> {
    const dir = path.join(this.gitdir, 'objects', 'pack');
    const files = await readdir(dir).catch(() => [] as string[]);
    const sizes = await Promise.all(
      files.map((f) =>
        stat(path.join(dir, f)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    return sizes.reduce((a, b) => a + b, 0);
  }

  async packCount(): Promise<number> {
    const files = await readdir(path.join(this.gitdir, 'objects', 'pack')).catch(() => []);
    return files.filter((f) => f.endsWith('.pack')).length;
  }
}
