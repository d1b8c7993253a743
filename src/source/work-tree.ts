// SourceTree over a folder on disk (`sless validate`, `sless hash`, `sless dev` on a plain folder).
// Modes follow git: the owner's execute bit makes 100755, a symlink is 120000 with its target as
// content and is never followed. Blob ids are computed lazily, only for files code_hash needs.
import { lstatSync, readFileSync, readlinkSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { blobOid } from './code-hash.ts';
import type { SourceTree, TreeEntry, TreeEntryMode } from './source-tree.ts';

class WorkEntry implements TreeEntry {
  private cachedOid: string | undefined;
  constructor(
    readonly name: string,
    readonly mode: TreeEntryMode,
    private readonly abs: string,
  ) {}

  get oid(): string {
    if (this.mode === '040000') return '';
    this.cachedOid ??= blobOid(readContent(this.abs, this.mode));
    return this.cachedOid;
  }
}

function readContent(abs: string, mode: TreeEntryMode): Buffer {
  return mode === '120000' ? Buffer.from(readlinkSync(abs), 'utf8') : readFileSync(abs);
}

export class WorkTree implements SourceTree {
  readonly revision = undefined;
  private readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  private abs(repoPath: string): string {
    return repoPath === '' ? this.root : path.join(this.root, ...repoPath.split('/'));
  }

  async readDir(dirPath: string): Promise<readonly TreeEntry[] | undefined> {
    const abs = this.abs(dirPath);
    let names;
    try {
      names = await readdir(abs, { withFileTypes: true });
    } catch {
      return undefined;
    }
    const out: TreeEntry[] = [];
    for (const d of names) {
      const child = path.join(abs, d.name);
      let mode: TreeEntryMode;
      if (d.isSymbolicLink()) mode = '120000';
      else if (d.isDirectory()) mode = '040000';
      else if (d.isFile()) mode = (lstatSync(child).mode & 0o100) !== 0 ? '100755' : '100644';
      else continue; // sockets, fifos, devices: git would not track them either
      out.push(new WorkEntry(d.name, mode, child));
    }
    return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async readBlob(filePath: string): Promise<Buffer> {
    const abs = this.abs(filePath);
    return readContent(abs, lstatSync(abs).isSymbolicLink() ? '120000' : '100644');
  }
}
