// The bare cache repository of one repository+branch on disk: created with a remote (isomorphic-git
// needs one before a fetch), its refs, its packs (counted and measured: MAX_PACKS, the size limit)
// and removal. Both fetch paths (git command line, isomorphic-git) write the same two refs, so
// either can fetch into the cache next time.
import fs from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import git from 'isomorphic-git';
import type { PackBase } from './pack-index.ts';

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
  async cachedHead(): Promise<string | undefined> {
    // The loose ref as both fetch paths write it; anything else (packed, symbolic) through isomorphic-git.
    const loose = await readFile(path.join(this.gitdir, this.remoteRef), 'utf8').catch(() => '');
    if (/^[0-9a-f]{40}\n?$/.test(loose)) return loose.slice(0, 40);
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

  /** One object's type and content (a thin pack's delta base). */
  async readObject(oid: string): Promise<PackBase> {
    const { type, object } = await git.readObject({ fs, gitdir: this.gitdir, oid, format: 'content', cache: this.cache });
    if (type === 'deflated' || type === 'wrapped') throw new Error(`git object ${oid} was not inflated`);
    return { type, content: Buffer.from(object as Uint8Array) };
  }

  /** Points the remote-tracking ref (unless `remoteToo` is false) and refs/heads/<branch> at `oid`. */
  async writeHeads(oid: string, remoteToo = true): Promise<void> {
    // isomorphic-git offers the server as "have" only what the fetched ref expands to locally
    // (refs/heads/<branch>): without it every isomorphic-git fetch re-downloads the whole tree.
    const refs = [...(remoteToo ? [this.remoteRef] : []), `refs/heads/${this.branch}`];
    await Promise.all(refs.map((ref) => this.writeLooseRef(ref, oid)));
  }

  /** A loose ref, written whole (a `.lock` file renamed into place), as git writes one. */
  private async writeLooseRef(ref: string, oid: string): Promise<void> {
    if (!/^[0-9a-f]{40}$/.test(oid)) throw new Error(`not an object id: ${JSON.stringify(oid)}`);
    const file = path.join(this.gitdir, ref);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(`${file}.lock`, `${oid}\n`);
    await rename(`${file}.lock`, file);
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
