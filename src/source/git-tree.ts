// SourceTree over a commit in a (bare) git repository, read with isomorphic-git. Reads trees only:
// blob ids come from the tree entries, so code_hash needs no blob reads. Trees are memoised by oid
// in a TreeMemo that the owner keeps across syncs, so a sync after a one-file push re-reads only
// the handful of trees on that file's path.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import git from 'isomorphic-git';
import type { SourceTree, TreeEntry, TreeEntryMode } from './source-tree.ts';

/** Trees by oid, in two generations: what the last sync touched survives the next one, the rest is dropped. */
export class TreeMemo {
  private current = new Map<string, readonly TreeEntry[]>();
  private previous = new Map<string, readonly TreeEntry[]>();

  get(oid: string): readonly TreeEntry[] | undefined {
    const hit = this.current.get(oid);
    if (hit) return hit;
    const old = this.previous.get(oid);
    if (old) this.current.set(oid, old);
    return old;
  }

  set(oid: string, entries: readonly TreeEntry[]): void {
    this.current.set(oid, entries);
  }

  /** The remembered tree `oid` as a git object's content, when re-serialising it gives that id again. */
  object(oid: string): Buffer | undefined {
    const entries = this.get(oid);
    if (!entries) return undefined;
    const content = serializeTree(entries);
    const id = createHash('sha1').update(`tree ${content.length}\0`).update(content).digest('hex');
    return id === oid ? content : undefined;
  }

  /** True before the first tree was remembered (a fresh process, or a rebuilt cache). */
  get empty(): boolean {
    return this.current.size === 0 && this.previous.size === 0;
  }

  /** Starts a new generation; call once per sync. */
  rotate(): void {
    this.previous = this.current;
    this.current = new Map();
  }
}

export interface GitTreeOptions {
  readonly gitdir: string;
  readonly commit: string;
  /** isomorphic-git's cache object, shared by every call on this repository. */
  readonly cache: object;
  readonly memo: TreeMemo;
  /** Reads a blob by oid; default isomorphic-git. */
  readonly readBlob?: (oid: string) => Promise<Buffer>;
  /** The commit's root tree, when known (a fetch just brought the commit): saves reading the commit. */
  readonly rootTree?: string;
  /** Fills the memo before the first tree is read; resolves with the root tree when it learnt it, rejects only with a TreeLimitError. */
  readonly prefill?: () => Promise<string | undefined>;
}

const MODES = new Set<string>(['100644', '100755', '120000', '040000', '160000']);

/** A tree object's entries, modes normalised as isomorphic-git normalises them. Pure. */
export function parseTreeObject(content: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let at = 0;
  while (at < content.length) {
    const space = content.indexOf(0x20, at);
    const nul = content.indexOf(0, space + 1);
    if (space < 0 || nul < 0 || nul + 21 > content.length) throw new Error('malformed tree object');
    const raw = content.toString('latin1', at, space);
    const mode = raw === '40000' ? '040000' : raw;
    entries.push({
      name: content.toString('utf8', space + 1, nul),
      mode: (MODES.has(mode) ? mode : '100644') as TreeEntryMode,
      oid: content.toString('hex', nul + 1, nul + 21),
    });
    at = nul + 21;
  }
  return entries;
}

/** A tree object's content from its entries (the inverse of parseTreeObject for trees git wrote). Pure. */
export function serializeTree(entries: readonly TreeEntry[]): Buffer {
  const heads = entries.map((e) => `${e.mode === '040000' ? '40000' : e.mode} ${e.name}\0`);
  const out = Buffer.allocUnsafe(heads.reduce((n, h) => n + Buffer.byteLength(h) + 20, 0));
  let at = 0;
  entries.forEach((e, i) => {
    at += out.write(heads[i]!, at, 'utf8');
    at += out.write(e.oid, at, 'hex');
  });
  return out;
}

export class GitTree implements SourceTree {
  readonly revision: string;
  private readonly dirOids = new Map<string, Promise<string | undefined>>();

  private prefill: (() => Promise<string | undefined>) | undefined;
  private rootTree: string | undefined;

  constructor(private readonly opts: GitTreeOptions) {
    this.revision = opts.commit;
    this.prefill = opts.prefill;
    this.rootTree = opts.rootTree;
  }

  async readDir(dirPath: string): Promise<readonly TreeEntry[] | undefined> {
    if (this.prefill) {
      this.rootTree ??= await this.prefill();
      this.prefill = undefined;
    }
    const oid = await this.dirOid(dirPath);
    return oid === undefined ? undefined : this.readTreeOid(oid);
  }

  async readBlob(_filePath: string, oid: string): Promise<Buffer> {
    if (this.opts.readBlob) return this.opts.readBlob(oid);
    const { blob } = await git.readBlob({ fs, gitdir: this.opts.gitdir, oid, cache: this.opts.cache });
    return Buffer.from(blob);
  }

  private dirOid(dirPath: string): Promise<string | undefined> {
    let p = this.dirOids.get(dirPath);
    if (!p) {
      p = this.resolveDirOid(dirPath);
      this.dirOids.set(dirPath, p);
    }
    return p;
  }

  private async resolveDirOid(dirPath: string): Promise<string | undefined> {
    if (dirPath === '') {
      if (this.rootTree) return this.rootTree;
      const { commit } = await git.readCommit({ fs, gitdir: this.opts.gitdir, oid: this.opts.commit, cache: this.opts.cache });
      return commit.tree;
    }
    const slash = dirPath.lastIndexOf('/');
    const parent = slash < 0 ? '' : dirPath.slice(0, slash);
    const name = dirPath.slice(slash + 1);
    const entries = await this.readDir(parent);
    const entry = entries?.find((e) => e.name === name);
    return entry?.mode === '040000' ? entry.oid : undefined;
  }

  private async readTreeOid(oid: string): Promise<readonly TreeEntry[]> {
    const hit = this.opts.memo.get(oid);
    if (hit) return hit;
    const { tree } = await git.readTree({ fs, gitdir: this.opts.gitdir, oid, cache: this.opts.cache });
    const entries = tree.map((e): TreeEntry => {
      // isomorphic-git normalises modes to these; anything else would be a corrupt tree.
      const mode = MODES.has(e.mode) ? (e.mode as TreeEntryMode) : '100644';
      return { name: e.path, mode, oid: e.oid };
    });
    this.opts.memo.set(oid, entries);
    return entries;
  }
}
